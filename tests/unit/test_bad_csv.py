"""Issue 57, item 3: a truncated or hand-edited CSV is one line naming the file, the row and the column
(store.csvio.BadCsv), never a pandas traceback, and a results.csv edited so that a report would show something false
is refused rather than read: a deleted median_s or speedup beside their companions, a number that is not one, a status
jitexp does not write, a negative time, a row twice. An old file without those columns at all still reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jitexp.analysis.speedups import NOT_COMPARABLE, not_work
from jitexp.store.csvio import BadCsv, EmptyCsv, csv_bytes, read_csv, read_text

ROWS = pd.DataFrame(
    {
        "workload": ["w", "w"],
        "mode": ["eager", "jit"],
        "status": ["ok", "ok"],
        "median_s": ["0.002", "0.001"],
        "mean_s": ["0.002", "0.001"],
        "speedup": ["", "2.0"],
        "speedup_ci_low": ["", "1.9"],
        "job_num": ["0", "0"],
    }
)


def written(tmp_path: Path, frame: pd.DataFrame, name: str = "results.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(csv_bytes(frame))
    return path


def refusal(path: Path) -> str:
    with pytest.raises(BadCsv) as caught:
        read_csv(path)
    message = str(caught.value)
    assert "\n" not in message
    return message.removeprefix(f"{path}")


def test_the_rows_as_written_read(tmp_path):
    assert len(read_csv(written(tmp_path, ROWS))) == 2


def test_a_truncated_file_names_the_row_and_the_first_missing_column(tmp_path):
    path = written(tmp_path, ROWS)
    text = path.read_text()
    path.write_text(text[: text.rindex(',"0.001",')])  # cut inside the last row
    assert refusal(path) == (
        ", row 2 (line 3), column mean_s: the row has 4 fields where the header has 8: the file was cut short or edited"
    )
    with pytest.raises(BadCsv):
        read_text(path)  # jitexp-history reads text: the same line


def test_an_empty_file_and_an_unclosed_quote_are_one_line(tmp_path):
    empty = tmp_path / "results.csv"
    empty.write_text("")
    with pytest.raises(EmptyCsv, match=r"results.csv: empty: not even a header"):
        read_csv(empty)
    with pytest.raises(pd.errors.EmptyDataError):  # whoever skipped an empty file skips it still
        read_csv(empty)
    quoted = tmp_path / "samples.csv"
    quoted.write_text('"a","b"\n"1","unclosed\n')
    with pytest.raises(BadCsv, match=r"samples.csv.*: not a CSV jitexp can read"):
        read_text(quoted)


@pytest.mark.parametrize(
    ("column", "row", "value", "message"),
    [
        ("median_s", 0, "fast", ", row 1 (line 2), column median_s: 'fast' is not a number"),
        (
            "status",
            1,
            "weird",
            ", row 2 (line 3), column status: status 'weird' is not one jitexp writes; valid choices: ok, error",
        ),
        ("median_s", 1, "-0.5", ", row 2 (line 3), column median_s: -0.5 is negative; a median_s never is"),
    ],
)
def test_a_hand_edited_cell_is_refused(tmp_path, column, row, value, message):
    frame = ROWS.copy()
    frame.loc[row, column] = value
    assert refusal(written(tmp_path, frame)) == message


def test_a_deleted_column_beside_its_companions_is_refused(tmp_path):
    assert refusal(written(tmp_path, ROWS.drop(columns=["speedup"]))) == (
        ", column speedup: no speedup column beside speedup_ci_low: it was deleted, and the report would recompute an "
        "unpaired figure; restore it (or the file jitexp wrote)"
    )
    assert refusal(written(tmp_path, ROWS.drop(columns=["median_s"]))) == (
        ", column median_s: no median_s column beside mean_s: it was deleted, and the report would have no time to "
        "show; restore it (or the file jitexp wrote)"
    )


def test_a_row_twice_is_refused(tmp_path):
    assert refusal(written(tmp_path, pd.concat([ROWS, ROWS.iloc[[1]]]))) == (
        ", row 3 (line 4): repeats row 2 exactly: its processes would count twice; remove the copy"
    )


def test_an_old_file_without_the_columns_reads_as_it_is(tmp_path):
    old = ROWS[["workload", "mode", "median_s"]]
    assert list(read_csv(written(tmp_path, old))["median_s"]) == [0.002, 0.001]


def test_a_check_in_words_reads_back_as_its_words(tmp_path):
    """check_vs_eager is words (why outputs differ, or cannot be compared): not refused as a number, and read back
    as written (typed() read it as NaN before, so the 'cannot be compared' caveat never fired from a file)."""
    frame = ROWS.assign(check_vs_eager=["", "cannot compare: the outputs' structures differ"])
    back = read_csv(written(tmp_path, frame))
    assert back["check_vs_eager"].tolist()[1] == "cannot compare: the outputs' structures differ"
    assert not_work(back.iloc[1]) == (
        NOT_COMPARABLE,
        "jit's result cannot be compared with eager's (the outputs' structures differ)",
    )


# ---- found by benchmarks/hunt57.py: each was read silently, or ended in a traceback ----------------------------------


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda f: f.rename(columns={"mode": "mod"}),
            ", column mode: no mode column beside status: each row of a results.csv names the mode it measured",
        ),
        (
            lambda f: f.assign(mode=["eager", ""]),
            ", row 2 (line 3), column mode: empty: each row of a results.csv names the mode it measured",
        ),
        (
            lambda f: f.assign(median_s=["0.002", "inf"]),
            ", row 2 (line 3), column median_s: inf is not a time; a median_s is a finite number of seconds",
        ),
        (
            lambda f: f.assign(speedup=["", "-2.0"]),
            ", row 2 (line 3), column speedup: -2.0 is negative; a speedup never is",
        ),
        (
            lambda f: f.assign(mean_s=["nan", "0.001"]),
            ", row 1 (line 2), column mean_s: nan is not a time; a mean_s is a finite number of seconds",
        ),
    ],
    ids=["renamed-mode", "empty-mode", "inf-median", "negative-speedup", "nan-mean"],
)
def test_a_missing_mode_or_a_time_that_is_none_is_refused(tmp_path, edit, message):
    """A renamed mode column (or a binary file) was compare's KeyError 'mode'; an empty mode the report's 'boolean
    value of NA is ambiguous'; an inf or nan median read as a time."""
    assert refusal(written(tmp_path, edit(ROWS))) == message


