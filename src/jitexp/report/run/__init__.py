"""One run's report (jitexp-report, jitexp.make_report): the results frame turned into tables (speedup, A/B,
scaling, errors; the detail tables: why, memory, cache, sequence), caveats and views, rendered as terminal text,
summary.md and index.html, with the figures from ``report.plots``.

Pure until ``build``: every module but build takes frames and returns frames or strings; build loads the results
(store), calls the rest and writes the report folder.
"""
