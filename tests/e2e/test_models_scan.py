"""The models_scan preset through the installed command: one of its jobs, a carried step donating its state (the
dropout step's key), measured in eager, jit and aot in a real worker process. Every model's jobs run in
tests/inprocess/test_models.py; the models guide's (docs/howto/models.md) optax train step donating its params and
optimizer state runs through the installed command in tests/e2e/test_howto_examples.py."""

from __future__ import annotations

import pytest

from helpers import read, run_cli


@pytest.mark.slow
def test_a_models_scan_job_measures_a_donating_carried_step_in_eager_jit_and_aot(tmp_path):
    pytest.importorskip("flax")  # the models extra
    out = tmp_path / "scan"
    # the command line narrows the preset's sweep to one job: rng_dropout, donating what it declares
    args = ["experiment=models_scan", "workload=rng_dropout", "mode.donate_argnums=null", "size=16"]
    proc = run_cli([*args, "timing=quick", f"hydra.sweep.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read(out / "results.csv")
    assert list(rows["mode"]) == ["eager", "jit", "aot"] and (rows["status"] == "ok").all(), rows
    compiled = rows[rows["mode"] != "eager"]
    assert compiled["matches_eager"].astype(str).eq("True").all()
    assert compiled["explanation"].notna().all() and (compiled["explanation"] != "unexplained").all()
    assert compiled["donate_argnums"].eq("[0]").all()
    assert compiled["donation"].str.endswith("carried: output 0 -> argument 0; argument(s) [0] donated").all(), (
        compiled["donation"]
    )
