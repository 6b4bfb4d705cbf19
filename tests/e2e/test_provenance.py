"""Every row says which commit of the user's code it measured (issue 24): the repository that holds the workload's
module, else the working directory's; dirty when tracked files differ; nothing outside git. Here because it runs
git in temporary repositories."""

from __future__ import annotations

from pathlib import Path

import jitexp
from helpers import git, git_init
from jitexp.provenance import CODE_COLUMNS, code_provenance, module_file

MODULE = "import jax.numpy as jnp\n\n\ndef f(x):\n    return jnp.sin(x) * 2\n"


def repository(path: Path, name: str, subject: str) -> Path:
    git_init(path)
    (path / f"{name}.py").write_text(MODULE)
    git(path, "add", f"{name}.py")
    git(path, "commit", "-qm", subject)
    return path


def test_the_commit_of_the_repository_holding_the_module_else_the_cwd(tmp_path, monkeypatch):
    code = repository(tmp_path / "code", "prov_wl", "sin times two")
    elsewhere = repository(tmp_path / "elsewhere", "other", "unrelated")
    monkeypatch.syspath_prepend(str(code))
    head = git(code, "rev-parse", "HEAD")

    found = code_provenance(["prov_wl.f"], cwd=elsewhere)  # run from another repository: the module's wins
    assert found["code_commit"] == head and found["code_subject"] == "sin times two"
    assert found["code_dirty"] is False and Path(found["code_repo"]) == code.resolve()
    assert found["code_commit_date"] == git(code, "log", "-1", "--format=%cI")
    assert found["jitexp_version"] == jitexp.__version__

    (code / "outputs").mkdir()
    (code / "outputs" / "results.csv").write_text("x\n")  # a run's own untracked files: not dirty
    assert code_provenance(["prov_wl.f"], cwd=elsewhere)["code_dirty"] is False
    (code / "prov_wl.py").write_text(MODULE + "# edited\n")
    assert code_provenance(["prov_wl.f"], cwd=elsewhere)["code_dirty"] is True

    plain = tmp_path / "plain"
    plain.mkdir()
    fallback = code_provenance(["jitexp.workloads.no_such_module.f", None], cwd=elsewhere)  # not found: the cwd's
    assert fallback["code_commit"] == git(elsewhere, "rev-parse", "HEAD") and fallback["code_subject"] == "unrelated"
    outside = code_provenance(["nowhere.f"], cwd=plain)
    assert outside == {"jitexp_version": jitexp.__version__}  # outside git: no code_ columns at all


def test_the_module_is_found_without_being_imported(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")
    (tmp_path / "pkg" / "mod.py").write_text("raise SystemExit('imported')\n")
    assert module_file("pkg.mod", [str(tmp_path)]) == tmp_path / "pkg" / "mod.py"
    assert module_file("pkg", [str(tmp_path)]) == tmp_path / "pkg" / "__init__.py"
    assert module_file("pkg.absent", [str(tmp_path)]) is None
    assert not (tmp_path / "ran").exists()


def test_a_jobs_rows_carry_the_commit(tmp_path, monkeypatch):
    code = repository(tmp_path / "code", "prov_job", "the measured commit")
    monkeypatch.syspath_prepend(str(code))
    monkeypatch.chdir(tmp_path)
    result = jitexp.run(
        jitexp.compose(
            ["workload=custom", "workload.fn=prov_job.f", "workload.args=[{shape:[4]}]", "timing=quick", "isolate=none"]
        )
    )
    assert [r["status"] for r in result.rows] == ["ok", "ok"]
    for row in result.rows:
        assert row["code_commit"] == git(code, "rev-parse", "HEAD") and row["code_subject"] == "the measured commit"
        assert row["code_dirty"] is False and row["jitexp_version"] == jitexp.__version__
    assert set(CODE_COLUMNS) <= set(result.rows[0])
