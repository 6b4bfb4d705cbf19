"""A job's timed calls are made two frames deep, as a user's script makes them, whatever the worker's own depth
(issue 61: jaxlib walks the caller's stack at every call); JITEXP_WORKER_OFF=shallow_stack puts them back on the
worker's thread."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from jitexp import compose, run


@pytest.mark.parametrize("off", ["", "shallow_stack"])
def test_the_rounds_call_the_function_two_frames_deep(tmp_path, monkeypatch, off):
    module = tmp_path / "depthfns.py"
    module.write_text(
        "import sys\n"
        "DEPTHS = []\n"
        "def plus_one(x):\n"
        "    frame, n = sys._getframe(), 0\n"
        "    while frame is not None:\n"
        "        n, frame = n + 1, frame.f_back\n"
        "    DEPTHS.append(n)\n"
        "    return x + 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("JITEXP_WORKER_OFF", off)
    sys.modules.pop("depthfns", None)
    cfg = compose(
        ["timing=quick", "isolate=none", "workload=custom", "workload.fn=depthfns.plus_one", "mode=eager"]
        + ["workload.args=[{shape:[]}]"]
    )
    assert run(cfg).row["status"] == "ok"
    depths = Counter(sys.modules["depthfns"].DEPTHS)
    usual = depths.most_common(1)[0][0]  # the rounds' calls outnumber the cold call and the probes
    if off:
        assert usual > 10
    else:
        assert usual == 3  # the function, the timed loop, the shallow thread's `_serve`
