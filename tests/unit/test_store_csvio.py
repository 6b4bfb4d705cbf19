"""store/csvio.py and store/schema.py, exactly: the columns and types of a frame built from rows, the booleans a CSV
reads back as, and the schema's column order (the mutation run over store/ found each of these untested:
docs/benchmarks.md, "Mutation testing")."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from jitexp.store import csvio
from jitexp.store.csvio import read_csv, read_text, to_frame, typed, write_csv
from jitexp.store.schema import AB, COLUMNS, ENV, IDENTITY, PAIRED, VARIANT, ordered_columns

# ---- rows to a frame ----------------------------------------------------------------------------------------------


def test_rows_become_every_results_column_in_schema_order():
    frame = to_frame([{"median_s": 0.5, "param_n": 3, "workload": "w", "mine": "x"}])
    assert list(frame.columns) == ordered_columns([*COLUMNS, "param_n", "mine"])
    assert list(frame.columns[:3]) == ["workload", "mode", "size"] and frame.columns[-1] == "mine"
    assert (frame["workload"].item(), frame["median_s"].item(), frame["param_n"].item()) == ("w", 0.5, 3)


def test_given_columns_are_kept_as_given():
    frame = to_frame([{"b": 1, "a": 2, "c": 3}], columns=["c", "a", "z"])
    assert list(frame.columns) == ["c", "a", "z"]


def test_an_integer_column_with_a_missing_cell_stays_integer():
    frame = to_frame([{"size": 20, "median_s": 1.0}, {"size": None, "median_s": 2.5}])
    assert str(frame["size"].dtype) == "Int64"
    assert frame["size"].tolist() == [20, pd.NA]
    assert str(frame["median_s"].dtype) == "float64"  # not an integer column: as pandas built it


def test_an_integer_column_of_fractions_or_booleans_is_left_as_it_is():
    assert str(to_frame([{"size": 2.5}, {"size": None}])["size"].dtype) == "float64"
    assert to_frame([{"size": True}, {"size": False}])["size"].tolist() == [True, False]
    assert str(to_frame([{"size": True}, {"size": False}])["size"].dtype) == "bool"


def test_an_integer_column_with_no_value_is_typed_as_reading_it_back_types_it(tmp_path):
    built = to_frame([{"workload": "w", "size": float("nan")}])
    write_csv(built, tmp_path / "r.csv")
    assert str(built["size"].dtype) == str(read_csv(tmp_path / "r.csv")["size"].dtype) == "float64"


# ---- booleans as written ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("True", True),
        ("true", True),
        ("1", True),
        ("yes", True),
        (" Yes ", True),
        ("YES", True),
        ("False", False),
        ("0", False),
        ("no", False),
        ("NO", False),
        ("maybe", pd.NA),
        ("2", pd.NA),
    ],
)
def test_a_boolean_column_reads_what_jitexp_and_pandas_write_and_nothing_else(cell, value):
    column = typed(pd.DataFrame({"unstable": [cell, ""]}, dtype=str))["unstable"]
    assert str(column.dtype) == "boolean"
    assert column.tolist() == [value, pd.NA]


def test_a_boolean_column_of_cells_that_are_not_booleans_is_still_boolean():
    column = typed(pd.DataFrame({"matches_eager": ["maybe"]}, dtype=str))["matches_eager"]
    assert str(column.dtype) == "boolean" and column.tolist() == [pd.NA]


# ---- the schema's order -------------------------------------------------------------------------------------------


def test_the_schema_order_puts_variant_params_and_ab_columns_in_their_places():
    given = [*reversed(COLUMNS), *reversed(AB), ENV, VARIANT, "param_b", "zz_mine", "param_a", "aa_mine"]
    order = ordered_columns(given)
    assert order[:11] == [
        "workload",
        "mode",
        VARIANT,
        ENV,
        "size",
        "inputs",
        "input_shapes",
        "dtype",
        "static_argnums",
        "param_a",
        "param_b",
    ]
    assert order[11] == IDENTITY[IDENTITY.index("static_argnums") + 1] == "static_argnames"
    assert [c for c in order if c in COLUMNS] == list(COLUMNS)  # each once, in the schema's order
    first_ab = order.index(AB[0])
    assert order[first_ab - 1] == PAIRED[-1] == "verdict_vs_numpy"
    assert order[first_ab : first_ab + len(AB)] == AB
    assert order[first_ab + len(AB)] == COLUMNS[COLUMNS.index(PAIRED[-1]) + 1]
    assert order[-2:] == ["zz_mine", "aa_mine"]  # unknown columns last, as given
    assert len(order) == len(set(given))


def test_the_schema_order_keeps_only_the_names_given_once_each():
    assert ordered_columns(["mine", "size", "workload", "size", "PARAM_x", "param_x"]) == [
        "workload",
        "size",
        "param_x",
        "mine",
        "PARAM_x",
    ]


# ---- reading back: types by column kind ----------------------------------------------------------------------------


def test_a_column_with_no_value_is_typed_by_its_kind_without_parsing():
    frame = typed(
        pd.DataFrame(
            {"error_message": ["", ""], "unstable": ["", ""], "median_s": ["", ""], "param_x": ["", ""]}, dtype=str
        )
    )
    assert [str(t) for t in frame.dtypes] == ["string", "boolean", "float64", "string"]
    assert frame["error_message"].tolist() == [pd.NA, pd.NA] and frame["median_s"].isna().all()


def test_columns_already_typed_in_memory_are_kept_as_they_are():
    built = pd.DataFrame({"size": [8, 16], "median_s": [0.5, 0.25], "workload": ["a", "b"]}, index=[5, 7])
    out = typed(built)
    assert [str(t) for t in out.dtypes] == ["int64", "float64", "string"]
    assert out["size"].tolist() == [8, 16] and out["median_s"].tolist() == [0.5, 0.25]
    assert list(out.index) == [5, 7]


def test_cells_of_a_frame_built_in_memory_none_na_and_nan_are_missing():
    built = pd.DataFrame(
        {"param_n": [3, None, pd.NA, float("nan"), 4], "param_x": [2.5, None, 1.0, pd.NA, float("nan")]}, dtype=object
    )
    out = typed(built)
    assert str(out["param_n"].dtype) == "Int64" and out["param_n"].tolist() == [3, pd.NA, pd.NA, pd.NA, 4]
    assert str(out["param_x"].dtype) == "float64"
    assert out["param_x"].isna().tolist() == [False, True, False, True, True]
    assert (out["param_x"][0], out["param_x"][2]) == (2.5, 1.0)


def test_a_number_column_with_a_cell_that_is_not_a_number_reads_it_as_missing():
    out = typed(pd.DataFrame({"median_s": ["0.5", "oops", ""], "flops": ["1e3", "2", "inf"]}, dtype=str))
    assert out["median_s"].isna().tolist() == [False, True, True] and out["median_s"][0] == 0.5
    assert out["flops"].tolist() == [1000.0, 2.0, float("inf")]
    assert [str(t) for t in out.dtypes] == ["float64", "float64"]


def test_an_integer_past_int64_reads_back_as_written_not_as_a_crash(tmp_path):
    """A param or a count beyond int64 (10**20): a param keeps its digits as text, a number column is a float."""
    big = 10**20
    write_csv(
        to_frame([{"workload": "w", "size": 8, "param_big": big, "flops": big, "seed": 2**63 - 1}]), tmp_path / "r.csv"
    )
    out = read_csv(tmp_path / "r.csv")
    assert str(out["param_big"].dtype) == "string" and out["param_big"].item() == "100000000000000000000"
    assert str(out["flops"].dtype) == "float64" and out["flops"].item() == 1e20
    assert str(out["seed"].dtype) == "Int64" and out["seed"].item() == 2**63 - 1
    edge = typed(
        pd.DataFrame({"param_a": [str(-(2**63))], "param_b": [str(2**63)], "param_c": [str(-(2**63) - 1)]}, dtype=str)
    )
    assert str(edge["param_a"].dtype) == "Int64" and edge["param_a"].item() == -(2**63)
    assert str(edge["param_b"].dtype) == "string" and edge["param_b"].item() == str(2**63)
    assert str(edge["param_c"].dtype) == "string" and edge["param_c"].item() == str(-(2**63) - 1)


# ---- writing: atomically, shared, no half file -----------------------------------------------------------------------


def test_a_file_is_written_through_a_hidden_temp_file_beside_it_and_shared(tmp_path, monkeypatch):
    import os

    from jitexp.store import csvio

    renamed = []
    real_replace = os.replace

    def replace(src, dst):
        renamed.append((Path(src), Path(dst), sorted(p.name for p in Path(dst).parent.iterdir())))
        real_replace(src, dst)

    monkeypatch.setattr(csvio.os, "replace", replace)
    path = csvio.write_atomic(tmp_path / "job" / "results.csv", b"a\n1\n")
    assert path == tmp_path / "job" / "results.csv" and path.read_bytes() == b"a\n1\n"
    [(src, dst, during)] = renamed
    assert dst == path and src.parent == path.parent
    assert src.name.startswith(".results.csv.") and src.name.endswith(".tmp")
    assert during == [src.name]  # while written, the folder holds the hidden temp file only
    assert path.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.csv"]


def test_a_write_that_fails_leaves_neither_the_file_nor_its_temp_file(tmp_path, monkeypatch):
    import os

    from jitexp.store import csvio

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(csvio.os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        csvio.write_atomic(tmp_path / "results.csv", b"x")
    assert list(tmp_path.iterdir()) == []

    def interrupted_after_the_rename(src, dst):  # a Ctrl-C landing between the rename and the return
        os.rename(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(csvio.os, "replace", interrupted_after_the_rename)
    with pytest.raises(KeyboardInterrupt):  # not a FileNotFoundError from cleaning up a temp file renamed already
        csvio.write_atomic(tmp_path / "results.csv", b"y")
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"]
    assert (tmp_path / "results.csv").read_bytes() == b"y"


# ---- the plain path: a small CSV as jitexp writes it, read without pandas' parser ------------------------------


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ('"mode","median_s","note"\n"jit",0.5,"a, ""b""\nc"\n"eager",,""\n', True),  # quotes, commas, a line end
        ("mode,param_p,flag\njit,007,True\neager,8,False", True),  # bare cells, no last line end
        ("mode,median_s\njit,0.5\n   \neager,1\n", False),  # a blank line: pandas skips it
        ("mode,median_s\n  jit,0.5\n", False),  # a line that starts with a blank
        ('mode,median_s\n"jit"x,0.5\n', False),  # text after a closing quote
        ("\ufeffmode,median_s\njit,0.5\n", False),  # a byte order mark
        ("mode,median_s\r\njit,0.5\r\n", False),  # Windows line ends
        ("mode,mode.1\njit,eager\n", False),  # a name pandas gives a repeated column: read_text refuses it
        ("mode,,x\njit,1,2\n", False),  # a column without a name
    ],
)
def test_a_plain_file_reads_as_pandas_reads_it_and_any_other_goes_to_pandas(tmp_path, text, plain):
    path = tmp_path / "samples.csv"
    path.write_bytes(text.encode("utf-8"))
    assert (csvio._plain_cells(path) is not None) is plain
    try:
        expected = typed(read_text(path))
    except csvio.BadCsv as exc:
        with pytest.raises(csvio.BadCsv, match=re.escape(str(exc))):
            read_csv(path)
        return
    pd.testing.assert_frame_equal(read_csv(path), expected, check_exact=True)
    assert [str(t) for t in read_csv(path).dtypes] == [str(t) for t in expected.dtypes]
