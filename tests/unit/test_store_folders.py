"""store/folders.py, exactly: which folders are a sweep's jobs, what gathering writes and returns, what resume keeps,
what a job's files are, and the sweep's one-line state (the mutation run over store/ found each of these untested:
docs/benchmarks.md, "Mutation testing")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jitexp.records import JobResult
from jitexp.store.csvio import read_text, write_csv
from jitexp.store.folders import (
    JOBS_CSV,
    PROCESSES_CSV,
    PROFILE_CSV,
    RESULTS_CSV,
    SAMPLES_CSV,
    SweepState,
    clear_job,
    gather,
    gather_state,
    held_results,
    is_complete,
    iter_jobs,
    job_overrides,
    job_result_files,
    load_results,
    load_results_state,
    read_manifest,
    write_job,
    write_manifest,
)
from jitexp.store.schema import COLUMNS, JOB_LIST_COLUMNS


def job(root: Path, folder: str, **columns) -> Path:
    """A job folder whose results.csv has these columns (each a list of cells, written as text)."""
    write_csv(pd.DataFrame(columns, dtype=str), root / folder / RESULTS_CSV)
    return root / folder


def manifest(root: Path, *overrides: str) -> None:
    write_manifest(root, [[o] if o else [] for o in overrides])


# ---- the job list and what finished ---------------------------------------------------------------------------


def test_job_overrides_leave_out_the_run_control_keys_and_keep_the_order():
    given = ["size=8", "resume=true", "+overwrite=true", "mode=jit", "fail_on_error=false", "seed=3"]
    assert job_overrides(given) == "size=8 mode=jit seed=3"
    assert job_overrides([]) == ""


def test_an_empty_job_list_reads_back_empty(tmp_path):
    write_manifest(tmp_path, [])
    assert list(read_text(tmp_path / JOBS_CSV).columns) == JOB_LIST_COLUMNS
    assert read_manifest(tmp_path) == {}


def test_folders_with_other_names_are_jobs_by_their_job_num_column(tmp_path):
    """hydra.sweep.subdir may name a job's folder anything: its one job_num says which job it is."""
    manifest(tmp_path, "size=8", "size=16", "size=32")
    job(tmp_path, "size-16", job_num=["1"], overrides=["size=16"], workload=["b"])
    job(tmp_path, "no-number", overrides=["size=8"], workload=["x"])  # no job_num: not a job of this sweep
    job(tmp_path, "two-numbers", job_num=["0", "2"], overrides=["size=8", "size=8"], workload=["y", "y"])
    job(tmp_path, "not-a-number", job_num=["x2"], overrides=["size=32"], workload=["z"])
    frame, state = gather_state(tmp_path)
    assert list(frame["workload"]) == ["b"]
    assert state.finished == [1]
    assert state.missing == [(0, "size=8"), (2, "size=32")]
    assert state.stale == ["no-number", "not-a-number", "two-numbers"]


def test_a_job_without_an_overrides_column_is_a_job_whose_overrides_are_empty(tmp_path):
    manifest(tmp_path, "", "size=16")
    job(tmp_path, "0", job_num=["0"], workload=["a"])  # no overrides column: the job list's "" matches
    job(tmp_path, "1", job_num=["1"], workload=["b"])  # the job list says size=16: not this job's rows
    frame, state = gather_state(tmp_path)
    assert list(frame["workload"]) == ["a"]
    assert (state.finished, state.missing, state.stale) == ([0], [(1, "size=16")], ["1"])


def test_a_stale_folder_does_not_stop_the_gathering_of_the_folders_after_it(tmp_path):
    manifest(tmp_path, "size=8", "size=16")
    job(tmp_path, "0", job_num=["0"], overrides=["size=4"], workload=["old"])
    job(tmp_path, "1", job_num=["1"], overrides=["size=16"], workload=["new"])
    frame, state = gather_state(tmp_path)
    assert list(frame["workload"]) == ["new"]
    assert (state.finished, state.stale) == ([1], ["0"])


# ---- the gathered frame and file --------------------------------------------------------------------------------


def test_a_sweep_with_no_finished_job_writes_the_header_of_every_column(tmp_path):
    manifest(tmp_path, "size=8")
    frame, state = gather_state(tmp_path)
    assert frame.empty and list(frame.columns) == COLUMNS
    assert state.missing == [(0, "size=8")]
    assert list(read_text(tmp_path / RESULTS_CSV).columns) == COLUMNS


