"""The roofline (report/plot_roofline.py) and the device's side of the rows table (views.device_columns), from
hand-made rows: the ceilings and points as numbers, the picture as a file the report writes, the table's columns
shown where the rows have them and absent where they do not, and the `unavailable` text said once."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import error, frame, ok
from jitexp.analysis.formatting.tables import markdown_table
from jitexp.report.plots.roofline import Ceiling, ceilings, roofline_chart, roofline_points
from jitexp.report.run import build
from jitexp.report.run.caveats import caveat_summary
from jitexp.report.run.views import rows_table

TPU = dict(platform="tpu", device_kind="TPU v5 lite", dtype="bfloat16")
PEAKS = dict(peak_flops_per_s=200e12, peak_bytes_per_s=800e9)  # ridge at 250 FLOP/byte


def matmul(n: int, wall: float, device: float | None = None, **extra) -> dict:
    """A jit matmul row of n x n on the TPU: 2n^3 FLOPs, three n x n bf16 arrays moved."""
    timing = {} if device is None else {"device_s": device, "host_overhead_s": wall - device}
    return ok("matmul", "jit", n, wall, 0.1, flops=2.0 * n**3, bytes_accessed=6.0 * n * n, **timing, **TPU, **extra)


# ---- the numbers ------------------------------------------------------------------------


def test_the_ceiling_is_the_lower_of_the_flat_peak_and_the_bandwidth_slope():
    ceiling = Ceiling(flops_per_s=200e12, bytes_per_s=800e9)
    assert ceiling.ridge == pytest.approx(250.0)
    np.testing.assert_allclose(ceiling.at([1.0, 100.0, 250.0, 1000.0]), [800e9, 80e12, 200e12, 200e12])
    # one probe only: the line it gives alone
    np.testing.assert_allclose(Ceiling(200e12, math.nan).at([1.0, 1e6]), [200e12, 200e12])
    np.testing.assert_allclose(Ceiling(math.nan, 800e9).at([1.0, 10.0]), [800e9, 8e12])
    assert math.isnan(Ceiling(200e12, math.nan).ridge)
    assert not Ceiling(math.nan, math.nan).measured and np.isnan(Ceiling(math.nan, math.nan).at([1.0])).all()


def test_ceilings_are_each_devices_median_of_its_rows_peaks():
    rows = [
        matmul(1024, 1e-3, peak_flops_per_s=190e12, peak_bytes_per_s=700e9, job_num=0),
        matmul(2048, 2e-3, peak_flops_per_s=200e12, peak_bytes_per_s=800e9, job_num=1),
        matmul(4096, 3e-3, peak_flops_per_s=210e12, peak_bytes_per_s=float("nan"), job_num=2),
        ok("w", "jit", 8, 1e-3, 0.1, flops=8.0, bytes_accessed=64.0, platform="cpu", device_kind="cpu"),  # no probes
    ]
    found = ceilings(frame(rows))
    assert set(found) == {"TPU v5 lite"}  # a device without a measured peak has no ceiling
    assert found["TPU v5 lite"].flops_per_s == pytest.approx(200e12)
    assert found["TPU v5 lite"].bytes_per_s == pytest.approx(750e9)  # the missing one left out, not a zero


def test_points_by_wall_and_device_time_with_the_hosts_share():
    rows = [
        matmul(1024, 250e-6, 30e-6, **PEAKS),
        matmul(8192, 6.61e-3, 5.88e-3, **PEAKS),
        ok("matmul", "eager", 8192, 9e-3, 0.1, **TPU, **PEAKS),  # no cost analysis: no point
        ok("matmul", "aot", 64, 1e-5, 0.1, flops=1e3, bytes_accessed=0.0, **TPU),  # no traffic figure: no point
        error("matmul", "jit", 16384, flops=2.0 * 16384**3, bytes_accessed=6.0 * 16384**2, **TPU),  # failed
    ]
    points = roofline_points(frame(rows))
    assert list(points["label"]) == ["size 1024", "size 8192"]  # only the size tells them apart
    big = points.iloc[1]
    assert big["intensity"] == pytest.approx(2 * 8192 / 6)  # 2n^3 / 6n^2
    assert big["wall_flops_per_s"] == pytest.approx(2 * 8192**3 / 6.61e-3)
    assert big["device_flops_per_s"] == pytest.approx(2 * 8192**3 / 5.88e-3)
    assert big["host_share"] == pytest.approx(1 - 5.88 / 6.61)
    assert big["device"] == "TPU v5 lite" and big["mode"] == "jit"


def test_points_without_device_time_have_the_wall_point_only():
    rows = [ok("w", "jit", n, 1e-3, 0.1, flops=1e6 * n, bytes_accessed=1e5 * n) for n in (1, 2)]
    points = roofline_points(frame(rows))
    assert points["device_flops_per_s"].isna().all() and points["host_share"].isna().all()
    assert list(points["wall_flops_per_s"]) == pytest.approx([1e9, 2e9])
    assert roofline_points(frame([ok("w", "jit", 1, 1e-3, 0.1)])).empty  # an older CSV without cost analysis


def test_point_labels_name_what_differs_and_nothing_when_nothing_does():
    alike = [ok("w", mode, 8, 1e-3, 0.1, flops=1e6, bytes_accessed=1e5) for mode in ("jit", "aot")]
    assert list(roofline_points(frame(alike))["label"]) == ["", ""]  # the mode is the colour, not a label
    knobs = [ok("w", "jit", 8, 1e-3, 0.1, flops=1e6, bytes_accessed=1e5, donate_argnums=d) for d in ("[]", "[0]")] + [
        ok("v", "jit", 8, 1e-3, 0.1, flops=1e6, bytes_accessed=1e5, donate_argnums="[]", dtype="float64")
    ]
    assert list(roofline_points(frame(knobs))["label"]) == [
        "w donate []",
        "w donate [0]",
        "v donate []",  # dtype differs, but with the workload: not said again
    ]


# ---- the picture ------------------------------------------------------------------------


def test_roofline_png_is_written_with_and_without_ceilings(tmp_path):
    rows = [matmul(n, 1e-3 * n / 1024, 0.8e-3 * n / 1024, **PEAKS) for n in (1024, 2048, 4096)]
    (tmp_path / "with").mkdir()
    [path] = roofline_chart(frame(rows), tmp_path / "with")
    assert path.name == "roofline.png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "without").mkdir()
    old = [{k: v for k, v in row.items() if not k.startswith("peak_")} for row in rows]  # an older run
    [path] = roofline_chart(frame(old), tmp_path / "without")
    assert path.stat().st_size > 0
    assert roofline_chart(frame([ok("w", "jit", 8, 1e-3, 0.1)]), tmp_path) == []  # nothing to place


def test_the_report_draws_the_roofline_captions_it_and_removes_a_stale_one(tmp_path):
    run = tmp_path / "run"
    build.write_report(frame([matmul(1024, 1e-3, 8e-4, **PEAKS, job_num=0)]), run)
    assert (run / "roofline.png").exists()
    assert "![roofline](roofline.png)" in (run / "summary.md").read_text()
    page = (run / "index.html").read_text()
    assert "<figcaption>roofline.png: achieved FLOP/s against arithmetic intensity" in page
    build.write_report(frame([ok("w", "jit", 8, 1e-3, 0.1)]), run, plots=False)  # the same folder, no flops
    assert not (run / "roofline.png").exists()


# ---- the rows table and the caveats -------------------------------------------------------


def test_the_rows_table_shows_device_time_share_of_peak_and_device_memory_when_present():
    rows = [
        matmul(
            8192,
            6.61e-3,
            5.88e-3,
            peak_flops_share=0.166,
            peak_bytes_share=0.0011,
            device_peak_flops_share=0.943,
            device_peak_bytes_share=0.0062,
            device_peak_bytes=3 * 2**30,
        )
    ]
    table = rows_table(frame(rows))
    for col in (
        "device_s",
        "host_overhead_s",
        "% of ceiling FLOP/s (device)",
        "% of ceiling bytes/s (device)",
        "device_peak_bytes",
    ):
        assert col in table.columns, col
    text = markdown_table(table)
    for cell in ("5.88 ms", "730 us", "94.3%", "0.62%", "3 GiB"):
        assert cell in text, cell


def test_the_share_of_peak_falls_back_to_wall_time_and_says_so_per_cell_when_rows_mix():
    rows = [
        matmul(1024, 1e-3, 8e-4, peak_flops_share=0.5, device_peak_flops_share=0.625),
        ok("matmul", "eager", 1024, 2e-3, 0.1, peak_flops_share=0.25, **TPU),  # no device time: by wall time
    ]
    table = rows_table(frame(rows))
    assert list(table["% of ceiling FLOP/s"]) == ["62.5% device", "25% wall"]
    assert not any(c.startswith("% of ceiling bytes/s") for c in table.columns)  # no row has it
    wall_only = rows_table(frame([rows[1]]))
    assert list(wall_only["% of ceiling FLOP/s (wall)"]) == ["25%"]
    assert "device_s" not in wall_only.columns and "host_overhead_s" not in wall_only.columns


def test_a_share_above_its_ceiling_is_words_not_a_percentage():
    rows = [
        matmul(64, 1e-5, 8e-6, device_peak_flops_share=1.3, device_peak_bytes_share=3.37),
        matmul(1024, 1e-3, 8e-4, device_peak_flops_share=0.625, device_peak_bytes_share=0.2),
    ]
    table = rows_table(frame(rows))
    assert list(table["% of ceiling FLOP/s (device)"]) == ["above its ceiling", "62.5%"]
    assert list(table["% of ceiling bytes/s (device)"]) == ["above its ceiling", "20%"]  # a TPU's: no cache words
    cpu = [{**row, "platform": "cpu", "device_kind": "cpu"} for row in rows]
    assert list(rows_table(frame(cpu))["% of ceiling bytes/s (device)"]) == ["above (in cache)", "20%"]


def test_the_rows_table_has_no_device_columns_for_rows_without_them():
    rows = [ok("w", "jit", 8, 1e-3, 0.1, device_s=float("nan"), peak_flops_share=None), ok("w", "eager", 8, 2e-3, 0.1)]
    table = rows_table(frame(rows))
    assert not [c for c in table.columns if "peak" in c or c in ("device_s", "host_overhead_s")]


def test_what_the_host_could_not_give_is_said_once_not_per_row():
    noise = "noise: not available on this host (no per-CPU steal or run-queue accounting in /proc)"
    device = "device_s: the program ran inline; no device events"  # one column's reasons, joined by "; " too
    rows = [ok("w", mode, 8, 1e-3, 0.1, job_num=0, unavailable=noise) for mode in ("eager", "jit")]
    rows += [ok("w", mode, 16, 1e-3, 0.1, job_num=1, unavailable=f"{noise}; {device}") for mode in ("eager", "jit")]
    lines = [line for line in caveat_summary(frame(rows)) if "not available on this host" in line]
    assert lines == [f"not available here, so those columns are empty: {noise}; {device} (1 of 2 jobs)"]
    unnoted = [ok("w", "jit", 8, 1e-3, 0.1, job_num=0, unavailable=""), ok("w", "jit", 9, 1e-3, 0.1, job_num=1)]
    assert not [line for line in caveat_summary(frame(unnoted)) if "not available" in line]
    assert "unavailable" not in rows_table(frame(rows)).columns  # not a column of every row


def test_the_nominal_ceiling_is_drawn_beside_the_probes_and_each_is_labelled_by_what_it_is():
    from jitexp.report.plots.roofline import _panel_title, nominal_ceilings, probe_words

    nominal = dict(nominal_flops_per_s=197e12, nominal_bytes_per_s=819e9)
    df = frame(
        [
            matmul(1024, 1e-3, **PEAKS, **nominal),
            ok("w", "jit", 8, 1e-3, 0.1, flops=8.0, bytes_accessed=64.0, platform="cpu", device_kind="cpu"),
        ]
    )
    found = nominal_ceilings(df)
    assert set(found) == {"TPU v5 lite"} and (found["TPU v5 lite"].flops_per_s, found["TPU v5 lite"].bytes_per_s) == (
        197e12,
        819e9,
    )
    probes = ceilings(df)["TPU v5 lite"]
    assert _panel_title("TPU v5 lite", probes, found["TPU v5 lite"]) == (
        "TPU v5 lite: nominal 197 TFLOP/s, 819 GB/s, 200 TFLOP/s matmul probe, 800 GB/s copy probe"
    )
    cpu = ceilings(frame([ok("w", "jit", 8, 1e-3, 0.1, device_kind="cpu", peak_bytes_per_s=5e9)]))["cpu"]
    assert _panel_title("cpu", cpu) == "cpu: 5 GB/s copy probe (memory bandwidth)"
    assert probe_words(True) == ("{} (matmul probe)", "memory bandwidth {} (copy probe)")
    assert probe_words(False)[1] == "{} (copy probe)"
