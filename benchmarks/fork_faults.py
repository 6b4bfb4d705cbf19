"""Issue 61: does a forked child's x+1 loop pay copy-on-write faults or context switches in its steady state?
The user's loop in a fresh interpreter, and in a child forked from a Python that imported JAX (as jitexp's
forkserver does), each timing 3 x 100,000 calls after 5,000 warm-up calls by the CPU clock, with the minor faults and
the context switches of each block (getrusage).

    JAX_PLATFORMS=cpu python benchmarks/fork_faults.py fresh; JAX_PLATFORMS=cpu python benchmarks/fork_faults.py fork
"""

import os, sys, time, resource
import numpy as np
def run(tag):
    import jax, jax.numpy as jnp
    f = jax.jit(lambda x: x + 1)
    x = jnp.asarray(np.float32(0.5))
    for _ in range(5000): f(x).block_until_ready()
    out = []
    for rep in range(3):
        r0 = resource.getrusage(resource.RUSAGE_SELF); t = time.process_time_ns()
        for _ in range(100000): f(x).block_until_ready()
        dt = (time.process_time_ns() - t) / 100000; r1 = resource.getrusage(resource.RUSAGE_SELF)
        out.append(f"{dt:.0f}ns minflt={r1.ru_minflt-r0.ru_minflt} nvcsw={r1.ru_nvcsw-r0.ru_nvcsw} nivcsw={r1.ru_nivcsw-r0.ru_nivcsw}")
    print(tag, " | ".join(out), flush=True)
mode = sys.argv[1]
if mode == "fork":
    import jax  # parent preloads jax, as jitexp's forkserver does
    pid = os.fork()
    if pid == 0:
        run("fork"); os._exit(0)
    os.waitpid(pid, 0)
else:
    run("fresh")
