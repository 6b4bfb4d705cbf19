"""What the command says about itself: `--version`, and the groups listing of `--help`.

The help page is Hydra's `hydra/help` template (conf/hydra/help/jitexp.yaml); its group listing
comes from the `jitexp_groups` resolver below, which reads each option file's `description:`
key or leading `#` comment, so a user's own `--config-dir` options are described too.
"""

from __future__ import annotations

import re
from importlib import metadata
from typing import Any

GROUP_ORDER = ("workload", "mode", "device", "timing", "experiment")


def version_text() -> str:
    """`jitexp 0.1.0 (jax 0.10.2, jaxlib 0.10.2)`, read from the installed metadata (no JAX import)."""
    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return f"jitexp {version('jitexp')} (jax {version('jax')}, jaxlib {version('jaxlib')})"


def register_resolvers() -> None:
    """Make `${jitexp_groups:}` available to the help template."""
    from omegaconf import OmegaConf

    OmegaConf.register_new_resolver("jitexp_groups", groups_text, replace=True)


def groups_text() -> str:
    """Every config group with its options, one line each: `  name*  description` (* = chosen).

    Runs inside Hydra's --help, where GlobalHydra holds the config loader with the full
    search path. `$` is doubled: the result goes through Hydra's string.Template.
    """
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    loader = GlobalHydra.instance().config_loader()
    chosen: dict[str, Any] = {}
    if HydraConfig.initialized():
        chosen = dict(HydraConfig.get().runtime.choices)
    groups = [g for g in loader.list_groups("") if g != "hydra"]
    groups.sort(key=lambda g: (GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER), g))
    lines = []
    for group in groups:
        options = loader.get_group_options(group)
        current = str(chosen.get(group, ""))
        picked = {s.strip() for s in current.strip("[]").split(",")}
        lines.append(f"{group}:")
        width = max((len(o) for o in options), default=0) + 1
        for option in options:
            mark = "*" if option in picked else " "
            text = describe(_option_text(loader, f"{group}/{option}"))
            lines.append(f"  {(option + mark).ljust(width)}  {text}".rstrip())
    return "\n".join(lines).replace("$", "$$")


def describe(text: str) -> str:
    """An option file's one-line description: its `description:` key, else its first `#` comment."""
    match = re.search(r"^description:\s*(.+?)\s*$", text, re.MULTILINE)
    if match:
        import yaml

        value = yaml.safe_load(match.group(1))
        if isinstance(value, str) and value.strip():
            return value.strip()
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("#"):
            if line:
                break
            continue
        comment = line.lstrip("#").strip()
        if comment and not comment.startswith("@package"):
            return comment
    return ""


def _option_text(loader: Any, path: str) -> str:
    """The raw text of an option file from the first source that has it (comments kept)."""
    from importlib import resources
    import os

    for source in loader.get_sources():
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
