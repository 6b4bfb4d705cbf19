"""The tune sweeper's pure logic (analysis/tune.py, config/tune.py) and its search space (engine/tune_space.py):
objective extraction, the tie rule, the Pareto front, the confirmation's verdict, the resume bookkeeping."""

from __future__ import annotations

import math

import pytest

from jitexp.analysis.tune import (
    COMPLETE,
    FAILED,
    NO_BETTER,
    REPEAT,
    RUNNING,
    Estimate,
    TrialRecord,
    confirmed_ratio,
    estimate,
    failure_kind,
    grid_size,
    params_label,
    pareto_front,
    repeat_of,
    resume_plan,
    runoff_contenders,
    runoff_pick,
    tied,
    trial_outcome,
    unsettled,
    verdict,
)
from jitexp.config.tune import Objective, baseline_overrides, parse_objectives
from jitexp.errors import ConfigError

STEADY = Objective("steady")


def jit_row(median=2e-3, low=1.9e-3, high=2.1e-3, **extra):
    return {
        "mode": "jit",
        "status": "ok",
        "median_s": median,
        "ci95_low_s": low,
        "ci95_high_s": high,
        "first_call_s": 0.5,
        "first_call_ci95_low_s": 0.4,
        "first_call_ci95_high_s": 0.6,
        "compile_s": 0.3,
        **extra,
    }


# ---- objectives -------------------------------------------------------------------------------


def test_objectives_parse_one_or_two_and_refuse_others_in_one_line():
    assert parse_objectives("steady") == [Objective("steady")]
    assert parse_objectives("time_for_calls=100") == [Objective("time_for_calls", 100)]
    assert parse_objectives(["steady", "compile"]) == [Objective("steady"), Objective("compile")]
    for bad in (
        "fast",
        "time_for_calls=0",
        "time_for_calls=N",
        ["steady", "steady"],
        ["steady", "compile", "first_call"],
    ):
        with pytest.raises(ConfigError) as caught:
            parse_objectives(bad)
        assert str(caught.value).startswith("tune.objective")


def test_the_objective_is_read_from_the_jit_row_not_eagers():
    rows = [{**jit_row(median=9.0, low=8.0, high=10.0), "mode": "eager"}, jit_row()]
    outcome = trial_outcome(rows, [STEADY])
    assert outcome.ok and outcome.estimates == (Estimate(2e-3, 1.9e-3, 2.1e-3),)


def test_time_for_calls_is_the_first_call_and_n_steady_calls_with_summed_bounds():
    e = estimate(jit_row(), Objective("time_for_calls", 10))
    assert e is not None
    assert (e.value, e.low, e.high) == pytest.approx((0.5 + 10 * 2e-3, 0.4 + 10 * 1.9e-3, 0.6 + 10 * 2.1e-3))


def test_times_per_example_and_memory_per_call():
    e = estimate(jit_row(), STEADY, examples=4)
    assert e is not None and e.value == pytest.approx(5e-4)
    m = estimate(jit_row(device_peak_bytes=None, peak_memory_bytes=1024), Objective("device_memory"), examples=4)
    assert m == Estimate(1024.0, 1024.0, 1024.0)  # memory is the program's, not per example


@pytest.mark.parametrize(
    ("row", "kind"),
    [
        ({"error_phase": "compile", "error_type": "XlaRuntimeError", "error_message": "bad flag"}, "compile error"),
        (
            {"error_phase": "execute", "error_type": "XlaRuntimeError", "error_message": "RESOURCE_EXHAUSTED: 2 GiB"},
            "out of memory",
        ),
        (
            {"error_phase": "execute", "error_type": "TimeoutError", "error_message": "worker timed out after 600 s"},
            "timeout",
        ),
        ({"error_phase": "config", "error_type": "ConfigError", "error_message": "size"}, "config error"),
        ({"error_phase": "execute", "error_type": "ValueError", "error_message": "x"}, "error in execute"),
    ],
)
def test_a_failed_row_is_a_failed_trial_with_its_kind_and_message(row, kind):
    assert failure_kind(row) == kind
    outcome = trial_outcome([{"mode": "jit", "status": "error", **row}], [STEADY])
    assert not outcome.ok and outcome.reason.startswith(kind) and str(row["error_message"]) in outcome.reason


