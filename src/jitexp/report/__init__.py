"""The reports, one room a product: what a user reads about one run, about two, about many.

- ``run/``: one run's report (jitexp-report): tables, detail tables, caveats, views, then the terminal text,
  summary.md and index.html; ``run.build`` loads the results and is the only writer.
- ``plots/``: one run's figures, one module a family, ``plots.style`` the only place a figure is saved.
- ``compare/``: two runs (jitexp-compare): cases matched, NEW/BASE with CIs, verdicts, the gate, its text and chart.
- ``history/``: many runs (jitexp-history): one timeline ordered by commit, the steps in it, its page.
- ``shared/``: what a case is in a results frame, the growth points, a machine: read by more than one room.

Imports point down: run, compare and history import plots and shared, never each other; plots import only shared;
shared imports no other room (pyproject.toml's import-linter contracts; docs/architecture.md draws it).
"""
