"""The how-to guides' own-function and model commands (docs/howto/own-function.md, models.md), each checked as
`jitexp` checks it before running anything: composed, validated, the user's module imported.
tests/e2e/test_howto_examples.py runs them; where two commands run the same job, it runs one of them and this module
shows the other's job is the same."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from howto_blocks import PYTHON, block, own_models, own_workload
from jitexp.engine import preflight

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "measure.ipynb"


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # what cli.main does for the current directory
    return tmp_path


def jobs(argv: list[str]) -> list:
    return preflight.check(argv[1:])  # composes, validates, imports the user's functions (and twin), checks arity


def test_own_function_commands_pass_every_check_before_running(here):
    found = own_workload(here)
    checked = [jobs(argv) for argv in found]
    for argv, each in zip(found, checked):
        assert len(each) == (4 if "-m" in argv else 1)
        assert all(j.workload.fn == "mylosses.myloss" and len(j.workload.args) == 4 for j in each)
        assert all(j.static_argnums == (3,) for j in each)
    modes = {j.mode.names for each in checked for j in each}
    assert ("eager", "jit", "numpy") in modes  # the twin is measured somewhere
    [swept] = [each for argv, each in zip(found, checked) if "-m" in argv]
    assert {(j.workload.params["smoothing"], j.workload.params["reduction"]) for j in swept} == {
        (0.0, "mean"),
        (0.0, "sum"),
        (0.1, "mean"),
        (0.1, "sum"),
    }
    # the second command's job is the sweep's (0.1, mean) job, and the first is that job without the twin:
    # tests/e2e/test_howto_examples.py runs the second for all three (a sweep's param columns: tests/e2e/test_cli_runs.py)
    [first], [second] = checked[0], checked[1]
    [same] = [j for j in swept if (j.workload.params["smoothing"], j.workload.params["reduction"]) == (0.1, "mean")]
    assert same == second
    assert second.mode.names == ("eager", "jit", "numpy") and first.mode.names == ("eager", "jit")
    assert dataclasses.replace(second, mode=first.mode) == first


def test_model_commands_pass_every_check_before_running(here):
    pytest.importorskip("optax")
    pytest.importorskip("equinox")
    loss, loss_sum, step, steps, eqx = (jobs(argv) for argv in own_models(here))
    assert [j.workload.fn for j in (*loss, *loss_sum, *step, *steps, *eqx)] == [
        "mymodel.loss",
        "mymodel.loss",
        *["mymodel.train_step"] * 3,
        "mymodel.eqx_loss",
    ]
    # the first two differ in the static keyword only: tests/e2e/test_howto_examples.py runs the second
    assert loss[0].workload.kwargs == {"reduction": "mean"} and loss_sum[0].workload.kwargs == {"reduction": "sum"}
    sum_workload = dataclasses.replace(loss_sum[0].workload, kwargs=loss[0].workload.kwargs)
    assert dataclasses.replace(loss_sum[0], workload=sum_workload) == loss[0]
    # the sweep is the single train step's job without aot, donating nothing and donating [0, 1]: tests/e2e runs
    # the single one (eager, jit and aot, donating [0, 1])
    assert step[0].mode.names == ("eager", "jit", "aot") and step[0].mode.donate_argnums == [0, 1]
    assert [(j.mode.names, j.mode.donate_argnums) for j in steps] == [
        (("eager", "jit"), []),
        (("eager", "jit"), [0, 1]),
    ]
    assert all(j.workload == step[0].workload and j.size == step[0].size for j in steps)
    assert eqx[0].mode.jit_fn == "equinox.filter_jit" and eqx[0].workload.setup == "mymodel.init_eqx"


def test_the_notebook_magic_lines_are_the_example_notebooks_which_the_suite_runs():
    """python.md's `%load_ext jitexp` and `%jitexp ...` lines (IPython, not Python: no runner runs them) are cells of
    examples/measure.ipynb, which tests/e2e/test_notebook.py runs on a real kernel."""
    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    lines = [line for line in block(PYTHON, "notebook-magic").splitlines() if line.strip()]
    assert [line.split()[0] for line in lines] == ["%load_ext", "%jitexp"]
    assert all(any(line in cell for cell in cells) for line in lines), (lines, cells)