def test_a_result_that_differs_from_eager_fails_the_trial():
    outcome = trial_outcome([jit_row(matches_eager=False, max_rel_err_vs_eager=0.03)], [STEADY])
    assert not outcome.ok and outcome.reason == "result differs from eager beyond tolerance (max relative error 0.03)"
    assert trial_outcome([jit_row(matches_eager=True)], [STEADY]).ok


def test_a_row_without_the_objective_fails_the_trial_naming_it():
    outcome = trial_outcome([jit_row(device_peak_bytes=None)], [STEADY, Objective("device_memory")])
    assert outcome.reason == "the job gave no device_memory"
    assert trial_outcome([], [STEADY]).reason.startswith("no rows")


# ---- ties and the front -------------------------------------------------------------------------


def test_trials_whose_interval_overlaps_the_bests_are_tied():
    best = Estimate(1.0, 0.9, 1.1)
    estimates = [Estimate(1.2, 1.05, 1.3), best, Estimate(1.5, 1.2, 1.8), None, Estimate(1.1, 1.1, 1.1)]
    assert tied(estimates) == [True, True, False, False, True]
    assert tied([None, None]) == [False, False]


def test_the_pareto_front_keeps_the_trials_nothing_dominates():
    points = [[1.0, 5.0], [2.0, 2.0], [3.0, 3.0], None, [1.0, 6.0], [4.0, 1.0]]
    assert pareto_front(points) == [0, 1, 5]


# ---- the runoff --------------------------------------------------------------------------------


def narrow(value: float) -> Estimate:
    return Estimate(value, 0.97 * value, 1.03 * value)


def test_an_interval_wider_than_a_quarter_of_its_value_is_unsettled():
    assert unsettled(Estimate(4.21, 2.43, 4.44)) and not unsettled(Estimate(3.19, 2.96, 3.44))
    assert not unsettled(Estimate(0.0, 0.0, 0.0))


def test_the_runoff_takes_the_leader_its_ties_its_runners_up_then_the_unsettled():
    # planted_7 of the loaded run: k=7 (the fastest) read 421 us in a burst and ranked 7th of 8
    estimates = [
        Estimate(319, 296, 344),  # 0: settled, clear of the leader
        Estimate(119, 118, 139),  # 1: the leader
        Estimate(445, 259, 824),  # 2: unsettled
        narrow(209),  # 3
        Estimate(136, 127, 151),  # 4: tied with the leader
        Estimate(421, 243, 444),  # 5: k=7, unsettled
        narrow(263),  # 6
        narrow(174),  # 7: a runner-up by value
        None,  # a failed trial
    ]
    assert runoff_contenders(estimates, 6) == [1, 4, 7, 5, 2]  # the leader, then the lowest low ends first
    assert runoff_contenders(estimates, 3) == [1, 4, 7]  # the cap keeps those that may be fastest
    assert runoff_contenders(estimates, 0) == [] and runoff_contenders(estimates, 1) == []


def test_a_leader_whose_wide_interval_ties_every_trial_keeps_those_that_may_be_fastest_under_the_cap():
    # planted_8 of the first runoff run: the leader k=6 read 142 us (95% CI 135-1146) and tied all seven others;
    # k=7 (the fastest) read 544 us (97-876): by value it was 6th of the tied, by its low end the first
    estimates = [
        Estimate(173, 166, 191),  # 0: k=9
        Estimate(244, 208, 399),  # 1: k=10
        Estimate(180, 170, 472),  # 2: k=5
        Estimate(753, 333, 949),  # 3: k=3
        Estimate(477, 391, 483),  # 4: k=1
        Estimate(544, 97, 876),  # 5: k=7
        Estimate(142, 135, 1146),  # 6: k=6, the leader
        Estimate(207, 202, 212),  # 7: k=4
    ]
    assert runoff_contenders(estimates, 6) == [6, 5, 0, 2, 7, 1]


def test_no_runoff_with_fewer_than_two_trials_that_measured():
    assert runoff_contenders([narrow(1.0), None, None], 6) == []
    assert runoff_contenders([None, None], 6) == []
    assert runoff_contenders([narrow(1.0), narrow(5.0)], 6) == [0, 1]  # a runner-up however clear


def test_the_runoff_names_the_fastest_measured_again_and_the_ties_by_its_intervals():
    found = runoff_pick([1, 4, 5], [narrow(120), Estimate(118, 110, 125), narrow(80)])
    assert found is not None and found.best == 5 and found.tied == (5,)
    assert found.estimates[4] == Estimate(118, 110, 125)
    close = runoff_pick([1, 4], [Estimate(100, 95, 110), Estimate(104, 99, 112)])
    assert close is not None and close.best == 1 and close.tied == (1, 4)  # no setting significantly faster: tied


