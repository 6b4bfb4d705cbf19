"""fail_on_error counts error rows and rows whose time is no speedup (issue 51, item 2: a non-zero exit)."""

from __future__ import annotations

import pandas as pd

from jitexp.callbacks import failing_rows


def test_error_rows_and_results_that_are_not_the_functions_work_fail_the_run():
    rows = pd.DataFrame(
        [
            {"status": "ok", "verdict": "faster"},
            {"status": "error", "verdict": None},
            {"status": "ok", "verdict": "result differs"},
            {"status": "ok", "verdict": "no work"},
            {"status": "ok", "verdict": "slower", "verdict_vs_numpy": "not comparable"},
        ]
    )
    assert failing_rows(rows) == 4
    assert failing_rows(rows.iloc[:1]) == 0
    assert failing_rows(pd.DataFrame([{"status": "ok"}])) == 0  # a row without a verdict (one mode)
    assert failing_rows(pd.DataFrame()) == 0
