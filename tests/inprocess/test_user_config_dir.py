"""A user's own --config-dir adds a workload next to the built-in ones; run in this process (isolate=none).

The installed command reads --config-dir too: tests/e2e/test_first_try.py runs its workloads from one."""

from __future__ import annotations

from jitexp import compose, run


def test_user_config_dir_adds_a_workload(tmp_path):
    conf = tmp_path / "myconf" / "workload"
    conf.mkdir(parents=True)
    (conf / "double.yaml").write_text(
        "name: double\nfn: jitexp.workloads.matmul\nargs:\n"
        "  - {shape: ['${size}', 3]}\n  - {shape: [3, 2], init: ones}\nstatic_argnums: []\nparams: {}\n"
    )
    cfg = compose(["workload=double", "mode=jit", "size=4", "timing=quick", "isolate=none"], str(tmp_path / "myconf"))
    row = run(cfg).row
    assert row["workload"] == "double" and row["status"] == "ok"
    assert row["flops"] == 2 * 4 * 3 * 2
