"""Sphinx configuration of jitexp's documentation site (issue 56).

Built by .ci/run with warnings as errors: `pip install ".[docs]" && sphinx-build -W -b html docs DIR`.
The pages are Markdown read by MyST-Parser; the theme is furo. docs/decisions.md, "Issue 56: the docs site", says why.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path


def _package_metadata() -> tuple[str, str, str]:
    """The name, version and one-line summary of the package, as installed (pip install ".[docs]"), else pyproject's."""
    try:
        meta = importlib.metadata.metadata("jitexp")
        return meta["Name"], meta["Version"], meta["Summary"]
    except importlib.metadata.PackageNotFoundError:
        import tomllib  # Python 3.11+, as Sphinx 9 is

        project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
        return project["name"], project["version"], project["description"]


project, release, summary = _package_metadata()
version = release
author = "the jitexp authors"
copyright = author

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# Only Markdown pages are sources; the PNGs the pages show are copied as images. _build is where a local build goes.
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# MyST: a heading up to level 4 gets an anchor, so `[text](results.md#the-jobs-line)` resolves (and a link to a
# heading that does not exist is a warning, hence an error under -W); ::: fences for notes and warnings.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

html_theme = "furo"
html_title = f"{project} {release}"
html_short_title = project
html_static_path: list[str] = []
# The Markdown sources are not published beside the pages (the repository holds them).
html_copy_source = False
html_show_sourcelink = False


def _no_files_outside_docs(app, doctree) -> None:
    """A link to a repository file outside docs/ (README.md, src/..., benchmarks/...) is a warning, hence an error.

    MyST turns a link to a file that is not a page into a download of that file, copied into the site: a page would
    then ship a copy of a source file, and the link would break silently when the file moves. Name such a file as
    code text (`src/jitexp/cli.py`), or link the page that explains it.
    """
    from sphinx import addnodes
    from sphinx.util import logging

    srcdir = Path(app.srcdir).resolve()
    for node in doctree.findall(addnodes.download_reference):
        target = node["reftarget"]
        if "://" in target:
            continue
        _, path = app.env.relfn2path(target, app.env.docname)
        if not Path(path).resolve().is_relative_to(srcdir):
            logging.getLogger(__name__).warning(
                "link to %s, a file outside docs/: write it as code text or link the page about it",
                target,
                location=node,
            )


def setup(app):
    app.connect("doctree-read", _no_files_outside_docs)
    return {"parallel_read_safe": True}
