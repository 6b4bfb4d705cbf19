"""A tune sweep's trials (its trials.csv) for the report: the searched keys, each trial's objective with its interval,
and the table shown. Pure: frames in, frames and words out."""

from __future__ import annotations

from typing import Any

import pandas as pd

from jitexp.analysis.formatting.values import is_missing
from jitexp.analysis.tune import Estimate, value_text
from jitexp.config.tune import Objective, parse_objective

PARAM = "param_"


def searched_keys(trials: pd.DataFrame) -> list[str]:
    """The searched keys, dotted, in the study's order."""
    return [c[len(PARAM) :] for c in trials.columns if c.startswith(PARAM)]


def objectives(trials: pd.DataFrame) -> list[Objective]:
    """The study's objectives, from the trials' objective_<i> columns."""
    found = []
    i = 0
    while f"objective_{i}" in trials.columns:
        labels = trials[f"objective_{i}"].dropna()
        found.append(parse_objective(labels.iloc[0]) if len(labels) else Objective("steady"))
        i += 1
    return found


def estimate_of(row: pd.Series, i: int, runoff: bool = False) -> Estimate | None:
    """A trial's estimate of objective i (None when it failed or was interrupted); with `runoff`, the runoff's."""
    names = ("runoff", "runoff_ci_low", "runoff_ci_high") if runoff else ("value", "ci_low", "ci_high")
    values = [row.get(f"{part}_{i}") for part in names]
    if any(is_missing(v) for v in values):
        return None
    return Estimate(*(float(v) for v in values))


def short_names(keys: list[str]) -> list[str]:
    """Each key by its last part, unless two share it."""
    last = [k.rpartition(".")[2] for k in keys]
    return [k if last.count(s) > 1 else s for k, s in zip(keys, last)]


def trials_view(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials table: trial, each searched key, each objective with its 95% CI, the runoff's where it ran,
    best/tied (Pareto), why failed."""
    keys = searched_keys(trials)
    objs = objectives(trials)
    per = "examples" in trials.columns and trials["examples"].notna().any()
    ran_off = "runoff_0" in trials.columns and trials["runoff_0"].notna().any()  # the best few measured again
    rows = []
    for _, row in trials.iterrows():
        out: dict = {"trial": int(row["trial"])}
        for key, name in zip(keys, short_names(keys)):
            out[name] = row[f"{PARAM}{key}"]
        for i, o in enumerate(objs):
            out[o.label] = value_text(o, estimate_of(row, i), per)
        if ran_off:
            again = estimate_of(row, 0, runoff=True)
            out["runoff"] = value_text(objs[0], again, per) if again is not None else ""
        marks = []
        if flag(row.get("best")):
            marks.append("best")
        elif flag(row.get("tied")):
            marks.append("tied")
        if flag(row.get("pareto")):
            marks.append("Pareto")
        out["best/tied"] = ", ".join(marks)
        why = row.get("failed_why")
        out["failed: why"] = "" if is_missing(why) else str(why)
        rows.append(out)
    return pd.DataFrame(rows)


def flag(value: Any) -> bool:
    """A true/false cell, as written (True) or read back as text ("True")."""
    return not is_missing(value) and (value is True or str(value).strip().lower() in ("true", "1"))
