"""The reports: tables, plots, the report page, the terminal and markdown summaries, and jitexp-compare."""
