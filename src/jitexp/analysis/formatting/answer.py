"""The job's one line, the answer a sweep prints first (job_summary), and the clauses it is made of: a row's
label, the A/B phrase, why rows are unstable, the mesh, the knobs, the device, the split of the job's time,
a failure, what did no work."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from jitexp.analysis.ceilings import ceiling_label, device_above_wall
from jitexp.analysis.formatting.phrases import change_phrase, payoff_text, speedup_phrase
from jitexp.analysis.formatting.values import (
    EAGER,
    NUMPY,
    cell_text,
    format_percent,
    format_seconds,
    is_missing,
    is_positive,
    is_true,
    plain,
)
from jitexp.analysis.speedups import NOT_WORK_VERDICTS, not_work
from jitexp.labels import joined, size_text

_REASONS = re.compile(r";\s*(?![^()]*\))")  # "; " between reasons, not inside "(robust cv; limit 10%)"


def split_reasons(text: Any) -> list[str]:
    """An unstable_reason cell as its separate reasons (``; `` between them, not inside parentheses)."""
    return [r.strip() for r in _REASONS.split(cell_text(text)) if r.strip()]


def row_label(row: Mapping) -> str:
    """A row's mode, after its variant or env in a job with variants or envs: ``jit``, ``after jit``, ``new jit``."""
    name = cell_text(row.get("variant")) or cell_text(row.get("env"))
    return f"{name} {row.get('mode')}" if name else str(row.get("mode"))


def ab_phrase(row: Mapping, metric: str = "steady") -> str:
    """A variant's change against the baseline variant (`change_phrase`): ``after jit 3.02x slower than before
    (95% CI 2.95x-3.10x, p=0.031)``, ``... within the 5% threshold (...)``, ``...: cannot tell (1 process pair)``."""
    verdict_ = cell_text(row.get(f"ab_{metric}_verdict"))
    ratio = row.get(f"ab_{metric}_ratio")
    if is_missing(ratio) or not verdict_:
        return f"{row_label(row)} vs {row.get('ab_baseline')}: -"
    lo, hi = row.get(f"ab_{metric}_ratio_ci_low"), row.get(f"ab_{metric}_ratio_ci_high")
    return change_phrase(
        row_label(row), str(row.get("ab_baseline")), ratio, lo, hi, verdict_, row.get(f"ab_{metric}_p_value")
    )


def unstable_clause(rows: Sequence[Mapping]) -> str:
    """``unstable (eager, jit): 3 reasons, see results.csv unstable_reason``; ``""`` when every row is stable."""
    unstable = [r for r in rows if is_true(r.get("unstable"))]
    if not unstable:
        return ""
    n = sum(max(len(split_reasons(r.get("unstable_reason"))), 1) for r in unstable)
    modes = ", ".join(row_label(r) for r in unstable)
    return f"unstable ({modes}): {n} reason{'s' if n != 1 else ''}, see results.csv unstable_reason"


def mesh_text(row: Mapping) -> str:
    """`mesh data=4`, `mesh data=2 over 2 processes` (distributed.processes); empty for one device."""
    mesh = cell_text(row.get("mesh"))
    if not mesh:
        return ""
    given = row.get("distributed_processes")
    n = 1 if given is None or is_missing(given) else int(given)
    return f"mesh {mesh}" + (f" over {n} processes" if n > 1 else "")


def knobs_text(row: Mapping) -> str:
    """`donate_argnums=[0] xla_cpu_enable_fast_math=true`: the donation and compiler options a job set (what a
    sweep over them varies), and `prejitted=jax.jit` for a function that came wrapped in a jit already; empty when
    it set none."""
    donate, wrapped = cell_text(row.get("donate_argnums")), cell_text(row.get("prejitted"))
    parts = [f"donate_argnums={donate}"] if donate and donate != "[]" else []
    parts += [f"prejitted={wrapped}"] if wrapped else []
    return " ".join([*parts, cell_text(row.get("compiler_options"))]).strip()


