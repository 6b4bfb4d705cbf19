"""tests/e2e: real worker processes and the installed commands (`jitexp`, `jitexp-report`, `jitexp-compare`), one
test per feature or CLI path, not one per built-in or per error message. Everything is allowed here; keep each test
at `timing=quick` and tiny sizes, and put what can run without a process in tests/unit or tests/inprocess."""

import pytest

from helpers import slurm_answers


def tpu_present() -> bool:
    """A TPU machine, told without opening the chip (the test process must not hold it): libtpu installed and the
    accelerator's device files or the TPU environment there."""
    import glob
    import importlib.util
    import os

    if importlib.util.find_spec("libtpu") is None:
        return False
    return bool(os.environ.get("TPU_ACCELERATOR_TYPE") or glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*"))


def pytest_runtest_setup(item):
    if item.get_closest_marker("tpu") and not tpu_present():
        pytest.skip("no TPU on this machine")
    # asked when the first `slurm` test runs, not at collection: `sinfo` waits ~9 s for a controller that is not
    # there, and a run that deselects these tests (-m "not serial") should not wait for it
    if item.get_closest_marker("slurm") and not slurm_answers():
        pytest.skip("no SLURM cluster answers (scripts/slurm_cluster.sh starts one)")
