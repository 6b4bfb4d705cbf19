"""jitexp-report of a tune sweep (hand-made trials.csv beside the jobs' rows): the trials table with each objective's
interval, tied and failed-why, the confirmation's line, and the figures by trial, by searched key and the front."""

from __future__ import annotations

import pandas as pd

from helpers import error, ok, write_sweep
from jitexp.report.run import build
from jitexp.store.csvio import write_csv

VERDICT = "best: k=4: 2.5x faster than the baseline (95% CI 2.1x-3x)"


def tune_sweep(root):
    rows = [
        ok("f", "jit", 8, 3e-4, 0.2, param_k=2),
        ok("f", "jit", 8, 1e-4, 0.3, param_k=4),
        error("f", "jit", 8, param_k=8),
        ok("f", "jit", 8, 1.1e-4, 0.1, param_k=5),
    ]
    write_sweep(root, rows)
    trials = pd.DataFrame(
        [
            # trial, job, state, k, steady (value, low, high), compile (value), best, tied, pareto, why
            (1, 0, "complete", 2, 3e-4, 2.9e-4, 3.1e-4, 0.2, False, False, False, ""),
            (2, 1, "complete", 4, 1e-4, 0.9e-4, 1.1e-4, 0.3, True, True, True, ""),
            (3, 2, "failed", 8, None, None, None, None, False, False, False, "compile error: k=8 is refused"),
            (4, 3, "complete", 5, 1.1e-4, 1.05e-4, 1.2e-4, 0.1, False, True, True, ""),
        ],
        columns=["trial", "job_num", "state", "param_workload.params.k", "value_0", "ci_low_0", "ci_high_0",
                 "value_1", "best", "tied", "pareto", "failed_why"],
    )  # fmt: skip
    trials["objective_0"], trials["objective_1"] = "steady", "compile"
    trials["ci_low_1"], trials["ci_high_1"] = trials["value_1"], trials["value_1"]
    write_csv(trials, root / "trials.csv")
    (root / "tune.txt").write_text(VERDICT + "\n")
    return root


def test_the_report_of_a_tune_sweep_shows_its_trials_the_confirmation_and_the_figures(tmp_path, capsys):
    sweep = tune_sweep(tmp_path / "sweep")
    assert build.main([str(sweep)]) == 0
    printed = capsys.readouterr().out
    table = printed[printed.index("trial  k") :].splitlines()
    assert table[2].split()[:2] == ["1", "2"]
    assert "100 us (95% CI 90 us-110 us)" in table[3] and table[3].rstrip().endswith("best, Pareto")
    assert "tied, Pareto" in table[5] and "compile error: k=8 is refused" in table[4]
    assert f"confirmation: {VERDICT}" in printed
    out = sweep / "report"
    summary = (out / "summary.md").read_text()
    assert "## Tuning trials" in summary and f"Confirmation: {VERDICT}" in summary
    assert list(pd.read_csv(out / "trials.csv")["trial"]) == [1, 2, 3, 4]
    assert sorted(p.name for p in out.glob("tune_*.png")) == ["tune_by-trial.png", "tune_k.png", "tune_pareto.png"]


def test_a_report_of_no_tune_sweep_has_no_trials(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", [ok("f", "jit", 8, 1e-4, 0.2)])
    out = build.make_report(sweep, plots=False)
    assert not (out / "trials.csv").exists() and "Tuning" not in (out / "summary.md").read_text()
