"""experiment=fit's probe before any input is built (worker.fit.over_before_inputs), in this process: XLA's estimate
on the arguments' shapes alone over the limit, or the compiler's own out-of-memory error, decides without building."""

from __future__ import annotations

import jax

from helpers import job_config
from jitexp.config.schema import FitConfig
from jitexp.records import ProcessResult
from jitexp.worker import fit
from jitexp.worker.inputs import Functions


def probe(fn, memory_bytes: int) -> ProcessResult:
    cfg = job_config([{"shape": [8, 8]}], fit=FitConfig(key="size", memory_bytes=memory_bytes), mode={"eager": False})
    result = ProcessResult(0)
    result.decided = fit.over_before_inputs(cfg, Functions(fn, None, None, jax.jit), jax.devices()[0], result)
    return result


def matmul(x):
    return x @ x


def out_of_room(x):
    raise RuntimeError("RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm")


def not_memory(x):
    raise TypeError("a bug, not memory")


def test_over_the_limit_on_shapes_alone():
    result = probe(matmul, 100)
    [record] = result.modes["jit"].calls
    assert result.decided and record["over_limit"]
    assert record["estimate_bytes"] == 2 * 8 * 8 * 4 == record["argument_size_bytes"] + record["output_size_bytes"]
    assert not probe(matmul, 10**6).decided  # within it: the inputs are built and the program run


def test_the_compilers_own_out_of_memory_decides_and_another_error_does_not():
    result = probe(out_of_room, 100)
    assert result.decided and result.modes["jit"].error.error_phase == "compile"
    assert not probe(not_memory, 100).decided and not probe(not_memory, 100).modes
