"""formatting's value-to-text, each case checked by hand: missing values, units, tables, params, the ratio and
pay-off phrases, and the job's one line (job_summary) in full."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from jitexp.analysis import formatting as f

NAN = math.nan
INF = math.inf

# ---- missing values and plain numbers ----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "missing"),
    [(None, True), (NAN, True), (np.nan, True), (pd.NA, True), (pd.NaT, True), (np.float64("nan"), True)]
    + [(0, False), (0.0, False), ("", False), ("x", False), ([1, 2], False), ({"a": 1}, False), (INF, False)],
)
def test_is_missing(value, missing):
    assert f.is_missing(value) is missing


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, False), (NAN, False), (pd.NA, False), (True, True), (False, False), (1, True), (0, False), ("yes", True)],
)
def test_is_true_is_false_for_a_missing_flag(value, expected):
    assert f.is_true(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, False), (NAN, False), (0, False), (0.0, False), (-1, False), (1e-9, True), ("2", True)],
)
def test_is_positive_needs_a_present_number_above_zero(value, expected):
    assert f.is_positive(value) is expected


@pytest.mark.parametrize(
    ("value", "expected", "kind"),
    [
        (3.0, 3, int),
        (np.float64(2.0), 2, int),
        (np.float32(-4.0), -4, int),
        (2.5, 2.5, float),
        (np.float64(2.5), 2.5, float),
        (np.int64(4), 4, int),
        (np.bool_(True), True, bool),
        (INF, INF, float),
        ("x", "x", str),
    ],
)
def test_plain_turns_integral_floats_into_ints_and_numpy_scalars_into_python_ones(value, expected, kind):
    out = f.plain(value)
    assert out == expected and type(out) is kind


def test_plain_keeps_nan_a_float():
    out = f.plain(np.float64("nan"))
    assert type(out) is float and math.isnan(out)


@pytest.mark.parametrize(("value", "expected"), [(None, ""), (NAN, ""), (pd.NA, ""), (0, "0"), ("a b", "a b")])
def test_cell_text(value, expected):
    assert f.cell_text(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("jax.errors.TracerBoolConversionError", "TracerBoolConversionError"),
        ("a.b", "b"),
        ("TypeError", "TypeError"),
        (None, ""),
        (NAN, ""),
    ],
)
def test_short_name_is_the_last_dotted_part(value, expected):
    assert f.short_name(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.944, "1.94"),
        (12.34, "12.3"),
        (4567.0, "4567"),
        (123456.0, "123456"),
        (0.001234, "0.00123"),
        (1.0, "1"),
        (0.0, "0"),
        (None, "nan"),
    ],
)
def test_three_digits_has_no_exponent(value, expected):
    assert f.three_digits(value) == expected


# ---- units -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "-"),
        (NAN, "-"),
        (INF, "inf"),
        (-INF, "inf"),
        (0, "0 s"),
        (0.0, "0 s"),
        (1.5, "1.5 s"),
        (120.0, "120 s"),
        (0.9995, "1 s"),  # the boundary: rounds up to 1 s, not 1000 ms
        (0.9994, "999 ms"),
        (12.3e-3, "12.3 ms"),
        (-2e-3, "-2 ms"),
        ("0.5", "500 ms"),
        (45e-6, "45 us"),
        (5e-9, "5 ns"),
        (0.9994e-6, "999 ns"),
    ],
)
def test_format_seconds(value, expected):
    assert f.format_seconds(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "-"),
        (NAN, "-"),
        (0, "0 B"),
        (800, "800 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (-2048, "-2 KiB"),
        (2**20 - 1, "1.02e+03 KiB"),
        (2**20, "1 MiB"),
        (4.04 * 2**20, "4.04 MiB"),
        (2**30, "1 GiB"),
        (3 * 2**30, "3 GiB"),
    ],
)
def test_format_bytes(value, expected):
    assert f.format_bytes(value) == expected


@pytest.mark.parametrize(("value", "expected"), [(1.944, "1.94x"), ("2", "2x"), (1234.5, "1234x"), (None, "-")])
def test_format_ratio(value, expected):
    assert f.format_ratio(value) == expected


@pytest.mark.parametrize(
    ("p", "expected"),
    [(None, "-"), (NAN, "-"), (0.0, "<0.0001"), (1e-5, "<0.0001"), (1e-4, "0.0001"), (0.0312, "0.031"), (0.5, "0.5")],
)
def test_p_text(p, expected):
    assert f.p_text(p) == expected


@pytest.mark.parametrize(("value", "expected"), [(0.034, "3%"), (0.5, "50%"), (0.05, "5%"), (1.0, "100%")])
def test_format_percent(value, expected):
    assert f.format_percent(value) == expected


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("median_s", 0.0123, "12.3 ms"),
        ("median_s", None, "-"),
        ("speedup", 1.944, "1.94x"),
        ("speedup_ci_low", 1.8, "1.8x"),
        ("speedup_ci_high", 2.09, "2.09x"),
        ("speedup", NAN, "-"),
        ("argument_bytes", 2048, "2 KiB"),
        ("bytes_accessed", 800.0, "800 B"),
        ("bytes", 2048, "2048"),
        ("arithmetic_intensity", 12.345, "12.3"),
        ("traffic_cut", 2.5, "2.5x"),
        ("break_even_calls", INF, "never"),
        ("break_even_calls", 15.0, "15"),
        ("ahead_until_calls", 3.0, "3"),
        ("ahead_until_calls", INF, "never"),
        ("growth_exponent", 2.064, "2.06"),
        ("exponent", 1, "1.00"),
        ("growth_exponent", -0.001, "0.00"),  # not "-0.00"
        ("growth_exponent", -0.5, "-0.50"),
        ("n_processes", 6.0, "6"),
        ("mode", "jit", "jit"),
        ("mode", None, "-"),
        ("ratio", 1.944, "1.944"),
    ],
)
def test_format_value_picks_the_unit_by_column(column, value, expected):
    assert f.format_value(column, value) == expected


@pytest.mark.parametrize(("value", "expected"), [(2.064, "time ~ size^2.06"), (None, "-"), (NAN, "-"), (INF, "-")])
def test_growth_text(value, expected):
    assert f.growth_text(value) == expected


def test_display_path_is_relative_to_the_current_directory_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert f.display_path(tmp_path / "outputs" / "run") == "outputs/run"
    assert f.display_path(str(tmp_path / "x.csv"), cwd=str(tmp_path)) == "x.csv"
    assert f.display_path(tmp_path.parent / "other", cwd=tmp_path) == str(tmp_path.parent / "other")


# ---- tables ------------------------------------------------------------------------------


def test_render_formats_each_cell_by_its_column_and_cuts_long_ones():
    df = pd.DataFrame({"mode": ["abcde", "abcdef", "a\nb"], "median_s": [0.0123, NAN, 2.0]})
    assert f.render(df) == (["mode", "median_s"], [["abcde", "12.3 ms"], ["abcdef", "-"], ["a b", "2 s"]])
    assert f.render(df, width=5) == (["mode", "median_s"], [["abcde", "12..."], ["ab...", "-"], ["a b", "2 s"]])


def test_markdown_table_right_aligns_numbers_but_not_flags_and_escapes_pipes():
    df = pd.DataFrame({"mode": ["jit", "a|b"], "median_s": [0.0123, NAN], "ok": [True, False], "n": [3, 4]})
    assert f.markdown_table(df) == (
        "| mode | median_s | ok | n |\n|---|---:|---|---:|\n| jit | 12.3 ms | True | 3 |\n| a\\|b | - | False | 4 |"
    )


def test_text_table_aligns_numbers_right_and_text_left_and_cuts_at_48():
    df = pd.DataFrame({"n": [3, 12], "mode": ["jit", "x" * 49]})
    assert f.text_table(df) == "\n".join([" n  mode", "--  " + "-" * 48, " 3  jit", "12  " + "x" * 45 + "..."])
    assert f.text_table(df, width=49).splitlines()[-1] == "12  " + "x" * 49


# ---- params and jit's knobs ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("[1]", True), ("(0,)", True), ("[]", False), ("()", False), ("None", False), (" [] ", False), ("", False)]
    + [(None, False), (NAN, False)],
)
def test_is_static(value, expected):
    assert f.is_static(value) is expected


@pytest.mark.parametrize(
    ("row", "static_mark", "expected"),
    [
        ({"param_n": 2.0, "param_depth": NAN, "mode": "jit"}, False, "n=2"),
        ({"param_n": 2.0, "param_kind": "sum", "static_argnums": "[1]"}, False, "n=2, kind=sum"),
        ({"param_n": 2.0, "static_argnums": "[1]"}, True, "n=2 (static)"),
        ({"param_n": 2.0, "static_argnums": "[]"}, True, "n=2 (traced)"),
        ({"param_n": 2.0, "static_argnums": NAN}, True, "n=2"),
        ({"param_n": 2.0}, True, "n=2"),
        ({"mode": "jit", "static_argnums": "[1]"}, True, ""),
        ({"param_n": NAN}, False, ""),
    ],
)
def test_params_text(row, static_mark, expected):
    assert f.params_text(row, static_mark=static_mark) == expected


def test_params_text_marks_nothing_unless_asked():
    assert f.params_text({"param_n": 2.0, "static_argnums": "[1]"}) == "n=2"


@pytest.mark.parametrize(
    ("variant", "static_argnums", "expected"),
    [
        ("n=2", "[1]", "n=2 (static)"),
        ("n=2", "[]", "n=2 (traced)"),
        (" n =2", "[1]", " n =2 (static)"),
        ("n=a=b", "[1]", "n=a=b (static)"),
        ("size=8", "[1]", "size=8"),
        ("float32", "[1]", "float32"),
        (None, "[1]", ""),
    ],
)
def test_variant_label_marks_only_a_workload_param(variant, static_argnums, expected):
    assert f.variant_label(variant, static_argnums, ("n", "k")) == expected


def test_variant_label_without_params_marks_nothing():
    assert f.variant_label("n=2", "[1]") == "n=2"


# ---- verdicts, pay-off and the ratio phrases ---------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "calls", "ahead", "expected"),
    [
        ("faster", NAN, NAN, "pay-off unknown (no cold first call)"),
        ("faster", INF, NAN, "never pays off"),
        ("faster", 1.0, NAN, "ahead from the first call"),
        ("faster", 0.5, NAN, "ahead from the first call"),
        ("faster", 2.0, NAN, "pays off after 2 calls"),
        ("faster", 15.0, NAN, "pays off after 15 calls"),
        ("slower", NAN, 1.0, "ahead for the first 1 call only, then eager wins"),
        ("slower", NAN, 3.0, "ahead for the first 3 calls only, then eager wins"),
        ("slower", 2.0, 0.5, "never pays off"),
        ("slower", INF, NAN, "never pays off"),
        ("slower", NAN, NAN, "pay-off unknown (no cold first call)"),
        ("no significant difference", 1.0, NAN, "no steady-state gain; its first call is cheaper"),
        ("no significant difference", 2.0, 3.0, "no steady-state gain; never pays off"),
        (None, INF, NAN, "no steady-state gain; never pays off"),
        (None, NAN, NAN, "pay-off unknown (no cold first call)"),
    ],
)
def test_payoff_text(verdict, calls, ahead, expected):
    assert f.payoff_text(verdict, calls, ahead) == expected


def test_payoff_text_names_the_baseline_that_wins():
    assert f.payoff_text("slower", NAN, 2.0, "numpy") == "ahead for the first 2 calls only, then numpy wins"


@pytest.mark.parametrize(
    ("verdict", "calls", "ahead", "expected"),
    [
        ("faster", 1.0, NAN, "ahead from call 1"),
        ("faster", 0.5, NAN, "ahead from call 1"),
        ("faster", 2.0, NAN, "pays off at call 2"),
        ("faster", 15.0, NAN, "pays off at call 15"),
        ("faster", INF, NAN, "never pays off"),
        ("faster", NAN, 3.0, "never pays off"),
        ("slower", NAN, 1.0, "ahead until call 1"),
        ("slower", 2.0, 3.0, "ahead until call 3"),
        ("slower", NAN, 0.5, "never pays off"),
        ("slower", INF, NAN, "never pays off"),
        ("slower", NAN, NAN, "pay-off unknown"),
        ("no significant difference", 1.0, 3.0, "first call cheaper"),
        ("no significant difference", INF, NAN, "never pays off"),
        ("no significant difference", 2.0, NAN, "never pays off"),  # only a break-even at call 1 is a cheaper call
        ("slower", 1.0, 3.0, "ahead until call 3"),  # as payoff_text: a slower mode's words come from ahead alone
        ("slower", 1.0, NAN, "never pays off"),
        (None, NAN, NAN, "pay-off unknown"),
    ],
)
def test_payoff_words(verdict, calls, ahead, expected):
    assert f.payoff_words(verdict, calls, ahead) == expected


@pytest.mark.parametrize(("value", "expected"), [(2, 0.5), ("4", 0.25), (0, INF), (0.0, INF), (INF, 0.0)])
def test_reciprocal(value, expected):
    assert f.reciprocal(value) == expected


def test_reciprocal_of_a_missing_value_is_nan():
    assert math.isnan(f.reciprocal(None)) and math.isnan(f.reciprocal(pd.NA))


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.5, True), ("2", True), (None, False), (NAN, False), (INF, False), (0, False), (-1, False)],
)
def test_usable_ratio(value, expected):
    assert f.usable_ratio(value) is expected


def test_speedup_as_time_ratio_inverts_the_figure_and_swaps_the_bounds():
    assert f.speedup_as_time_ratio(2.0, 1.0, 4.0) == (0.5, 0.25, 1.0)
    ratio, lo, hi = f.speedup_as_time_ratio(2.0)
    assert ratio == 0.5 and math.isnan(lo) and math.isnan(hi)


def test_oriented_reads_a_time_ratio_below_one_as_faster():
    assert f.oriented(0.5, 0.4, 0.625) == (2.0, "faster", 1.6, 2.5)
    assert f.oriented("0.5", "0.4", "0.625") == (2.0, "faster", 1.6, 2.5)
    assert f.oriented(2.0, 1.5, 2.5) == (2.0, "slower", 1.5, 2.5)
    assert f.oriented(1, 0.5, 2) == (1.0, "slower", 0.5, 2.0)
    n, word, lo, hi = f.oriented(0.5)
    assert (n, word) == (2.0, "faster") and math.isnan(lo) and math.isnan(hi)
    n, word, lo, hi = f.oriented(2.0, pd.NA, None)
    assert (n, word) == (2.0, "slower") and math.isnan(lo) and math.isnan(hi)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((0.5, 0.4, 0.625), ("2x faster", "1.6x-2.5x")),
        ((2.0, 1.5, 2.5), ("2x slower", "1.5x-2.5x")),
        ((2.0, 1.5, INF), ("2x slower", "1.5x-inf")),
        ((0.5, 0.0, 0.625), ("2x faster", "1.6x-inf")),
        ((1.0004, 0.99, 1.01), ("as fast", "0.99x-1.01x")),
        ((0.9996, 0.99, 1.01), ("as fast", "0.99x-1.01x")),
        ((0.5,), ("2x faster", "-")),
        ((0.5, 0.4, None), ("2x faster", "-")),
        ((0.5, None, 0.625), ("2x faster", "-")),
    ],
)
def test_ratio_words(args, expected):
    assert f.ratio_words(*args) == expected


def test_compared():
    assert f.compared("jit", "as fast", "eager") == "jit as fast as eager"
    assert f.compared("jit", "2x faster", "eager") == "jit 2x faster than eager"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((0.5, 0.4, 0.625), "2x faster (95% CI 1.6x-2.5x)"),
        ((2.0, 1.5, 2.5), "2x slower (95% CI 1.5x-2.5x)"),
        ((0.5,), "2x faster"),
        ((NAN, 0.4, 0.625), "-"),
        ((0, 0.4, 0.625), "-"),
        ((INF,), "-"),
        ((None,), "-"),
    ],
)
def test_ratio_cell(args, expected):
    assert f.ratio_cell(*args) == expected


@pytest.mark.parametrize(
    ("verdict", "p", "alpha", "expected"),
    [
        ("no significant change", 0.01, 0.05, True),
        ("no significant difference", 0.049, 0.05, True),
        ("no significant change", 0.05, 0.05, False),
        ("no significant change", 0.08, 0.1, True),
        ("no significant change", None, 0.05, False),
        ("no significant change", NAN, 0.05, False),
        ("faster", 0.01, 0.05, False),
        (None, 0.01, 0.05, False),
    ],
)
def test_within_threshold(verdict, p, alpha, expected):
    assert f.within_threshold(verdict, p, alpha) is expected


def test_verdict_words_uses_the_given_alpha_and_threshold():
    assert f.verdict_words("no significant change", 0.08, alpha=0.1) == "within the 5% threshold"
    assert f.verdict_words("no significant change", 0.08) == "no significant change"
    assert f.verdict_words(None, 0.01) == ""


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((NAN, None, None, "cannot tell (1 process pair)"), {}, "after jit vs before: cannot tell (1 process pair)"),
        ((NAN, None, None, None), {}, "after jit vs before: -"),
        ((0, 1, 2, "slower"), {}, "after jit vs before: slower"),
        (
            (0.5, 0.4, 0.625, "cannot tell (2 processes)", 0.3),
            {},
            "after jit 2x faster than before: cannot tell (2 processes)",
        ),
        ((0.5, 0.4, 0.625, "faster", 0.031), {}, "after jit 2x faster than before (95% CI 1.6x-2.5x, p=0.031)"),
        ((2.0, 1.5, 2.5, "slower"), {}, "after jit 2x slower than before (95% CI 1.5x-2.5x)"),
        ((2.0, 1.5, 2.5, "slower", NAN), {}, "after jit 2x slower than before (95% CI 1.5x-2.5x)"),
        ((2.0, None, None, "slower", 1e-6), {}, "after jit 2x slower than before (95% CI -, p=<0.0001)"),
        (
            (1.05, 1.02, 1.1, "no significant change", 0.08),
            {"threshold": 0.1, "alpha": 0.1},
            "after jit 1.05x slower than before, within the 10% threshold (95% CI 1.02x-1.1x, p=0.08)",
        ),
        (
            (1.05, 1.02, 1.1, "no significant change", 0.08),
            {},
            "after jit 1.05x slower than before: no significant change (95% CI 1.02x-1.1x, p=0.08)",
        ),
        ((1.0, 0.9, 1.1, None), {}, "after jit as fast as before: - (95% CI 0.9x-1.1x)"),
    ],
)
def test_change_phrase(args, kwargs, expected):
    assert f.change_phrase("after jit", "before", *args, **kwargs) == expected


@pytest.mark.parametrize(
    ("speedup", "verdict", "expected"),
    [
        (NAN, "cannot tell (1 process)", "jit vs eager: cannot tell (1 process)"),
        (0.0, "slower", "jit vs eager: slower"),
        (INF, None, "jit vs eager: -"),
        (2.0, "faster", "jit 2x faster than eager (95% CI 1.6x-2.5x)"),
    ],
)
def test_speedup_phrase(speedup, verdict, expected):
    assert f.speedup_phrase("jit", "eager", speedup, 1.6, 2.5, verdict) == expected


def test_a_ci_of_one_processs_rounds_says_so_in_its_parentheses():
    # timing=quick: the CI resamples one process's rounds; two quick runs of one job read 3.6x and 1.87x
    one = f.speedup_phrase("jit", "eager", 3.6, 3.17, 3.94, "faster", one_process=True)
    assert one == "jit 3.6x faster than eager (95% CI 3.17x-3.94x, 1 process)"
    same = f.speedup_phrase("jit", "eager", 1.02, 0.9, 1.1, "no significant difference", one_process=True)
    assert same.endswith(": no significant difference (95% CI 0.9x-1.1x, 1 process)")
    assert (
        f.speedup_phrase("jit", "eager", 3.6, 3.17, 3.94, "faster") == "jit 3.6x faster than eager (95% CI 3.17x-3.94x)"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a; b (robust cv; limit 10%); c", ["a", "b (robust cv; limit 10%)", "c"]),
        ("a;;  b ; ", ["a", "b"]),
        (" one ", ["one"]),
        ("", []),
        (None, []),
        (NAN, []),
    ],
)
def test_split_reasons(text, expected):
    assert f.split_reasons(text) == expected


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"mode": "jit"}, "jit"),
        ({"mode": "jit", "variant": "after"}, "after jit"),
        ({"mode": "jit", "env": "new"}, "new jit"),
        ({"mode": "jit", "variant": NAN, "env": "new"}, "new jit"),
        ({"mode": "jit", "variant": "after", "env": "new"}, "after jit"),
        ({"mode": "jit", "variant": NAN, "env": NAN}, "jit"),
    ],
)
def test_row_label(row, expected):
    assert f.row_label(row) == expected


def ab_row(**extra) -> dict:
    return {"mode": "jit", "variant": "after", "ab_baseline": "before", **extra}


def test_ab_phrase_without_a_ratio_or_a_verdict_is_a_dash():
    assert f.ab_phrase(ab_row()) == "after jit vs before: -"
    assert f.ab_phrase(ab_row(ab_steady_ratio=2.0)) == "after jit vs before: -"
    assert f.ab_phrase(ab_row(ab_steady_verdict="slower")) == "after jit vs before: -"


def test_ab_phrase_reads_the_metric_asked_for():
    row = ab_row(ab_steady_ratio=2.0, ab_steady_verdict="slower", ab_steady_ratio_ci_low=1.5)
    row.update(ab_steady_ratio_ci_high=2.5, ab_steady_p_value=0.001)
    row.update(ab_compile_ratio=0.5, ab_compile_verdict="faster", ab_compile_ratio_ci_low=0.4)
    row.update(ab_compile_ratio_ci_high=0.625, ab_compile_p_value=0.02)
    assert f.ab_phrase(row) == "after jit 2x slower than before (95% CI 1.5x-2.5x, p=0.001)"
    assert f.ab_phrase(row, "compile") == "after jit 2x faster than before (95% CI 1.6x-2.5x, p=0.02)"


def test_unstable_clause_counts_reasons_and_names_the_unstable_modes():
    rows = [
        {"mode": "eager", "unstable": True, "unstable_reason": "load; spread 33% (robust cv; limit 10%)"},
        {"mode": "jit", "unstable": False, "unstable_reason": "ignored"},
        {"mode": "numpy", "unstable": NAN},
        {"mode": "jit", "variant": "b", "unstable": True, "unstable_reason": NAN},  # no reason text: one reason
    ]
    assert f.unstable_clause(rows) == "unstable (eager, b jit): 3 reasons, see results.csv unstable_reason"
    assert f.unstable_clause(rows[:1]) == "unstable (eager): 2 reasons, see results.csv unstable_reason"
    assert f.unstable_clause(rows[3:]) == "unstable (b jit): 1 reason, see results.csv unstable_reason"
    assert f.unstable_clause(rows[1:3]) == ""


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"mesh": "data=4"}, "mesh data=4"),
        ({"mesh": "data=4", "distributed_processes": None}, "mesh data=4"),
        ({"mesh": "data=4", "distributed_processes": NAN}, "mesh data=4"),
        ({"mesh": "data=4", "distributed_processes": 1}, "mesh data=4"),
        ({"mesh": "data=2", "distributed_processes": 2.0}, "mesh data=2 over 2 processes"),
        ({"mesh": NAN, "distributed_processes": 2}, ""),
        ({}, ""),
    ],
)
def test_mesh_text(row, expected):
    assert f.mesh_text(row) == expected


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"donate_argnums": "[0]", "compiler_options": "fast_math=true"}, "donate_argnums=[0] fast_math=true"),
        ({"donate_argnums": "[]", "compiler_options": "fast_math=true"}, "fast_math=true"),
        ({"donate_argnums": "[0]", "compiler_options": NAN}, "donate_argnums=[0]"),
        ({"donate_argnums": NAN}, ""),
        ({}, ""),
    ],
)
def test_knobs_text(row, expected):
    assert f.knobs_text(row) == expected


@pytest.mark.parametrize(
    ("shares", "expected"),
    [
        ({"device_peak_flops_share": 0.94, "device_peak_bytes_share": 0.2}, "5.88 ms, 94% of peak FLOP/s"),
        ({"device_peak_flops_share": 0.2, "device_peak_bytes_share": 0.5}, "5.88 ms, 50% of peak bytes/s"),
        ({"device_peak_bytes_share": 0.1}, "5.88 ms, 10% of peak bytes/s"),
        ({"device_peak_flops_share": 0.0123}, "5.88 ms, 1.2% of peak FLOP/s"),
        ({"device_peak_flops_share": 0.05}, "5.88 ms, 5% of peak FLOP/s"),
        ({"device_peak_flops_share": 1.234}, "5.88 ms, 123% of peak FLOP/s"),
        ({"device_peak_flops_share": NAN, "device_peak_bytes_share": None}, "5.88 ms"),
        ({}, "5.88 ms"),
    ],
)
def test_device_clause_names_the_larger_share_of_peak(shares, expected):
    assert f.device_clause({"device_s": 5.88e-3, **shares}) == expected


def test_device_clause_is_empty_without_device_time():
    assert f.device_clause({"device_peak_flops_share": 0.5}) == ""
    assert f.device_clause({"device_s": NAN, "device_peak_flops_share": 0.5}) == ""


def test_device_clause_names_the_traced_call_only_when_the_device_time_passes_the_median():
    row = {"device_s": 300e-6, "device_trace_wall_s": 310e-6, "device_peak_flops_share": 0.5}
    assert f.device_clause({**row, "median_s": 300e-6}) == "300 us, 50% of peak FLOP/s"  # equal: not above
    assert f.device_clause({**row, "median_s": 290e-6}) == "300 us of a 310 us traced call, 50% of peak FLOP/s"


def test_device_clause_reads_missing_ceiling_cells_from_a_csv_as_none():
    # results.csv read back: a row without above_ceiling or a ceiling's source has NaN there, not a string
    row = {"device_s": 5.88e-3, "device_peak_flops_share": 0.5, "above_ceiling": NAN, "flops_ceiling": NAN}
    assert f.device_clause({**row, "platform": "cpu"}) == "5.88 ms, 50% of peak FLOP/s"
    assert f.device_clause({**row, "above_ceiling": ""}) == "5.88 ms, 50% of peak FLOP/s"


def test_device_clause_gives_the_first_of_the_above_ceiling_reasons():
    row = {"device_s": 18e-6, "above_ceiling": "bytes/s in cache, above the memory ceiling; flops/s above the probe"}
    assert f.device_clause(row) == "18 us, bytes/s in cache, above the memory ceiling"


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            {"job_wall_s": 31.2, "job_open_s": 9.8, "job_compile_s": 1.2},
            "31.2 s: open 9.8 s, compiling 1.2 s, the rest 20.2 s",
        ),
        ({"job_wall_s": 31.2}, "31.2 s: open 0 s, compiling 0 s, the rest 31.2 s"),
        (
            {"job_wall_s": 2.0, "job_open_s": NAN, "job_compile_s": None},
            "2 s: open 0 s, compiling 0 s, the rest 2 s",
        ),
        (
            {"job_wall_s": 2.0, "job_open_s": None, "job_compile_s": NAN},
            "2 s: open 0 s, compiling 0 s, the rest 2 s",
        ),
        ({"job_wall_s": 2.0, "job_open_s": 1.5}, "2 s: open 1.5 s, compiling 0 s, the rest 500 ms"),
        (
            {"job_wall_s": 1.0, "job_open_s": 0.8, "job_compile_s": 0.5},
            "1 s: open 800 ms, compiling 500 ms, the rest 0 s",
        ),
        (  # the parts, largest first, until less than a tenth is left unnamed
            {
                "job_wall_s": 10.0,
                "job_open_s": 3.0,
                "job_sampling_s": 4.0,
                "job_exit_s": 1.5,
                "job_peaks_s": 0.9,
                "job_driver_s": 0.6,
                "job_compile_s": 9.0,
            },
            "10 s: sampling 4 s, open 3 s, exit 1.5 s, peaks 900 ms, other 600 ms",
        ),
        (
            {"job_wall_s": 10.0, "job_sampling_s": 8.5, "job_first_calls_s": 1.5, "job_warmup_s": 0.0},
            "10 s: sampling 8.5 s, first calls 1.5 s",
        ),
        (
            {"job_wall_s": 10.0, "job_sampling_s": 9.5, "job_open_s": NAN},
            "10 s: sampling 9.5 s, other 500 ms",
        ),
        (  # a tenth left exactly: not under a tenth, so the next part is named too
            {"job_wall_s": 10.0, "job_sampling_s": 9.0, "job_open_s": 1.0},
            "10 s: sampling 9 s, open 1 s",
        ),
        (  # a part of no time ends the list, whatever is left
            {"job_wall_s": 10.0, "job_sampling_s": 5.0, "job_warmup_s": 0.0},
            "10 s: sampling 5 s, other 5 s",
        ),
        ({"job_wall_s": 0.0015, "job_sampling_s": 0.001}, "1.5 ms: sampling 1 ms"),  # 500 us left: not above it
        ({"job_wall_s": NAN, "job_open_s": 1.0}, ""),
        ({"job_wall_s": None}, ""),
        ({}, ""),
    ],
)
def test_split_text(row, expected):
    assert f.split_text(row) == expected


def test_failure_text_gives_the_phase_the_error_and_the_hint():
    row = {"mode": "jit", "variant": "b", "error_phase": "trace", "error_type": "TypeError", "error_message": "bad"}
    assert f.failure_text(row) == "b jit failed in trace: TypeError: bad"
    assert f.failure_text({**row, "hint": ""}) == "b jit failed in trace: TypeError: bad"
    assert f.failure_text({**row, "hint": "mark n static"}) == (
        "b jit failed in trace: TypeError: bad (hint: mark n static)"
    )


def test_not_work_text_says_each_time_that_is_no_speedup_once():
    # a failed row first (skipped, the rows after it still read), then a verdict whose reason the row's columns
    # cannot give (a CSV from before matches_eager): the verdict itself, against the row's baseline
    failed = {"mode": "numpy", "status": "error", "verdict": "result differs"}
    jit = {"mode": "jit", "status": "ok", "baseline_mode": "eager", "verdict": "result differs"}
    assert f.not_work_text([failed, jit]) == "jit vs eager: result differs; "
    assert f.not_work_text([failed, jit, {**jit, "variant": "b"}, jit]) == (
        "jit vs eager: result differs; b jit vs eager: result differs; "
    )
    assert f.not_work_text([{**jit, "verdict": "faster"}]) == ""


def test_not_work_text_leaves_the_baseline_s_numpy_verdict_to_the_numpy_row():
    # jit is the baseline (no eager): its own comparison with numpy is the numpy row's verdict, said once
    jit = {"mode": "jit", "status": "ok", "baseline_mode": "jit", "verdict_vs_numpy": "result differs"}
    jit.update(matches_numpy=False, max_rel_err_vs_numpy=1.31)
    numpy = {"mode": "numpy", "status": "ok", "baseline_mode": "jit", "verdict": "result differs"}
    numpy.update(matches_jit=False, max_rel_err_vs_jit=1.31)
    assert f.not_work_text([jit, numpy]) == "numpy differs from jit: relative error 1.31; "


# ---- the job's one line ------------------------------------------------------------------


def timed(mode: str, median_s: float, half: float, **extra) -> dict:
    """An ok row of workload w at size 8 whose CI is median_s * (1 -/+ half)."""
    row = dict(workload="w", size=8, mode=mode, status="ok", median_s=median_s)
    return {**row, "ci95_low_s": median_s * (1 - half), "ci95_high_s": median_s * (1 + half), **extra}


def vs(baseline: str, speedup: float, lo: float, hi: float, verdict: str, **extra) -> dict:
    return dict(baseline_mode=baseline, speedup=speedup, speedup_ci_low=lo, speedup_ci_high=hi, verdict=verdict) | extra


def test_job_summary_of_eager_numpy_and_jit_in_full():
    common = dict(param_n=2.0, param_k="x", dtype="float32", platform="cpu", n_processes=6)
    common.update(job_wall_s=31.2, job_open_s=9.8, job_compile_s=1.2)
    numpy_cols = dict(speedup_vs_numpy=4.0, speedup_vs_numpy_ci_low=3.2, speedup_vs_numpy_ci_high=5.0)
    rows = [
        # eager is the baseline: its own speedup over numpy is the numpy row's verdict, not repeated
        timed("eager", 2e-3, 0.05, **common, speedup=NAN, **{**numpy_cols, "speedup_vs_numpy": 2.0}),
        timed("numpy", 4e-3, 0.1, **common, **vs("eager", 0.5, 0.4, 0.625, "slower", compile_s=0.1)),
        timed(
            "jit",
            1e-3,
            0.02,
            **common,
            **vs("eager", 2.0, 1.6, 2.5, "faster", compile_s=0.03, cache_cold_compile_s=0.12),
            break_even_calls=15.0,
            ahead_until_calls=NAN,
            explanation="fusion-bound",
            **numpy_cols,
            verdict_vs_numpy="faster",
        ),
    ]
    assert f.job_summary(rows) == (
        "w n=2 k=x size=8 float32 cpu: eager 2 ms (95% CI \u00b15%), numpy 4 ms (95% CI \u00b110%), jit 1 ms (95% CI \u00b12%)"
        " -> numpy 2x slower than eager (95% CI 1.6x-2.5x)"
        "; jit 2x faster than eager (95% CI 1.6x-2.5x), fusion-bound, compile 30 ms with the disk cache"
        " (120 ms without), pays off after 15 calls"
        "; jit 4x faster than numpy (95% CI 3.2x-5x)"
        " [6 processes; 31.2 s: open 9.8 s, compiling 1.2 s, the rest 20.2 s]"
    )


def test_job_summary_of_a_slower_jit_against_a_numpy_baseline():
    rows = [
        timed("numpy", 4e-3, 0.1, dtype="float32", device_kind="TPU v5 lite", platform="tpu"),
        timed(
            "jit",
            8e-3,
            0.05,
            dtype="float32",
            device_kind="TPU v5 lite",
            platform="tpu",
            **vs("numpy", 0.5, 0.4, 0.625, "slower", compile_s=0.05, cache_cold_compile_s=NAN),
            break_even_calls=NAN,
            ahead_until_calls=3.0,
        ),
    ]
    assert f.job_summary(rows) == (
        "w size=8 float32 TPU v5 lite: numpy 4 ms (95% CI \u00b110%), jit 8 ms (95% CI \u00b15%)"
        " -> jit 2x slower than numpy (95% CI 1.6x-2.5x), compile 50 ms, ahead for the first 3 calls only,"
        " then numpy wins"
    )


def test_job_summary_without_compile_time_device_or_processes():
    rows = [
        timed("eager", 2e-3, 0.05),
        timed("jit", 1e-3, 0.02, **vs("eager", 2.0, 1.6, 2.5, "faster"), break_even_calls=1.0, explanation=NAN)
        | dict(ahead_until_calls=NAN, compile_s=0.0),
    ]
    assert f.job_summary(rows) == (
        "w size=8: eager 2 ms (95% CI \u00b15%), jit 1 ms (95% CI \u00b12%) -> jit 2x faster than eager (95% CI 1.6x-2.5x),"
        " ahead from the first call"
    )
    assert f.job_summary(rows[:1]) == "w size=8: eager 2 ms (95% CI \u00b15%)"


def test_job_summary_keeps_going_after_a_failed_mode():
    failed = dict(workload="v", size=8, mode="eager", status="error", error_phase="trace", error_type="TypeError")
    failed.update(error_message="bad", hint="mark n static")
    jit = timed("jit", 1e-3, 0.02, baseline_mode="jit", speedup=NAN, n_processes=1)
    # the baseline's own comparison with numpy is the numpy row's, said once
    jit.update(speedup_vs_numpy=4.0, speedup_vs_numpy_ci_low=3.2, speedup_vs_numpy_ci_high=5.0)
    jit["verdict_vs_numpy"] = "faster"
    numpy = timed("numpy", 4e-3, 0.1, **vs("jit", 0.25, 0.2, 0.3125, "slower"), n_processes=NAN)
    assert f.job_summary([jit, failed, numpy]) == (
        "w/v size=8: jit 1 ms (95% CI \u00b12%), eager failed in trace: TypeError: bad (hint: mark n static),"
        " numpy 4 ms (95% CI \u00b110%) -> numpy 4x slower than jit (95% CI 3.2x-5x) [1 process]"
    )


def test_job_summary_of_envs_compares_each_with_the_baseline_env():
    old = timed("jit", 1e-3, 0.02, env="old", device_kind="cpu", n_processes=4)
    new = timed("jit", 2e-3, 0.02, env="new", device_kind="cpu", n_processes=4, ab_baseline="old")
    new.update(ab_steady_ratio=2.0, ab_steady_ratio_ci_low=1.5, ab_steady_ratio_ci_high=2.5)
    new.update(ab_steady_p_value=0.001, ab_steady_verdict="slower")
    assert f.job_summary([old, new]) == (
        "w size=8 cpu: old jit 1 ms (95% CI \u00b12%), new jit 2 ms (95% CI \u00b12%)"
        " -> new jit 2x slower than old (95% CI 1.5x-2.5x, p=0.001) [4 processes per env]"
    )
    separate = [{**r, "interleave": "processes"} for r in (old, new)]
    assert f.job_summary(separate).endswith(" [4 processes per mode, each mode in processes of its own]")


def test_job_summary_says_when_each_mode_ran_in_processes_of_its_own():
    rows = [timed("eager", 2e-3, 0.05, n_processes=3, interleave="rounds"), timed("jit", 1e-3, 0.02, n_processes=3)]
    assert f.job_summary(rows) == "w size=8: eager 2 ms (95% CI \u00b15%), jit 1 ms (95% CI \u00b12%) [3 processes]"
    rows[1]["interleave"] = "processes"
    assert f.job_summary(rows) == (
        "w size=8: eager 2 ms (95% CI \u00b15%), jit 1 ms (95% CI \u00b12%) [3 processes per mode, each mode in processes of its own]"
    )


def test_job_summary_puts_the_processes_and_the_instability_in_one_bracket():
    rows = [timed("eager", 2e-3, 0.05, n_processes=3, unstable=True, unstable_reason="load average 2.6 above 2 CPU(s)")]
    assert f.job_summary(rows) == (
        "w size=8: eager 2 ms (95% CI \u00b15%) [3 processes; unstable (eager): 1 reason, see results.csv unstable_reason]"
    )