def test_gathered_rows_are_numbered_afresh_and_missing_cells_written_as_empty_text(tmp_path):
    job(tmp_path, "0", workload=["a"], job_num=["0"], zeta_note=["z"])
    job(tmp_path, "1", workload=["b", "c"], job_num=["1", "1"], alpha_note=["x", "y"])
    frame = gather(tmp_path)
    assert list(frame.index) == [0, 1, 2]
    assert list(frame["workload"]) == ["a", "b", "c"]
    assert list(frame.columns[-2:]) == ["zeta_note", "alpha_note"]  # columns outside the schema: as first seen
    assert (tmp_path / RESULTS_CSV).read_text().splitlines() == [
        '"workload","job_num","zeta_note","alpha_note"',
        '"a","0","z",""',
        '"b","1","","x"',
        '"c","1","","y"',
    ]


def test_gather_without_write_writes_nothing(tmp_path):
    job(tmp_path, "0", workload=["a"])
    job(tmp_path, "1", workload=["b"])
    assert list(gather(tmp_path, write=False)["workload"]) == ["a", "b"]
    assert not (tmp_path / RESULTS_CSV).exists()
    manifest(tmp_path, "", "")
    assert gather_state(tmp_path, write=False)[1].finished == [0, 1]
    assert not (tmp_path / RESULTS_CSV).exists()


def test_a_folder_without_results_is_one_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        load_results(tmp_path)
    assert str(caught.value) == f"no {RESULTS_CSV} in {tmp_path} or below it"
    with pytest.raises(FileNotFoundError, match="not a folder or a CSV file"):
        load_results(tmp_path / "nope")


def test_the_state_of_one_job_folder_or_file_reads_without_writing(tmp_path):
    """A job's own results.csv, written by another tool: read as it is, never rewritten in jitexp's quoting."""
    run = tmp_path / "run"
    run.mkdir()
    (run / RESULTS_CSV).write_text("workload,size\nw,8\n")
    frame, state = load_results_state(run)
    assert (list(frame["workload"]), list(frame["size"])) == (["w"], [8])
    assert state == SweepState(n_jobs=None, finished=[], missing=[], stale=[])
    assert (run / RESULTS_CSV).read_text() == "workload,size\nw,8\n"
    frame, state = load_results_state(run / RESULTS_CSV)
    assert list(frame["workload"]) == ["w"] and state is None


# ---- resume: a job complete for this config ---------------------------------------------------------------------


def test_a_job_is_complete_only_with_rows_all_of_this_config_hash(tmp_path):
    assert not is_complete(tmp_path / "0", "abc", 0, "size=8")  # nothing there
    job(tmp_path, "0", config_hash=[], job_num=[], overrides=[])  # a header, no rows
    assert not is_complete(tmp_path / "0", "abc", 0, "size=8")
    job(tmp_path, "0", job_num=["0"], overrides=["size=8"])  # no config_hash column (an older jitexp)
    assert not is_complete(tmp_path / "0", "abc", 0, "size=8")
    job(tmp_path, "0", config_hash=["abc", "abd"], job_num=["0", "0"], overrides=["size=8", "size=8"])
    assert not is_complete(tmp_path / "0", "abc", 0, "size=8")


def test_a_complete_job_keeps_its_file_when_its_number_and_overrides_are_the_same(tmp_path):
    folder = job(tmp_path, "0", config_hash=["abc", "abc"], job_num=["0", "0"], overrides=["size=8", "size=8"])
    before = (folder / RESULTS_CSV).stat().st_mtime_ns, (folder / RESULTS_CSV).read_bytes()
    assert is_complete(folder, "abc", 0, "size=8")
    assert ((folder / RESULTS_CSV).stat().st_mtime_ns, (folder / RESULTS_CSV).read_bytes()) == before


@pytest.mark.parametrize(("job_num", "overrides"), [(3, "size=8"), (0, "size=8 mode=jit"), (3, "mode=jit size=8")])
def test_a_complete_job_is_relabelled_with_this_sweeps_number_and_overrides(tmp_path, job_num, overrides):
    folder = job(tmp_path, "0", config_hash=["abc"], job_num=["0"], overrides=["size=8"], workload=["w"])
    assert is_complete(folder, "abc", job_num, overrides)
    assert read_text(folder / RESULTS_CSV).to_dict("records") == [
        {"config_hash": "abc", "job_num": str(job_num), "overrides": overrides, "workload": "w"}
    ]


def test_clearing_a_job_removes_its_result_files_and_traces_only(tmp_path):
    folder = tmp_path / "0"
    (folder / "profile" / "jit").mkdir(parents=True)
    (folder / "profile" / "jit" / "trace.json.gz").write_bytes(b"t")
    (folder / ".hydra").mkdir()
    for name in (RESULTS_CSV, SAMPLES_CSV, PROCESSES_CSV, "calls.csv", PROFILE_CSV, "notes.txt", ".hydra/config.yaml"):
        (folder / name).write_text("x")
    clear_job(folder)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == [
        ".hydra",
        ".hydra/config.yaml",
        "notes.txt",
    ]
    clear_job(folder)  # nothing left to remove: no error
    clear_job(tmp_path / "never")


