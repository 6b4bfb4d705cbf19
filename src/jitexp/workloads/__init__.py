"""The built-in workloads, each named by a conf/workload/<name>.yaml: the textbook cases (jitexp.workloads.<name>),
the workload library (jitexp.workloads.library), their NumPy twins (jitexp.workloads.twins) and the model steps
(jitexp.workloads.models, with the models extra). Plain JAX functions: nothing of jitexp is imported here."""

from jitexp.workloads.textbook import (
    add_one,
    apply_n_times,
    apply_n_times_fori,
    compute_heavy,
    conditional,
    conditional_lax,
    elementwise_chain,
    matmul,
    softmax_cross_entropy,
)

__all__ = [
    "add_one",
    "apply_n_times",
    "apply_n_times_fori",
    "compute_heavy",
    "conditional",
    "conditional_lax",
    "elementwise_chain",
    "matmul",
    "softmax_cross_entropy",
]
