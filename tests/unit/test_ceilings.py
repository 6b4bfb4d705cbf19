"""Ceilings that are ceilings (issue 50, item 2): a share of peak is a share of the device's nominal peak where it is
known, else of the measured probe; a share above 1 is said in words, never printed as a percentage of a peak; device
time above its traced wall time gives no share."""

from __future__ import annotations

import math

import pytest

from jitexp.analysis.ceilings import (
    NOMINAL,
    TRACE_TOLERANCE,
    above_words,
    ceiling_label,
    ceilings,
    device_above_wall,
    nominal,
)
from jitexp.analysis.device import device_columns, unavailable
from jitexp.analysis.formatting.answer import device_clause
from jitexp.records import Noise, ProcessResult

PROBES = {"peak_flops_per_s": 184e12, "peak_bytes_per_s": 700e9}


def test_the_nominal_table_knows_the_tpu_v5e_by_its_device_kind_and_nothing_else_by_guess():
    assert nominal("TPU v5 lite") == {"nominal_flops_per_s": 197e12, "nominal_bytes_per_s": 819e9}
    assert nominal("TPU v5e") == nominal("TPU v5 lite")
    assert nominal(" TPU v5 lite ") == nominal("TPU v5 lite")
    assert nominal("TPU v6 lite") == {"nominal_flops_per_s": 918e12, "nominal_bytes_per_s": 1638e9}
    assert nominal("TPU v5") == nominal("TPU v5p") == {"nominal_flops_per_s": 459e12, "nominal_bytes_per_s": 2765e9}
    assert nominal("TPU v4") == {"nominal_flops_per_s": 275e12, "nominal_bytes_per_s": 1200e9}
    assert nominal("cpu") == nominal(None) == nominal(math.nan) == {}
    assert len(NOMINAL) == 7


def test_the_ceiling_is_the_nominal_peak_where_known_else_the_probe():
    assert ceilings("TPU v5 lite", PROBES) == {"flops": (197e12, "nominal"), "bytes": (819e9, "nominal")}
    assert ceilings("cpu", PROBES) == {"flops": (184e12, "probe"), "bytes": (700e9, "probe")}
    assert ceilings("cpu", {"peak_bytes_per_s": 5e9, "peak_flops_per_s": 0.0}) == {"bytes": (5e9, "probe")}
    assert ceilings("cpu", {"peak_flops_per_s": "x", "peak_bytes_per_s": None}) == {}
    assert ceilings("TPU v5 lite", {}) == {"flops": (197e12, "nominal"), "bytes": (819e9, "nominal")}


@pytest.mark.parametrize(
    ("name", "source", "platform", "words", "label"),
    [
        ("bytes", "probe", "cpu", "in cache, above the memory ceiling", "memory bandwidth"),
        ("flops", "probe", "cpu", "above the matmul probe", "the matmul probe"),
        ("bytes", "probe", "gpu", "above the copy probe", "the copy probe"),
        (
            "bytes",
            "nominal",
            "tpu",
            "above the nominal peak (the cost analysis counts more than the device did)",
            "peak bytes/s",
        ),
        (
            "flops",
            "nominal",
            "cpu",
            "above the nominal peak (the cost analysis counts more than the device did)",
            "peak FLOP/s",
        ),
    ],
)
def test_what_a_share_is_of_and_what_passing_it_means(name, source, platform, words, label):
    assert above_words(name, source, platform) == words
    assert ceiling_label(name, source, platform) == label


def test_device_time_above_its_traced_wall_time_is_told_apart_within_a_tolerance():
    assert TRACE_TOLERANCE == 0.01
    assert device_above_wall({"device_s": 1.02e-3, "device_trace_wall_s": 1e-3})
    assert not device_above_wall({"device_s": 1.01e-3, "device_trace_wall_s": 1e-3})
    assert not device_above_wall({"device_s": 2e-3, "device_trace_wall_s": None})
    assert not device_above_wall({"device_s": 2e-3, "device_trace_wall_s": math.nan})
    assert not device_above_wall({"device_s": None, "device_trace_wall_s": 1e-3})
    assert not device_above_wall({"device_s": 2e-3, "device_trace_wall_s": 0.0})