def device_clause(row: Mapping) -> str:
    """``5.88 ms, 94% of peak FLOP/s``: the device's busy time per call, and the share of its ceiling
    (analysis.ceilings: the nominal peak, else the probe: `of the matmul probe`, `of memory bandwidth`) in the
    resource the call uses most, or in words when the row passes it (`in cache, above the memory ceiling`); `of a 310
    us traced call` when the traced loop ran slower than the median; `time above its traced call's 400 us: no share`
    when the busy time is above the traced loop's wall time (the job's `unavailable` says why); empty without it."""
    if is_missing(row.get("device_s")):
        return ""
    wall: Any = row.get("device_trace_wall_s")
    median: Any = row.get("median_s")
    device = float(row["device_s"])
    if device_above_wall(row):
        return f"time above its traced call's {format_seconds(wall)}: no share"
    traced = (
        f" of a {format_seconds(wall)} traced call"
        if is_positive(wall) and is_positive(median) and device > float(median)
        else ""
    )
    above = row.get("above_ceiling")
    if isinstance(above, str) and above:
        return f"{format_seconds(device)}{traced}, {above.split('; ')[0]}"
    shares = [
        (row.get(f"device_peak_{name}_share"), name, label)
        for name, label in (("flops", "peak FLOP/s"), ("bytes", "peak bytes/s"))
    ]
    known = [
        (float(share), name, label) for share, name, label in shares if share is not None and not is_missing(share)
    ]
    peak = ""
    if known:
        share, name, label = max(known)
        source = row.get(f"{name}_ceiling")
        if isinstance(source, str) and source:
            label = ceiling_label(name, source, row.get("platform"))
        percent = share * 100
        peak = f", {percent:.0f}% of {label}" if percent >= 10 else f", {percent:.2g}% of {label}"
    return f"{format_seconds(device)}{traced}{peak}"


SPLIT_WORDS = {
    "first_calls": "first calls",
    "warmup": "warm-up",
    "device_time": "device time",
    "cache_probe": "cache probe",
    "retrace_probe": "retrace probe",
    "profile_probe": "profile",
    "unnamed": "unnamed",
}
UNNAMED_SHARE = 0.1  # the split names parts, largest first, until what it leaves unnamed is under this share


def split_text(row: Mapping) -> str:
    """``21.2 s: sampling 6.1 s, open 5.2 s, exit 4.1 s, first calls 2.9 s, other 1.6 s``: where the job's wall time
    went, its largest parts (job_<part>_s) named until the rest is under a tenth; empty when unknown. A row without
    the parts (written before they existed) reads ``31.2 s: open 9.8 s, compiling 1.2 s, the rest 20.2 s``."""
    wall = row.get("job_wall_s")
    if wall is None or is_missing(wall):
        return ""
    parts = {
        k[4:-2]: float(v)
        for k, v in row.items()
        if k.startswith("job_") and k.endswith("_s") and k not in OLD_SPLIT and not is_missing(v)
    }
    if "sampling" not in parts:
        opened, compiled = (row.get(k) for k in ("job_open_s", "job_compile_s"))
        opened = 0.0 if opened is None or is_missing(opened) else float(opened)
        compiled = 0.0 if compiled is None or is_missing(compiled) else float(compiled)
        rest = max(float(wall) - opened - compiled, 0.0)
        return (
            f"{format_seconds(wall)}: open {format_seconds(opened)}, compiling {format_seconds(compiled)}, "
            f"the rest {format_seconds(rest)}"
        )
    named, left = [], float(wall)
    for name, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
        if left < UNNAMED_SHARE * float(wall) or seconds <= 0:
            break
        named.append(f"{SPLIT_WORDS.get(name, name)} {format_seconds(seconds)}")
        left -= seconds
    other = f", other {format_seconds(max(left, 0.0))}" if left > 0.0005 else ""
    return f"{format_seconds(wall)}: {', '.join(named)}{other}"


OLD_SPLIT = ("job_wall_s", "job_compile_s")  # job_open_s is a part of both splits


def failure_text(row: Mapping) -> str:
    """A failed row in one line: ``jit failed in trace: TypeError: ... (hint: ...)``."""
    hint = f" (hint: {row['hint']})" if row.get("hint") else ""
    return f"{row_label(row)} failed in {row.get('error_phase')}: {row.get('error_type')}: {row.get('error_message')}{hint}"


def not_work_text(rows: Sequence[Mapping]) -> str:
    """``jit differs from eager: relative error 0.225; ``: why the rows' times are no speedup (speedups.not_work),
    each once, ending in ``; ``; empty when every time is the function's work."""
    reasons = []
    for row in rows:
        if row.get("status") != "ok":
            continue
        for column, against in (("verdict", row.get("baseline_mode")), ("verdict_vs_numpy", NUMPY)):
            if column == "verdict_vs_numpy" and row.get("mode") in (EAGER, row.get("baseline_mode", EAGER)):
                continue  # the line gives no such verdict (the numpy row's own says it)
            if cell_text(row.get(column)) in NOT_WORK_VERDICTS:
                why = not_work(row, str(against))[1] or not_work(row)[1]
                reasons.append(why or f"{row_label(row)} vs {against}: {row.get(column)}")
    reasons = list(dict.fromkeys(reasons))
    return "".join(f"{r}; " for r in reasons)


