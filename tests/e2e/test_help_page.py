"""The installed `jitexp --help` and `--version` print jitexp's page and version (their text: tests/unit/
test_help_text.py), and --help, --cfg, --version and a refused value start without jax, pandas or numpy."""

from __future__ import annotations

import subprocess
import sys

from helpers import run_cli
from jitexp.helptext import version_text


def test_help_and_version_print_jitexps_own_page_and_version(tmp_path):
    proc = run_cli(["--help"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("jitexp: what does jax.jit do to your function") and "== Examples ==" in proc.stdout
    assert "powered by Hydra" not in proc.stdout
    proc = run_cli(["--version"], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == version_text()


def test_help_cfg_version_and_a_mistake_import_neither_jax_nor_pandas_nor_numpy(tmp_path):
    code = (
        "import sys; from jitexp.cli import main; sys.argv = ['jitexp', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('jax', 'pandas', 'numpy') if m in sys.modules]\n"
        "assert not heavy, heavy\nprint('LIGHT')"
    )
    for flags in (["--help"], ["--cfg", "job", "workload=apply_n_times"], ["--version"], ["size=abc"]):
        proc = subprocess.run([sys.executable, "-c", code, *flags], cwd=tmp_path, capture_output=True, text=True)
        assert "LIGHT" in proc.stdout, (flags, proc.stderr[-2000:])
        if flags[0] == "--cfg":
            assert proc.returncode == 0 and "static_argnums:\n  - 1" in proc.stdout, proc.stderr[-2000:]