def test_a_tpu_matmul_is_a_share_of_the_nominal_peak_with_the_probe_beside_it():
    # the 8192 bf16 matmul: 103% of the job's own probe (184 TFLOP/s), 96% of the chip's 197
    flops = 2 * 8192**3
    row = {"device_kind": "TPU v5 lite", "platform": "tpu", "median_s": 6.3e-3, "device_s": flops / 190e12}
    row.update(flops=flops, bytes_accessed=3 * 2 * 8192**2, device_trace_wall_s=6.4e-3)
    cols = device_columns(row, PROBES)
    assert cols["peak_flops_per_s"] == 184e12 and cols["nominal_flops_per_s"] == 197e12
    assert cols["flops_ceiling"] == "nominal" and cols["bytes_ceiling"] == "nominal"
    assert cols["device_peak_flops_share"] == pytest.approx(190 / 197)
    assert "above_ceiling" not in cols
    assert device_clause({**row, **cols}) == "5.79 ms, 96% of peak FLOP/s"


def test_a_cpu_row_in_cache_is_above_the_memory_ceiling_not_a_percentage_of_a_peak():
    # the softmax 64: 337% of the copy probe
    row = {"device_kind": "cpu", "platform": "cpu", "median_s": 40e-6, "device_s": 18e-6, "device_trace_wall_s": 30e-6}
    row.update(flops=1e6, bytes_accessed=3.37 * 5e9 * 18e-6)
    cols = device_columns(row, {"peak_flops_per_s": 1e11, "peak_bytes_per_s": 5e9})
    assert cols["bytes_ceiling"] == "probe" and cols["device_peak_bytes_share"] == pytest.approx(3.37)
    assert cols["above_ceiling"] == "bytes/s in cache, above the memory ceiling"
    assert "nominal_bytes_per_s" not in cols
    assert device_clause({**row, **cols}) == "18 us, bytes/s in cache, above the memory ceiling"
    # below the copy probe: a share of the memory bandwidth
    slow = {**row, "bytes_accessed": 0.5 * 5e9 * 18e-6}
    assert (
        device_clause({**slow, **device_columns(slow, {"peak_bytes_per_s": 5e9})}) == "18 us, 50% of memory bandwidth"
    )


def test_host_overhead_is_the_traced_calls_idle_time_and_device_time_above_the_median_names_its_traced_call():
    row = {"platform": "cpu", "median_s": 276e-6, "device_s": 293e-6, "device_trace_wall_s": 310e-6}
    cols = device_columns(row, {})
    assert cols["host_overhead_s"] == pytest.approx(17e-6)  # the traced call's, never negative
    assert device_clause({**row, **cols}) == "293 us of a 310 us traced call"
    old = {"median_s": 300e-6, "device_s": 200e-6}  # a row from before device_trace_wall_s: wall minus device
    assert device_columns(old, {})["host_overhead_s"] == pytest.approx(100e-6)


def test_device_time_above_its_traced_wall_gives_no_share_and_the_job_says_why():
    row = {"mode": "jit", "status": "ok", "platform": "cpu", "median_s": 188e-6, "device_s": 531e-6}
    row.update(device_trace_wall_s=400e-6, bytes_accessed=1e6)
    cols = device_columns(row, {"peak_bytes_per_s": 5e9})
    assert "device_peak_bytes_share" not in cols and cols["peak_bytes_share"] == pytest.approx(1e6 / 188e-6 / 5e9)
    assert device_clause({**row, **cols}) == "time above its traced call's 400 us: no share"
    note = unavailable([row, {**row, "variant": "b"}], ProcessResult(0, platform="tpu", noise=Noise(steal=0.0)), True)
    assert note == (
        "device_s: b:jit's busy time (531 us) is above its traced loop's wall time (400 us a call): the trace's clock "
        "and the loop's disagree, so it is no share of the call and no peak share is given by it; jit's busy time "
        "(531 us) is above its traced loop's wall time (400 us a call): the trace's clock and the loop's disagree, so "
        "it is no share of the call and no peak share is given by it"
    )
