"""examples/measure.ipynb runs top to bottom on a real Jupyter kernel (ipykernel), as a user would run it."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "measure.ipynb"


@pytest.mark.slow
def test_the_example_notebook_runs_and_shows_its_results(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    shown = code[2].outputs[0]["data"]  # the Measurement as the cell's value
    assert shown["text/plain"].startswith("loss size=4096 float32 cpu: eager ")
    assert "<table>" in shown["text/html"] and "first call" in shown["text/html"]
    assert "'jit'" not in code[3].outputs[0]["data"]["text/plain"]  # speedup, verdict and the cold call's parts
    assert "first_call_s" in code[3].outputs[0]["data"]["text/plain"]
    printed = "".join(o.get("text", "") for o in code[5].outputs if o["output_type"] == "stream")
    assert printed.startswith("loss size=4096 float32 cpu: jit ") and "aot" in printed
    assert "compile_s" in code[5].outputs[-1]["data"]["text/plain"]
