"""store/csvio.py and store/schema.py, exactly: the columns and types of a frame built from rows, the booleans a CSV
reads back as, and the schema's column order (the mutation run over store/ found each of these untested:
docs/benchmarks.md, "Mutation testing")."""

from __future__ import annotations

import pandas as pd
import pytest

from jitexp.store.csvio import read_csv, to_frame, typed, write_csv
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
