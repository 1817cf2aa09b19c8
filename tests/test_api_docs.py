"""The example in docs/python.md runs, as written, from a copy of the fixtures."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from tests.conftest import REPO_ROOT, subprocess_env


def test_python_docs_example_runs(tmp_path) -> None:
    text = (REPO_ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/python.md has no python example"
    shutil.copytree(
        REPO_ROOT / "fixtures" / "handwritten" / "own",
        tmp_path / "fixtures" / "handwritten" / "own",
    )
    script = tmp_path / "example.py"
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=subprocess_env(tmp_path),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("3 records\n")
    assert (tmp_path / "results.reviewed.jsonl").exists()
    assert (tmp_path / "fixtures" / "handwritten" / "own" / "results.ragreview.db").exists()
