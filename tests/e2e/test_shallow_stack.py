"""In a worker process a job's timed calls are made two frames deep, as a user's script makes them (issue 61:
jaxlib walks the caller's stack at every call). JITEXP_WORKER_OFF=shallow_stack, which puts them back ~15 frames
deep, is not tested here: workers inherit the environment of the forkserver the first job started (the benchmark's
arm deep_stack runs each job as its own `python -m jitexp`)."""

from __future__ import annotations

import sys
from collections import Counter

from jitexp import compose, run


def test_the_rounds_call_the_function_two_frames_deep(tmp_path, monkeypatch):
    record = tmp_path / "depths.txt"
    (tmp_path / "depthfns.py").write_text(
        "import sys\n"
        "def plus_one(x):\n"
        "    frame, n = sys._getframe(), 0\n"
        "    while frame is not None:\n"
        "        n, frame = n + 1, frame.f_back\n"
        f"    with open({str(record)!r}, 'a') as f:\n"
        "        f.write(f'{n}\\n')\n"
        "    return x + 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("depthfns", None)
    cfg = compose(
        ["timing=quick", "workload=custom", "workload.fn=depthfns.plus_one", "mode=eager", "workload.args=[{shape:[]}]"]
    )
    assert run(cfg).row["status"] == "ok"
    usual = Counter(record.read_text().split()).most_common(1)[0][0]  # the rounds' calls outnumber the others
    assert int(usual) == 3  # the function, the timed loop, the shallow thread's `_serve`
