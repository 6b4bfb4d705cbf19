"""Parts of a worker's surroundings that can be switched off, for benchmarks/user_pairs.py's elimination arms (issue 61).

`JITEXP_WORKER_OFF=name,name` in the environment of the jitexp process (its forkserver and workers inherit it) turns
the named parts off; unset, everything runs as always. Not a config key: a measuring aid, not a job's setting.
"""

from __future__ import annotations

import os

from jitexp.errors import ConfigError

ENV = "JITEXP_WORKER_OFF"
FACTORS = {
    "preload": "the forkserver's preload (JAX, the worker): each worker imports them itself after the fork",
    "freeze": "gc.freeze() over the forkserver's preloaded imports",
    "host_probe": "the host probe's reference kernels before the rounds",
    "warm_backend": "the warm-up compile before the cold calls",
    "extras": "process 0's extras before the rounds (op counts, op dispatch probe, cost analysis, check)",
    "inputs_folder": "large inputs kept in and read back from the job's .inputs/ folder",
    "gc_disable": "the garbage collector off (after a collect) during the rounds",
    "early_collect": "that collect before the warm-up (off: right before the first round, as before issue 61)",
    "settle": "untimed calls before a sample that follows the same mode's (off: none, as before issue 61)",
    "short_settle": "the one untimed call before a short sample of fewer than 10 calls (off: none, as before 2026-12-07)",
    "ticks": "the CPU counters (/proc/stat, schedstat) read around each round",
    "shallow_stack": "the rounds' calls on a thread of their own, two frames deep (off: on the worker's main thread, "
    "~15 frames deep, as before 2026-12-07)",
}


def switched_off() -> frozenset[str]:
    """The names in JITEXP_WORKER_OFF; a name that is no factor is a ConfigError naming the valid ones."""
    raw = os.environ.get(ENV, "")
    names = frozenset(n.strip() for n in raw.split(",") if n.strip())
    unknown = sorted(names - FACTORS.keys())
    if unknown:
        raise ConfigError(ENV, unknown[0], f"one of {', '.join(FACTORS)} (comma-separated)")
    return names


def off(name: str) -> bool:
    """Whether factor `name` is switched off in this process."""
    return name in switched_off()
