"""Process 0's extras: finite output, op counts, XLA's cost analysis, outputs checked against eager's and NumPy's."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jitexp.config import ExperimentConfig
from jitexp.errors import PhaseError, first_line, phase, qualified_name
from jitexp.records import ModeResult
from jitexp.worker import clock, distributed, workload
from jitexp.worker.attribution import jaxpr_counts, op_dispatch_s
from jitexp.worker.channel import enter_phase
from jitexp.worker.modes import ColdCall, cost_of

# Normwise relative error allowed between a compiled result and eager's, per dtype:
# XLA may fuse and reorder reductions, so bitwise equality is not expected.
TOLERANCE = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-4, "float64": 1e-10}


def extras(cfg: ExperimentConfig, w: workload.Workload, cold: dict[str, ColdCall], out: dict[str, ModeResult]) -> None:
    """Process 0's extras per mode: finite output, XLA's cost analysis, outputs checked against eager's and NumPy's."""
    reference = None
    jax_modes = [m for m in cold if m != "numpy"]
    shared = {}
    if jax_modes:
        try:
            with clock.phase("attribution"):
                shared = jaxpr_counts(w.fn, w.args, w.static_argnums, w.kwargs, w.static_argnames)
        except Exception as exc:  # a function plain tracing (and equinox's) cannot follow: no counts, a reason
            shared = {
                "attribution_error": f"could not trace the function to count its ops "
                f"({qualified_name(type(exc))}: {first_line(exc)})"
            }
        with clock.phase("op_dispatch_probe"):
            shared["op_dispatch_s"] = op_dispatch_s(cfg.dtype)
    for mode, c in cold.items():
        extras = out[mode].extras
        extras.finite_output = finite(c.output)
        extras.output_sharding = output_sharding(c.output)
        if mode != "numpy":
            extras.update(shared)
        try:
            if mode in ("jit", "aot"):
                enter_phase("compile")
                with phase("compile"), clock.phase("cost_analysis"):
                    extras.update(cost_of(w))
            if not cfg.check:
                continue
            enter_phase("check")
            with phase("check"), clock.phase("check"):
                if mode != "eager":
                    if reference is None:  # eager's first call on fresh inputs, as every mode's first call was
                        reference = (
                            cold["eager"].output
                            if "eager" in cold
                            else jax.block_until_ready(w.fn(*w.args, **w.kwargs))
                        )
                    extras.update(output_error(c.output, reference, cfg.dtype))
                if mode != "numpy" and "numpy" in cold:
                    extras.update(output_error(c.output, cold["numpy"].output, cfg.dtype, against="numpy"))
        except PhaseError as exc:
            out[mode] = distributed.dropped(cfg, exc)


DEVICE_CHECK_SIZE = 2**20  # float arrays of at least this many elements are compared on their device


def _on_device(a: Any, b: Any) -> bool:
    return (
        isinstance(a, jax.Array)
        and isinstance(b, jax.Array)
        and a.shape == b.shape
        and a.size >= DEVICE_CHECK_SIZE
        and jax.numpy.issubdtype(a.dtype, jax.numpy.floating)
        and jax.numpy.issubdtype(b.dtype, jax.numpy.floating)
        and max(a.dtype.itemsize, b.dtype.itemsize) <= 4
    )


@jax.jit
def _device_error(a: Any, b: Any) -> Any:
    """(NaN at other places, max |a - b|, max |b|) in float32, NaN places left out: output_error's figures."""
    a, b = a.astype(jax.numpy.float32), b.astype(jax.numpy.float32)
    nan_a, nan_b = jax.numpy.isnan(a), jax.numpy.isnan(b)
    diff = jax.numpy.max(jax.numpy.abs(jax.numpy.where(nan_a, 0.0, a - b)), initial=0.0)
    return (
        jax.numpy.any(nan_a != nan_b),
        diff,
        jax.numpy.max(jax.numpy.abs(jax.numpy.where(nan_b, 0.0, b)), initial=0.0),
    )


def output_sharding(out: Any) -> str | None:
    """The PartitionSpec jit gave the first output array (what workload.out_shardings asked, or XLA chose)."""
    leaf = next((x for x in jax.tree.leaves(out) if isinstance(x, jax.Array)), None)
    spec = getattr(getattr(leaf, "sharding", None), "spec", None)
    return None if spec is None else str(spec)