def case_text(rows: Sequence[Mapping]) -> str:
    """``compute_heavy size=1000 float32 cpu``: the job's case (workload, params, size, dtype, device, mesh, knobs)."""
    r0 = rows[0]
    params = " ".join(f"{k[6:]}={plain(v)}" for k, v in r0.items() if k.startswith("param_"))
    device = r0.get("device_kind") or r0.get("platform") or ""
    workload = "/".join(dict.fromkeys(str(r["workload"]) for r in rows))
    dtypes = joined(rows, lambda r: cell_text(r.get("dtype")))
    mesh, knobs = joined(rows, mesh_text), joined(rows, knobs_text)
    return " ".join(str(p) for p in (workload, params, joined(rows, size_text), dtypes, device, mesh, knobs) if p)


def compile_text(row: Mapping) -> str:
    """``34.1 ms``, ``5 ms with the disk cache (34 ms without)``: a row's compile time; empty without one."""
    compile_s, cold_s = row.get("compile_s"), row.get("cache_cold_compile_s")
    if not is_positive(compile_s):
        return ""
    cached = f" with the disk cache ({format_seconds(cold_s)} without)" if is_positive(cold_s) else ""
    return f"{format_seconds(compile_s)}{cached}"


def process_scope(rows: Sequence[Mapping]) -> str:
    """``12 processes``, ``6 processes per env``, ``3 processes per mode, each mode in processes of its own``: how
    many fresh processes the rows' CIs cover; empty when unknown."""
    n = max((r.get("n_processes") or 0 for r in rows), default=0)
    if is_missing(n) or not n:
        return ""
    n = int(n)
    per_env = " per env" if any(not is_missing(r.get("env")) for r in rows) else ""
    separate = any(r.get("interleave") == "processes" for r in rows)
    per_env = " per mode, each mode in processes of its own" if separate else per_env
    return f"{n} process{'es' if n != 1 else ''}{per_env}"


def job_summary(rows: Sequence[Mapping]) -> str:
    """One line for a job: first why a time is not the function's work (not_work_text), then each mode's median
    with its CI, then each variant's change against the baseline variant (a job with variants), then each paired
    verdict, compile and pay-off (no verdict for a time that is not the function's work)."""
    r0 = rows[0]
    head = case_text(rows)
    parts, verdicts = [], []
    changes = [ab_phrase(row) for row in rows if cell_text(row.get("ab_baseline"))]
    for row in rows:
        mode, plain_mode = row_label(row), row["mode"]
        if row.get("status") != "ok":
            parts.append(failure_text(row))
            continue
        half = (row["ci95_high_s"] - row["ci95_low_s"]) / 2 / row["median_s"]
        device = device_clause(row)
        device = f"; device {device}" if device else ""
        parts.append(f"{mode} {format_seconds(row['median_s'])} (95% CI \u00b1{format_percent(half)}{device})")
        if not is_missing(row.get("speedup")):
            phrase = speedup_phrase(
                mode,
                row["baseline_mode"],
                row["speedup"],
                row["speedup_ci_low"],
                row["speedup_ci_high"],
                row["verdict"],
            )
            if plain_mode == NUMPY or row["verdict"] in NOT_WORK_VERDICTS:  # NumPy compiles nothing; no work no pay-off
                verdicts.append(phrase)
            else:
                spent = compile_text(row)
                compile_part = f", compile {spent}" if spent else ""
                payoff = payoff_text(
                    row["verdict"], row["break_even_calls"], row["ahead_until_calls"], row["baseline_mode"]
                )
                why = f", {row['explanation']}" if not is_missing(row.get("explanation")) else ""
                verdicts.append(f"{phrase}{why}{compile_part}, {payoff}")
        if (
            not is_missing(row.get("speedup_vs_numpy"))
            and plain_mode != row.get("baseline_mode", EAGER)
            and plain_mode != EAGER
        ):
            verdicts.append(
                speedup_phrase(
                    mode,
                    NUMPY,
                    row["speedup_vs_numpy"],
                    row.get("speedup_vs_numpy_ci_low"),
                    row.get("speedup_vs_numpy_ci_high"),
                    row.get("verdict_vs_numpy"),
                )
            )
    scope = "; ".join(t for t in (process_scope(rows), split_text(r0)) if t)
    notes = [unstable_clause(rows)]
    text = f"{not_work_text(rows)}{head}: {', '.join(parts)}"
    if changes or verdicts:
        text += " -> " + "; ".join(changes + verdicts)
    tail = [t for t in [scope, *notes] if t]
    return text + (f" [{'; '.join(tail)}]" if tail else "")
