"""profile=true (issue 25): one more worker profiles each compiled mode's steady calls; the job keeps the traces,
profile.csv and three columns per compiled row, and the report shows the top events and links the traces."""

from __future__ import annotations

import gzip
import json

import pandas as pd

from helpers import run_cli


def test_profile_true_keeps_a_trace_per_compiled_mode_profile_csv_and_the_reports_section(tmp_path):
    argv = ["experiment=seed_speedup", "profile=true", "mode=[eager,jit,aot]", "size=64", "timing=quick"]
    proc = run_cli([*argv, "hydra.run.dir=job"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    job = tmp_path / "job"
    for mode in ("jit", "aot"):
        (trace,) = (job / "profile" / mode).glob("*.trace.json.gz")
        events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
        assert any(e.get("ph") == "X" for e in events)
        assert list((job / "profile" / mode).glob("*.xplane.pb"))  # for TensorBoard's XProf
    assert not (job / "profile" / "eager").exists()  # eager compiles nothing to profile
    rows = pd.read_csv(job / "results.csv").set_index("mode")
    compiled = rows.loc[["jit", "aot"]]
    assert (compiled["profile_calls"] >= 10).all() and (compiled["profile_execute_s"] > 0).all()
    assert (compiled["profile_step_s"] > 0).all() and pd.isna(rows.loc["eager", "profile_calls"])
    profile = pd.read_csv(job / "profile.csv")
    assert set(profile["mode"]) == {"jit", "aot"} and "execute" in set(profile["thread"])
    assert (profile["count"] > 0).all() and (profile["per_call_s"] <= profile["total_s"]).all()

    report = run_cli(["job"], cwd=tmp_path, name="jitexp-report")
    assert report.returncode == 0, report.stderr
    summary = (job / "report" / "summary.md").read_text()
    assert "## Profile (profile=true)" in summary and "ui.perfetto.dev" in summary
    for link in ("../profile/jit/", "../profile/aot/"):
        start = summary.index(link)
        assert (job / "report" / summary[start : summary.index(")", start)]).resolve().is_file()
    assert "<h2>Profile</h2>" in (job / "report" / "index.html").read_text()
