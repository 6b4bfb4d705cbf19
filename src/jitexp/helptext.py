"""What the command says about itself: `--version`, and the groups listing of `--help`.

The help page is Hydra's `hydra/help` template (conf/hydra/help/jitexp.yaml); its group listing
comes from the `jitexp_groups` resolver below, which reads each option file's `description:`
key or leading `#` comment, so a user's own `--config-dir` options are described too.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import Any

GROUP_ORDER = ("workload", "mode", "device", "timing", "experiment")


def version_text() -> str:
    """`jitexp 0.1.0 (jax 0.10.2, jaxlib 0.10.2)`, read from the installed metadata (no JAX import)."""
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return f"jitexp {version('jitexp')} (jax {version('jax')}, jaxlib {version('jaxlib')})"


GROUPS_ELSEWHERE = "(the config groups and their options: jitexp --help)"


def register_resolvers(*, listing: bool = True) -> None:
    """Make `${jitexp_groups:}` available to the help template: the groups listed (`listing`, for --help), or one
    line saying where they are. OmegaConf resolves it at each Hydra compose (merging into hydra.help), and listing
    reads every option file: 10-12 ms a compose on the 2-core VM, paid twice by every command otherwise."""
    from omegaconf import OmegaConf

    OmegaConf.register_new_resolver(
        "jitexp_groups", groups_text if listing else (lambda: GROUPS_ELSEWHERE), replace=True
    )


def help_page(argv: Sequence[str]) -> str:
    """`jitexp --help [OVERRIDES]`: the hydra/help template of the composed config, rendered.

    Hydra's own --help computes every placeholder eagerly, copying its config repository for
    each group option (about 0.4 s here); this renders the same template, computing only the
    placeholders it uses.
    """
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import get_args_parser
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    from jitexp.engine.compose import compose_raw, hydra_session, parse_args

    args = parse_args(argv)
    overrides = args.overrides if args is not None else []
    with hydra_session(args.config_dir if args is not None else None) as hydra:
        cfg = compose_raw(hydra, overrides)
        HydraConfig.instance().set_config(cfg)
        template = string.Template(cfg.hydra.help.template)
        fields = {
            "FLAGS_HELP": lambda: Hydra.format_args_help(get_args_parser()),
            "APP_CONFIG_GROUPS": lambda: groups_text().replace("$$", "$"),
            "HYDRA_CONFIG_GROUPS": lambda: hydra.format_config_groups(lambda g: g.startswith("hydra")),
            "CONFIG": lambda: OmegaConf.to_yaml({k: v for k, v in cfg.items() if k != "hydra"}),
        }
        used = {m.group("named") or m.group("braced") for m in template.pattern.finditer(template.template)}
        return template.safe_substitute({k: make() for k, make in fields.items() if k in used})


def groups_text() -> str:
    """Every config group with its options, one line each: `  name*  description` (* = chosen).

    Runs inside Hydra's --help, where GlobalHydra holds the config loader with the full
    search path. `$` is doubled: the result goes through Hydra's string.Template.
    """
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    repository = GlobalHydra.instance().config_loader().repository  # type: ignore[attr-defined]  # the loader's own copies it per call
    chosen: dict[str, Any] = {}
    if HydraConfig.initialized():
        chosen = dict(HydraConfig.get().runtime.choices)
    from hydra.core.object_type import ObjectType

    groups = [g for g in repository.get_group_options("", ObjectType.GROUP) if g != "hydra"]
    groups.sort(key=lambda g: (GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER), g))
    lines = []
    for group in groups:
        options = repository.get_group_options(group, ObjectType.CONFIG)
        current = str(chosen.get(group, ""))
        picked = {s.strip() for s in current.strip("[]").split(",")}
        lines.append(f"{group}:")
        width = max((len(o) for o in options), default=0) + 1
        for option in options:
            mark = "*" if option in picked else " "
            text = describe(_option_text(repository, f"{group}/{option}"))
            lines.extend(_wrapped(f"  {(option + mark).ljust(width)}  ", text))
    return "\n".join(lines).replace("$", "$$")


HELP_WIDTH = 120


def _wrapped(head: str, text: str) -> list[str]:
    """`head` then `text`, wrapped at HELP_WIDTH with continuation lines indented under the text."""
    import textwrap

    width = max(HELP_WIDTH - len(head), 40)
    parts = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]
    return [(head if i == 0 else " " * len(head)) + part for i, part in enumerate(parts)]


def describe(text: str) -> str:
    """An option file's description: its `description:` key, else the first sentence of its leading `#` comment.

    The sentence may run over several comment lines; it ends at `.`, `?` or `!` before a space
    (not after `e.g`, `i.e`, `vs`, `cf`), else with the comment's first paragraph (up to a bare `#`
    or a non-comment line).
    """
    match = re.search(r"^description:\s*(.+?)\s*$", text, re.MULTILINE)
    if match:
        import yaml

        value = yaml.safe_load(match.group(1))
        if isinstance(value, str) and value.strip():
            return value.strip()
    paragraph = " ".join(_first_comment_paragraph(text))
    sentence = re.match(_SENTENCE, paragraph)
    return sentence.group(1) if sentence else paragraph


_SENTENCE = r"(.+?(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bcf)[.?!][)\]\"'`]*)(?=\s|$)"


def _first_comment_paragraph(text: str) -> list[str]:
    """The lines of the first `#` comment paragraph at the top of a file (`# @package` lines skipped)."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        comment = line.lstrip("#").strip()
        if not line.startswith("#") or (not comment and lines):
            if line or lines:
                break
            continue
        if comment and not comment.startswith("@package"):
            lines.append(comment)
    return lines


def _option_text(repository: Any, path: str) -> str:
    """The raw text of an option file from the first source that has it (comments kept)."""
    import os
    from importlib import resources

    for source in repository.get_sources():
        if not source.is_config(path):
            continue
        name = f"{path}.yaml"
        try:
            if source.scheme() == "file":
                with open(os.path.join(source.path, name), encoding="utf-8") as f:
                    return f.read()
            if source.scheme() == "pkg":
                return resources.files(source.path).joinpath(name).read_text(encoding="utf-8")
        except OSError:
            return ""
        return ""  # structured configs (ConfigStore) have no text
    return ""
