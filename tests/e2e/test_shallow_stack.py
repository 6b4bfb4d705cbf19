"""In a worker process a job's timed calls are made two frames deep, as a user's script makes them (issue 61:
jaxlib walks the caller's stack at every call). JITEXP_WORKER_OFF=shallow_stack, which puts them back ~15 frames
deep, is not tested here: workers inherit the environment of the forkserver the first job started (the benchmark's
arm deep_stack runs each job as its own `python -m jitexp`)."""

from __future__ import annotations

from helpers import depth_job


def test_the_rounds_call_the_function_two_frames_deep(tmp_path):
    assert depth_job(tmp_path, "process") == 3  # the function, the timed loop, the shallow thread's `_serve`