def test_a_header_naming_a_column_twice_is_refused(tmp_path):
    """pandas renamed the second median_s to median_s.1 without a word, and the report read the first."""
    path = tmp_path / "results.csv"
    path.write_text("workload,mode,status,median_s,median_s\nw,jit,ok,0.001,0.002\n")
    assert (
        refusal(path) == ", column median_s: the header names median_s twice: which is the value is unknown; keep one"
    )


def test_a_results_csv_without_break_even_columns_reports_and_compares_in_one_line(tmp_path, capsys):
    """A hand-made results.csv with a paired speedup but no break_even_calls was jitexp-report's KeyError; one
    without processes.csv was compare's 'no case in common ... none alike in workload, mode' against itself."""
    from jitexp.report.compare import cli as compare_cli
    from jitexp.report.run.tables import speedup_table

    frame = ROWS.assign(baseline_mode=["", "eager"], speedup_ci_high=["", "2.1"])
    path = written(tmp_path, frame)
    table = speedup_table(read_csv(path))
    assert table["speedup"].tolist() == [2.0] and table["break_even_calls"].isna().all()
    empty = tmp_path.parent / f"{tmp_path.name}-empty"
    empty.mkdir()
    (empty / "results.csv").write_text(",".join(ROWS.columns) + "\n")  # a header alone: no case in either
    assert compare_cli.main([str(empty), str(empty), "--no-plot", "--out", str(empty / "c")]) == 1
    assert capsys.readouterr().err == "jitexp-compare: nothing to compare: BASE and NEW hold no rows\n"
    assert compare_cli.main([str(tmp_path), str(tmp_path), "--no-plot", "--out", str(tmp_path / "c")]) == 1
    assert capsys.readouterr().err == (
        "jitexp-compare: nothing to compare: BASE and NEW share 2 case(s), but no per-process times for them "
        "(processes.csv beside results.csv, as jitexp writes it); compare the run folders jitexp wrote\n"
    )


def test_compare_of_a_file_without_modes_is_one_line(tmp_path, capsys):
    """Another tool's results.csv (no mode column: the report reads it) or a binary file was compare's KeyError."""
    from jitexp.report.compare import cli as compare_cli

    (tmp_path / "results.csv").write_text("workload,size\nw,8\n")
    assert compare_cli.main([str(tmp_path), str(tmp_path), "--no-plot", "--out", str(tmp_path / "c")]) == 2
    assert capsys.readouterr().err == (
        f"jitexp-compare: error: {tmp_path / 'results.csv'}, column mode: no mode column: jitexp-compare compares "
        "each mode's times\n"
    )
