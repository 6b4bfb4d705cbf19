"""experiment=fit through the installed command (issue 59, item 2), on the CPU with a small fit.memory_bytes: the
largest matmul size and the largest MLP training-step batch, each checked against the bytes its arrays need
(computed here from the shapes and dtypes); a probe whose process dies is a row and the search goes on; a bad fit key
is one line. The search's bookkeeping alone: tests/unit/test_fit_search.py."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from helpers import read, run_cli
from howto_blocks import commands

F32 = 4
MIB = 2**20


def fit(tmp_path: Path, *args: str, code: int = 0) -> tuple[str, Path]:
    out = tmp_path / "run"
    proc = run_cli(["experiment=fit", "device=cpu", "timing=quick", f"hydra.run.dir={out}", *args], cwd=tmp_path)
    assert proc.returncode == code, proc.stderr[-3000:]
    return proc.stdout, out


@pytest.mark.slow
def test_the_largest_matmul_that_fits(tmp_path):
    limit = 8 * MIB
    stdout, out = fit(tmp_path, "workload=matmul", f"fit.memory_bytes={limit}", "size=512")

    def need(s: int) -> int:  # x and y, size x size float32, and the product: the arrays a matmul holds
        return 3 * s * s * F32

    probes = read(out / "fit.csv")
    largest = int(probes[probes.fits].value.max())
    assert largest == math.isqrt(limit // (3 * F32))  # 836: the exact boundary (fit.step=1)
    assert need(largest) <= limit < need(largest + 1)
    at = probes.set_index("value")
    assert at.loc[largest, "estimate_bytes"] == need(largest)  # XLA's analysis is the arrays' bytes, no temporaries
    assert at.loc[largest + 1, "reason"] == "estimate"  # compiled, not run
    over = probes[probes.reason == "estimate"]
    # compiled on the shapes alone (worker.fit.over_before_inputs): no input built, no call, no memory measured
    assert over.call_s.isna().all() and over.peak_rss_growth_bytes.isna().all()
    assert list(probes.value[:2]) == [512, 1024]  # doubling from size, then bisection
    assert set(probes.reason) <= {"fits", "estimate", "inputs"}
    assert probes.seconds.notna().all()
    lines = stdout.splitlines()
    assert lines[0].startswith("largest") and f"size={largest}:" in lines[0]
    assert lines[1].startswith("smallest that did not") and f"size={largest + 1}:" in lines[1]
    assert lines[2].startswith("estimate vs allocator") and "not reported on cpu" in lines[2]
    assert any(line.startswith(f"matmul size={largest}") for line in lines)  # then the timed job's block
    rows = read(out / "results.csv")
    assert list(rows["size"]) == [largest] and list(rows.status) == ["ok"] and rows.median_s.notna().all()


@pytest.mark.slow
def test_the_largest_training_batch_that_fits(tmp_path):
    """The fit guide's batch search, as printed (its one run: the page's block is named, not a `run` block)."""
    [argv] = commands("fit.md", "fit-batch-command")
    assert argv[:2] == ["jitexp", "experiment=fit"] and "fit.time=false" in argv
    limit, size, features, classes = 16 * MIB, 64, 32, 10
    assert {f"size={size}", f"fit.memory_bytes={limit}", "fit.key=workload.params.batch"} <= set(argv)
    _, out = fit(tmp_path, *argv[2:])
    probes = read(out / "fit.csv")
    assert list(probes.value) == [8192, 16384, 12288, 14336]
    widths = [features, size, size, classes]  # depth 2
    params = sum(a * b + b for a, b in zip(widths, widths[1:]))
    for _, probe in probes.iterrows():
        batch = probe.value
        # params, Adam's mu and nu (float32), its int32 count, x (batch x features float32), y (batch int32)
        arrays = 3 * params * F32 + 4 + batch * features * F32 + batch * 4
        assert probe.argument_size_bytes == arrays
        assert probe.estimate_bytes >= arrays + batch * size * F32  # and at least one hidden activation
        assert probe.fits == (probe.estimate_bytes <= limit)
    fitting, failing = probes[probes.fits], probes[~probes.fits]
    assert (fitting.value.max(), failing.value.min()) == (12288, 14336)
    assert set(failing.reason) == {"estimate"}
    assert not (out / "results.csv").exists()  # fit.time=false: no timed job


CRASHY = """
import os, signal
import jax.numpy as jnp


def double(x):
    return x * 2


def setup(size, dtype, seed):
    if size > 100:
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
    return (jnp.ones((size,), dtype),)
"""


def test_a_probe_that_crashes_is_a_row_and_the_search_goes_on(tmp_path):
    (tmp_path / "crashy.py").write_text(CRASHY)
    _, out = fit(
        tmp_path, "workload=custom", "workload.fn=crashy.double", "workload.setup=crashy.setup", "size=64",
        "fit.step=16", "fit.time=false",
    )  # fmt: skip
    probes = read(out / "fit.csv")
    assert list(probes.value) == [64, 128, 96, 112]
    crashed = probes[~probes.fits]
    assert set(crashed.reason) == {"crash"} and set(crashed.error_type) == {"SIGKILL"}
    assert probes[probes.fits].value.max() == 96


def test_a_bad_fit_key_is_one_line(tmp_path):
    proc = run_cli(["experiment=fit", "workload=matmul", "fit.key=dtype"], cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jitexp: error: fit.key='dtype' is invalid"), lines
    assert lines[0].endswith("an integer key of this job: size")