def test_a_jobs_files_are_written_with_their_traces_below_the_folder(tmp_path):
    rows = [{"workload": "w", "mode": "jit", "size": 8, "status": "ok"}]
    trace = b"\x1f\x8b gzip bytes"
    result = JobResult(rows=rows, files={"profile/jit/host.trace.json.gz": trace, "note.txt": b"n"})
    write_job(result, tmp_path / "0")
    write_job(result, tmp_path / "0")  # again into the same folder: the trace's folder exists now
    assert (tmp_path / "0" / "profile" / "jit" / "host.trace.json.gz").read_bytes() == trace
    assert (tmp_path / "0" / "note.txt").read_bytes() == b"n"
    assert sorted(p.name for p in (tmp_path / "0").iterdir()) == ["note.txt", "profile", RESULTS_CSV]


# ---- the sweep's state in one line ------------------------------------------------------------------------------


def test_the_state_line_counts_jobs_and_rows_in_words():
    assert SweepState(n_jobs=None).describe(1) == "1 row(s)"
    assert SweepState(n_jobs=1, finished=[0]).describe(1) == "1 job: 1 row"
    assert SweepState(n_jobs=2, finished=[0, 1]).describe(2) == "2 jobs: 2 rows"
    assert SweepState(n_jobs=1).describe(0) == "1 job: 0 rows"


def test_the_state_line_names_eight_jobs_that_never_finished_and_counts_the_rest():
    eight = [(n, f"size={n}" if n % 2 else "") for n in range(8)]
    assert SweepState(n_jobs=8, missing=eight).describe(0) == (
        "8 jobs: 0 rows, 8 never finished: #0, #1 size=1, #2, #3 size=3, #4, #5 size=5, #6, #7 size=7"
    )
    assert SweepState(n_jobs=9, missing=[*eight, (8, "")]).describe(0) == (
        "9 jobs: 0 rows, 9 never finished: #0, #1 size=1, #2, #3 size=3, #4, #5 size=5, #6, #7 size=7, ... (1 more)"
    )
    assert SweepState(n_jobs=12, missing=[(n, "") for n in range(12)]).describe(0).endswith("#7, ... (4 more)")


def test_the_state_line_names_the_folders_left_out():
    state = SweepState(n_jobs=2, finished=[0, 1], stale=["old", "7"])
    assert state.describe(2) == "2 jobs: 2 rows; left out (not jobs of this sweep): old, 7"


# ---- which folders hold jobs, in job order ------------------------------------------------------------------------


def test_job_folders_come_in_job_order_numbers_first_and_hidden_or_report_folders_never(tmp_path):
    for folder in ("10", "2", "b", "a", "c/1", "c/0", ".trash/3", "report/4", "x/.old"):
        job(tmp_path, folder, workload=[folder])
    found = [p.parent.relative_to(tmp_path).as_posix() for p in job_result_files(tmp_path)]
    assert found == ["2", "10", "a", "b", "c/0", "c/1"]
    assert [j.path.name for j in iter_jobs(tmp_path)] == ["2", "10", "a", "b", "0", "1"]


def test_the_results_a_folder_holds_are_named_in_job_order_without_hidden_folders(tmp_path):
    assert held_results(tmp_path / "none") == []
    assert held_results(tmp_path) == []
    for folder in ("10", "2", "a", ".hydra"):
        job(tmp_path, folder, workload=["w"])
    (tmp_path / JOBS_CSV).write_text("job_num,overrides\n")
    (tmp_path / SAMPLES_CSV).write_text("x\n")
    assert held_results(tmp_path) == [JOBS_CSV, SAMPLES_CSV, "2/results.csv", "10/results.csv", "a/results.csv"]
    (tmp_path / RESULTS_CSV).write_text("x\n")
    assert held_results(tmp_path)[:3] == [RESULTS_CSV, JOBS_CSV, SAMPLES_CSV]


def test_the_gathered_columns_come_in_the_schemas_order_whatever_order_a_job_wrote(tmp_path):
    job(tmp_path, "0", median_s=["0.5"], param_b=["1"], workload=["w"], param_a=["2"], mine=["x"])
    assert list(gather(tmp_path).columns) == ["workload", "param_a", "param_b", "median_s", "mine"]
    assert (tmp_path / RESULTS_CSV).read_text().splitlines()[0] == '"workload","param_a","param_b","median_s","mine"'