def finite(out: Any) -> bool:
    """No NaN or inf anywhere in the output (non-float leaves count as finite)."""
    for leaf in jax.tree.leaves(out):
        a = np.asarray(_plain(leaf))
        if np.issubdtype(a.dtype, np.inexact) and not np.all(np.isfinite(a)):
            return False
    return True


def output_error(result: Any, reference: Any, dtype: str, against: str = "eager") -> dict:
    """Max abs and normwise relative error of result vs reference, and whether they match for dtype.

    NaN in the same places counts as equal; NaN on one side only is a mismatch (errors inf). Trees are
    matched by their leaves' paths (static fields, such as a TrainState's apply_fn, are not compared).
    The fields are named after the reference: max_abs_err_vs_<against>, matches_<against>, and
    check_vs_<against>: in words, why they do not match, or why they could not be compared (matches empty).
    """
    abs_key, rel_key, match_key = f"max_abs_err_vs_{against}", f"max_rel_err_vs_{against}", f"matches_{against}"
    note_key = f"check_vs_{against}"
    got, want = jax.tree_util.tree_flatten_with_path(result)[0], jax.tree_util.tree_flatten_with_path(reference)[0]
    got_paths, want_paths = [jax.tree_util.keystr(p) for p, _ in got], [jax.tree_util.keystr(p) for p, _ in want]
    if got_paths != want_paths:
        return {
            note_key: f"cannot compare: tree structures differ ({_tree_difference(got_paths, want_paths, against)})"
        }
    max_abs, scale = 0.0, 0.0
    for path, (_, a), (_, b) in zip(got_paths, got, want):
        if _on_device(a, b):  # a large float array compared where it is, not copied to the host in float64
            differs, leaf_abs, leaf_scale = (float(v) for v in _device_error(a, b))
            if differs:
                return {
                    abs_key: float("inf"),
                    rel_key: float("inf"),
                    match_key: False,
                    note_key: f"differs: NaN at other places in output{path}",
                }
            max_abs, scale = max(max_abs, leaf_abs), max(scale, leaf_scale)
            continue
        try:
            a, b = _as_numbers(a), _as_numbers(b)
        except (TypeError, ValueError) as exc:
            return {note_key: f"cannot compare: output{path} is not numbers ({type(exc).__name__}: {exc})"}
        if a.shape != b.shape:
            return {note_key: f"cannot compare: output{path} is {list(a.shape)}, {against}'s {list(b.shape)}"}
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if np.any(nan_a != nan_b):
            return {
                abs_key: float("inf"),
                rel_key: float("inf"),
                match_key: False,
                note_key: f"differs: NaN at other places in output{path}",
            }
        max_abs = max(max_abs, float(np.max(np.abs(np.where(nan_a, 0, a - b)), initial=0.0)))
        scale = max(scale, float(np.max(np.abs(np.where(nan_b, 0, b)), initial=0.0)))
    rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    tolerance = TOLERANCE.get(dtype, 1e-4)
    row: dict[str, Any] = {abs_key: max_abs, rel_key: rel, match_key: bool(rel <= tolerance)}
    if rel > tolerance:
        row[note_key] = f"differs: relative error {rel:.3g} above the {dtype} tolerance {tolerance:g}"
    return row


def _tree_difference(got: list[str], want: list[str], against: str) -> str:
    """The first leaf path one tree has and the other lacks, e.g. "output['b'] is missing from eager's"."""
    extra = next((p for p in got if p not in want), None)
    if extra is not None:
        return f"output{extra} is not in {against}'s"
    missing = next((p for p in want if p not in got), None)
    if missing is not None:
        return f"{against}'s output{missing} is missing"
    return f"the same {len(got)} leaves in another order"


def _plain(leaf: Any) -> Any:
    """A typed PRNG key as its integer data (NumPy cannot hold key dtypes), an array spread over a jax.distributed
    job's processes gathered (every rank checks the same leaves in order); anything else as it is."""
    if isinstance(leaf, jax.Array) and workload.is_key(leaf):
        leaf = jax.random.key_data(leaf)
    if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable:
        leaf = distributed.gathered(leaf)
    return leaf


def _as_numbers(x: Any) -> np.ndarray:
    x = np.asarray(_plain(x))
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