def test_a_contender_that_fails_in_the_runoff_is_out_and_none_left_is_no_answer():
    found = runoff_pick([1, 4], [None, narrow(130)])
    assert found is not None and found.best == 4 and set(found.estimates) == {4}
    assert runoff_pick([1, 4], [None, None]) is None


# ---- the confirmation ----------------------------------------------------------------------------


def test_the_verdict_says_faster_only_when_the_whole_interval_is_above_one():
    yes = verdict("unroll=4 batch=64", 1.31, 1.25, 1.37)
    assert yes.faster and yes.line == "best: unroll=4 batch=64: 1.31x faster than the baseline (95% CI 1.25x-1.37x)"
    no = verdict("unroll=4", 1.02, 0.97, 1.08)
    assert not no.faster and no.line.startswith(NO_BETTER)
    assert verdict("unroll=1", None, None, None, same=True).line.startswith(NO_BETTER)
    assert not verdict("unroll=4", None, None, None).faster


def test_the_confirmed_ratio_inverts_the_paired_change_and_scales_per_example():
    best = {"ab_steady_ratio": 0.5, "ab_steady_ratio_ci_low": 0.4, "ab_steady_ratio_ci_high": 0.625}
    assert confirmed_ratio({}, best, STEADY) == pytest.approx((2.0, 1.6, 2.5))
    # the best holds twice the examples per call: per example it is twice as fast again
    assert confirmed_ratio({}, best, STEADY, (32, 64)) == pytest.approx((4.0, 3.2, 5.0))
    few = {"ab_steady_ratio": 0.5, "ab_steady_ratio_ci_low": 0.0, "ab_steady_ratio_ci_high": math.inf}
    ratio, low, high = confirmed_ratio({}, few, STEADY)
    assert (ratio, low, high) == (2.0, 0.0, math.inf) and not verdict("k=4", ratio, low, high).faster


def test_objectives_without_a_paired_column_compare_the_two_intervals():
    base, best = jit_row(), jit_row(median=1e-3, low=0.9e-3, high=1.1e-3)
    ratio, low, high = confirmed_ratio(base, best, Objective("time_for_calls", 0))
    assert (ratio, low, high) == pytest.approx((1.0, 0.4 / 0.6, 0.6 / 0.4))


# ---- resume --------------------------------------------------------------------------------------


def test_a_resumed_study_reruns_the_interrupted_trials_in_their_folders_then_asks_new_ones():
    records = [
        TrialRecord(0, {"k": 1}, COMPLETE, 0),
        TrialRecord(1, {"k": 2}, FAILED, 1),
        TrialRecord(2, {"k": 1}, REPEAT, None),
        TrialRecord(3, {"k": 4}, COMPLETE, 2),
        TrialRecord(4, {"k": 8}, RUNNING, 3),
    ]
    plan = resume_plan(records, trials=6)
    assert plan.measured == 3 and [r.job for r in plan.rerun] == [3] and plan.new == 2 and plan.next_job == 4
    done = resume_plan(records, trials=3)  # as many as asked already: the interrupted one is not run
    assert done.rerun == [] and done.new == 0
    assert resume_plan([], trials=5) == resume_plan([], 5) and resume_plan([], 5).new == 5


def test_a_proposal_of_a_measured_point_is_a_repeat_not_a_new_measurement():
    records = [TrialRecord(0, {"k": 1}, COMPLETE, 0), TrialRecord(1, {"k": 2}, RUNNING, 1)]
    assert repeat_of({"k": 1}, records) == records[0]
    assert repeat_of({"k": 2}, records) is None  # interrupted: measured again in its folder, not a repeat


def test_grid_size_and_labels():
    assert grid_size([4, 3]) == 12 and grid_size([4, None]) is None
    assert params_label({"workload.params.unroll": 4, "workload.params.batch": 64}) == "unroll=4 batch=64"
    assert params_label({"a.n": 1, "b.n": 2.5, "flag": True}) == "a.n=1 b.n=2.5 flag=true"


