"""`jitexp --help`'s page, rendered in this process: every group option, key and example described in a sentence,
a user's own workload listed, and `--version`'s text (the installed command prints them: tests/e2e/test_help_page.py)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from jitexp import helptext
from jitexp.config import register_configs
from jitexp.helptext import describe, help_page, version_text


def options_of(group: str) -> list[str]:
    folder = resources.files("jitexp.conf").joinpath(group)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


@pytest.fixture(scope="module", autouse=True)
def quiet_resolver_after():
    """The listing resolver back to the one line after this module: registered, it lists the groups at every compose
    of the later tests (OmegaConf resolves it while merging hydra.help)."""
    yield
    helptext.register_resolvers(listing=False)


@pytest.fixture(scope="module")
def page() -> str:
    register_configs()
    helptext.register_resolvers()
    return help_page(["--help"])


def test_a_command_that_does_not_ask_for_help_composes_without_listing_the_groups(monkeypatch):
    from omegaconf import OmegaConf

    from jitexp.engine.compose import compose_raw, hydra_session

    listed = []
    monkeypatch.setattr(helptext, "groups_text", lambda: listed.append(1) or "listed")
    register_configs()
    for listing, expected in ((False, helptext.GROUPS_ELSEWHERE), (True, "listed")):
        helptext.register_resolvers(listing=listing)
        listed.clear()
        with hydra_session(None) as hydra:
            cfg = compose_raw(hydra, ["size=8"])
        assert bool(listed) is listing  # --help's listing runs at a compose only when asked for
        template = OmegaConf.to_container(cfg.hydra.help, resolve=True)["template"]
        assert expected in template  # `--cfg hydra --resolve` still resolves the template


def test_help_describes_jitexp_every_group_option_keys_examples_and_the_report(page):
    assert "powered by Hydra" not in page
    assert page.startswith("jitexp: what does jax.jit do to your function")
    for group in ("workload", "mode", "device", "timing", "experiment"):
        assert f"\n{group}:\n" in page
        for option in options_of(group):
            line = next(ln for ln in page.splitlines() if ln.strip().split(" ")[0].rstrip("*") == option)
            assert len(line.split()) > 2, f"{group}/{option} has no description: {line!r}"
    assert "dot -> sin -> log(|.|+1e-6) -> sum" in page  # compute_heavy's description: key
    for key in (
        "size",
        "dtype",
        "seed",
        "calls",
        "check",
        "isolate",
        "compilation_cache_dir",
        "cpu_async_dispatch",
        "mode.static_argnums",
        "workload.params",
        "timing.",
        "device.index",
    ):
        assert f"\n{key}" in page
    examples = page.split("== Examples ==")[1].split("==")[0]
    assert sum(ln.startswith("jitexp ") for ln in examples.splitlines()) >= 5
    assert "jitexp-report" in page


def test_help_lists_a_users_own_workload_and_current_values(tmp_path: Path):
    conf = tmp_path / "myconf" / "workload"
    conf.mkdir(parents=True)
    (conf / "double.yaml").write_text(
        "# Two matmuls in a row, my own.\nname: double\nfn: jitexp.workloads.matmul\n"
        "args: [{shape: [2, 2]}, {shape: [2, 2]}]\n"
    )
    register_configs()
    helptext.register_resolvers()
    text = help_page(["--config-dir", str(tmp_path / "myconf"), "--help", "size=77", "workload=double"])
    assert "double*" in text and "Two matmuls in a row, my own." in text
    assert "(now: 77)" in text


def test_describe_prefers_the_description_key_then_the_first_comment():
    assert describe("# @package _global_\n# A preset.\n# more\nsize: 3\n") == "A preset."
    assert describe('# comment\nname: x\ndescription: "the key: wins"\n') == "the key: wins"
    assert describe("name: x\n") == ""


def test_version_is_jitexps_with_jax_and_jaxlib():
    from importlib import metadata

    assert version_text() == (
        f"jitexp {metadata.version('jitexp')} (jax {metadata.version('jax')}, jaxlib {metadata.version('jaxlib')})"
    )


SENTENCE_END = re.compile(r"(?<!\.\.)[.?!][)\]\"'`]*$")  # an ellipsis is not an end


def described_options(page: str) -> dict[str, str]:
    """Every option of the help's group, key and flag sections: name -> description (wrapped lines joined).

    A section runs from its `== ... ==` title to the next blank line; a group option is
    `  name[*]  text`, its continuation lines indented deeper; a key or flag is `name  text`.
    """
    options: dict[str, str] = {}
    section, group, last = "", "", ""
    for line in page.splitlines():
        if line.startswith("== "):
            section = line if ("Config groups" in line or "Keys" in line or "Flags" in line) else ""
            continue
        if not line.strip():
            section = ""
        elif section.startswith("== Config groups") and not line.startswith(" "):
            group = line.rstrip(":")
        elif section.startswith("== Config groups") and line.startswith("   "):
            options[last] += " " + line.strip()
        elif section:
            name, text = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            last = f"{group}={name.rstrip('*')}" if section.startswith("== Config groups") else name
            options[last] = text
    return options


def test_every_options_description_in_help_ends_a_sentence(page):
    options = described_options(page)
    expected = {f"{g}={o}" for g in ("workload", "mode", "device", "timing", "experiment") for o in options_of(g)}
    assert expected <= set(options), expected - set(options)
    assert {"size", "compilation_cache_dir", "device.index", "-m, --multirun", "--hydra-help"} <= set(options)
    unfinished = {name: text for name, text in options.items() if not SENTENCE_END.search(text)}
    assert not unfinished, unfinished
    assert options["experiment=compilation_cache"].endswith("reads it back (cache_* columns).")


def test_a_description_is_the_first_sentence_even_over_several_comment_lines():
    text = "# @package _global_\n# What it saves: a cold call writes the\n# program, a warm one reads it (e.g. a hit). More.\n"
    assert describe(text) == "What it saves: a cold call writes the program, a warm one reads it (e.g. a hit)."
    assert describe("# No full stop here\n#\n# A second paragraph.\n") == "No full stop here"
