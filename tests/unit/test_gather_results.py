"""Gathering is lossless: every job CSV cell comes back exactly, through gather and load_results."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import examples
from jitexp.store.csvio import read_text, to_frame, write_csv
from jitexp.store.folders import CALLS_CSV, RESULTS_CSV, SAMPLES_CSV, gather, iter_jobs, load_results

# Any text a CSV can hold: no NUL (C strings) and no lone surrogates (not UTF-8).
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=12)
NASTY = st.sampled_from(
    [
        "NA",
        "N/A",
        "None",
        "null",
        "nan",
        "NaN",
        "-nan",
        "#N/A",
        "007",
        "1e3",
        "True",
        " ",
        "a,b",
        'say "hi"',
        "line\nbreak",
        "cr\rlf",
        "tab\there",
        "é€😀",
        "-0",
        "0x1F",
    ]
)
WORDS = st.one_of(TEXT, NASTY)


def _reads_as_number_or_bool(text: str) -> bool:
    for kind, show in ((int, str), (float, repr)):
        try:
            value = kind(text)
        except ValueError:
            continue
        if show(value) == text and value == value and abs(value) != float("inf"):
            return True
    return text in ("True", "False")


# A param column is typed by its cells: one whose cells all read back as numbers is numeric (by design).
LABELS = WORDS.filter(lambda t: not _reads_as_number_or_bool(t))
ROW = st.fixed_dictionaries(
    {
        "workload": WORDS,
        "mode": WORDS,
        "error_message": WORDS,
        "hint": WORDS,
        "overrides": WORDS,
        "param_label": LABELS,
        "size": st.integers(1, 10**9),
        "job_num": st.integers(0, 10**6),
        "median_s": st.floats(1e-9, 1e3, allow_nan=False),
        "n_processes": st.one_of(st.none(), st.integers(1, 40)),
    }
)


# 10 examples of up to 12 rows a plain run, 25 under --hypothesis-profile=thorough (~65 ms an example: pandas writes,
# gathers and reads back; 60 examples were a fifth of the unit layer's time): docs/decisions.md, issue 60
@settings(max_examples=examples(10, 25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(jobs=st.lists(st.lists(ROW, min_size=1, max_size=3), min_size=1, max_size=4))
def test_job_csvs_round_trip_through_gather_and_load_results(tmp_path_factory, jobs):
    root = tmp_path_factory.mktemp("sweep")
    for num, rows in enumerate(jobs):
        write_csv(to_frame(rows), root / str(num) / RESULTS_CSV)
    written = pd.concat([read_text(root / str(n) / RESULTS_CSV) for n in range(len(jobs))], ignore_index=True)
    loaded = load_results(root)  # a sweep folder is gathered afresh: root/results.csv written, then typed
    gathered = read_text(root / RESULTS_CSV)
    for column in written.columns:
        assert gathered[column].tolist() == written[column].tolist(), column  # cell for cell
    flat = [row for rows in jobs for row in rows]
    for column in ("workload", "mode", "error_message", "hint", "overrides", "param_label"):
        assert loaded[column].tolist() == [r[column] for r in flat], column  # text stays text
    assert loaded["size"].dtype == "Int64" and loaded["size"].tolist() == [r["size"] for r in flat]
    assert loaded["job_num"].tolist() == [r["job_num"] for r in flat]
    assert [None if pd.isna(v) else int(v) for v in loaded["n_processes"]] == [r["n_processes"] for r in flat]
    assert loaded["median_s"].tolist() == [r["median_s"] for r in flat]


def test_a_param_keeps_its_type(tmp_path: Path):
    rows = [
        {"workload": "w", "param_n": 3, "param_t": 5.0, "param_code": "007", "param_flag": True},
        {"workload": "w", "param_n": 4, "param_t": 10.5, "param_code": "010", "param_flag": False},
    ]
    write_csv(to_frame(rows), tmp_path / "0" / RESULTS_CSV)
    write_csv(to_frame(rows[:1]), tmp_path / "1" / RESULTS_CSV)
    df = load_results(tmp_path)
    assert df["param_n"].tolist() == [3, 4, 3] and str(df["param_n"].dtype) == "Int64"
    assert df["param_t"].tolist() == [5.0, 10.5, 5.0]
    assert df["param_code"].tolist() == ["007", "010", "007"]
    assert df["param_flag"].tolist() == [True, False, True]


def test_iter_jobs_walks_job_folders_in_order_and_reads_each_file_when_asked(tmp_path: Path):
    for num in (10, 2, 1):
        write_csv(
            pd.DataFrame([{"workload": "w", "mode": "jit", "size": 8, "job_num": num}]),
            tmp_path / str(num) / RESULTS_CSV,
        )
    write_csv(
        pd.DataFrame([{"job_num": 2, "mode": "jit", "process": 0, "per_call_s": 1e-3}]), tmp_path / "2" / SAMPLES_CSV
    )
    write_csv(pd.DataFrame([{"job_num": 1, "call": 1}]), tmp_path / "1" / CALLS_CSV)
    write_csv(pd.DataFrame([{"mode": "stale"}]), tmp_path / "report" / RESULTS_CSV)
    gather(tmp_path)  # the gathered results.csv at the root is not a job
    jobs = list(iter_jobs(tmp_path))
    assert [job.path.name for job in jobs] == ["1", "2", "10"]
    assert jobs[1].samples["per_call_s"].tolist() == [1e-3] and jobs[0].samples.empty
    assert list(jobs[2].results["job_num"]) == [10]
    assert [job.path.name for job in iter_jobs(tmp_path, marker=CALLS_CSV)] == ["1"]
    assert [job.path for job in iter_jobs(tmp_path / "2")] == [tmp_path / "2"]  # a job folder is its own job


def test_a_job_with_variants_or_envs_writes_which_one_into_its_long_files(tmp_path):
    # samples.csv and processes.csv of a job with variants (or envs) say which variant (env) each row measured,
    # right after `mode`: without it the two variants' samples of one mode could not be told apart
    from jitexp.records import JobResult
    from jitexp.store.folders import PROCESSES_CSV, write_job
    from jitexp.store.schema import PROCESS_COLUMNS, SAMPLE_COLUMNS

    for column in ("variant", "env"):
        samples = [
            {"job_num": 0, "workload": "w", "mode": "jit", "size": 8, "process": p, "round": 0, "number": 1,
             "per_call_s": 0.001 * (p + 1), column: name}
            for p, name in enumerate(("a", "b"))
        ]  # fmt: skip
        processes = [
            {"job_num": 0, "workload": "w", "mode": "jit", "size": 8, "process": p, "first_call_s": 0.05, column: name}
            for p, name in enumerate(("a", "b"))
        ]  # fmt: skip
        folder = tmp_path / column
        folder.mkdir()
        write_job(JobResult(rows=[{"workload": "w", "mode": "jit"}], samples=samples, processes=processes), folder)
        for name, columns in ((SAMPLES_CSV, SAMPLE_COLUMNS), (PROCESSES_CSV, PROCESS_COLUMNS)):
            frame = read_text(folder / name)
            at = columns.index("mode") + 1
            assert list(frame.columns) == [*columns[:at], column, *columns[at:]], name
            assert list(frame[column]) == ["a", "b"], name
    # a job without either writes neither column
    plain = tmp_path / "plain"
    plain.mkdir()
    sample = {k: v for k, v in samples[0].items() if k != "env"}
    write_job(JobResult(rows=[{"workload": "w", "mode": "jit"}], samples=[sample]), plain)
    assert list(read_text(plain / SAMPLES_CSV).columns) == SAMPLE_COLUMNS
