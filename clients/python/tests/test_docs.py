"""The quick starts of docs/sdk.md (## Python) and clients/python/README.md run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from conftest import ROOT

PACKAGE = ROOT / "clients" / "python"


def quick_start(path: Path, section: str) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index(section)
    match = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert match, f"{path} has no python block after {section!r}"
    return match.group(1)


@pytest.mark.parametrize("path,section", [(ROOT / "docs" / "sdk.md", "## Python"), (PACKAGE / "README.md", "## Quick start")])
def test_quick_start_runs(env: Dict[str, str], path: Path, section: str) -> None:
    code = quick_start(path, section)
    run_env = {**os.environ, "PYTHONPATH": str(PACKAGE)}
    done = subprocess.run([sys.executable, "-c", code], env=run_env, capture_output=True, text=True, timeout=120, cwd=env["GENGATE_TEST_MEDIA"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "/files/" in done.stdout and "USD" in done.stdout