def test_baseline_overrides_from_a_mapping_or_a_list():
    assert baseline_overrides(None) == {}
    assert baseline_overrides({"workload": {"params": {"unroll": 1}}}) == {"workload.params.unroll": 1}
    assert baseline_overrides(["workload.params.unroll=1"]) == {"workload.params.unroll": "1"}
    with pytest.raises(ConfigError):
        baseline_overrides(["unroll"])


# ---- the search space (Hydra's parser) -------------------------------------------------------------


def test_the_search_space_reads_hydras_sweep_syntax():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from jitexp.engine.tune_space import override, quoted_params, read_space

    parser = OverridesParser.create()
    space = read_space(
        {"workload": {"params": {"unroll": "choice(1,2,4)"}}, "lr": "tag(log, interval(1e-3, 1))"},
        [
            "batch=int(interval(8,64))",
            "steps=range(1,9,2)",
            "workload.params.unroll=1",
            "+mode.compiler_options.x=true,false",
        ],
        parser,
    )
    dims = {d.key: d for d in space.dimensions}
    assert dims["workload.params.unroll"].choices == (1, 2, 4) and dims["workload.params.unroll"].size == 3
    assert dims["lr"].log and dims["lr"].size is None
    assert (dims["batch"].low, dims["batch"].high, dims["batch"].step) == (8, 64, 1)
    assert (dims["steps"].low, dims["steps"].high, dims["steps"].step, dims["steps"].size) == (1, 7, 2, 4)
    assert space.fixed == ("workload.params.unroll=1",)  # the baseline's value; the key is still searched
    assert override(dims["mode.compiler_options.x"], False) == "+mode.compiler_options.x=false"
    with pytest.raises(ConfigError):
        read_space({}, ["size=64"], parser)
    assert quoted_params(["hydra.sweeper.params.a.b=choice(1,2)", "x=1"]) == [
        "++hydra.sweeper.params.a.b='choice(1,2)'",
        "x=1",
    ]


def test_a_list_is_a_searched_value_through_its_text():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from jitexp.engine.tune_space import encode, override, read_space

    space = read_space({}, ["mode.donate_argnums=choice([],[0,1])"], OverridesParser.create())
    [d] = space.dimensions
    assert [encode(v) for v in d.choices or ()] == ["[]", "[0,1]"]  # what Optuna's categorical holds
    assert d.decode("[0,1]") == [0, 1] and d.decode("[]") == []
    assert override(d, d.decode("[0,1]")) == "mode.donate_argnums=[0,1]"


def test_the_variants_override_holds_each_side_as_hydra_reads_it_back():
    from jitexp.engine.tune_space import variants_text

    named = {"t1": {"workload.params.k": 7, "mode.donate_argnums": [0, 1]}, "t3": {"workload.params.k": 3, "x": "a b"}}
    assert (
        variants_text(named) == "{t1:{workload.params.k:7,mode.donate_argnums:[0,1]},t3:{workload.params.k:3,x:'a b'}}"
    )


def test_the_per_call_note_only_where_the_sides_hold_other_numbers_of_examples():
    from jitexp.analysis.tune import per_call_note

    assert per_call_note((8.0, 64.0)).endswith(
        "a call of the baseline holds 8 examples, the best's 64: the verdict below is per example"
    )
    assert per_call_note((8.0, 8.0)) == per_call_note((None, 64.0)) == per_call_note((8.0, None)) == ""


def test_the_trials_table_shows_the_runoffs_figure_where_it_ran():
    import pandas as pd

    from jitexp.report.shared.tune import trials_view

    trials = pd.DataFrame(
        {
            "trial": [1, 2, 3],
            "param_workload.params.k": [2, 4, 8],
            "objective_0": "steady",
            "value_0": [3e-4, 1e-4, 2e-4],
            "ci_low_0": [2.9e-4, 0.9e-4, 1e-4],
            "ci_high_0": [3.1e-4, 1.1e-4, 5e-4],
            "runoff_0": [None, 1.2e-4, 1.3e-4],
            "runoff_ci_low_0": [None, 1.1e-4, 1.25e-4],
            "runoff_ci_high_0": [None, 1.3e-4, 1.35e-4],
            "best": [False, True, False],
            "tied": [False, True, False],
        }
    )
    view = trials_view(trials)
    assert list(view["runoff"]) == ["", "120 us (95% CI 110 us-130 us)", "130 us (95% CI 125 us-135 us)"]
    assert "runoff" not in trials_view(trials.drop(columns=["runoff_0"])).columns
