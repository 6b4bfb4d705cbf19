"""Issue 57, item 4: a `-m seed=0,1` sweep's rows of one case are one row in the report's tables (the median of their
medians, shared.cases.aggregate); the caveats say so once, so that two inputs are not read as one measurement."""

from __future__ import annotations

from helpers import frame, ok
from jitexp.report.run.caveats import caveat_summary, seed_caveats

POOLED = (
    "seeds pooled: 1 case(s) measured at seeds 0, 1 are one row each in these tables (the median of their medians, "
    "the CI the union of theirs); each seed's own row is in results.csv"
)


def rows(seeds, size=8):
    return [ok("w", mode, size, 0.002, 0.01, seed=seed) for seed in seeds for mode in ("eager", "jit")]


def test_a_case_at_two_seeds_is_said_to_be_pooled():
    assert seed_caveats(frame(rows([0, 1]))) == [POOLED]
    assert POOLED in caveat_summary(frame(rows([0, 1])))


def test_one_seed_per_case_is_no_caveat():
    assert seed_caveats(frame(rows([0]))) == []
    assert seed_caveats(frame(rows([0], size=8) + rows([1], size=16))) == []  # two cases, a seed each
