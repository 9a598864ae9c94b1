"""Shared fixtures of the gol test suite."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def gol_cli():
    """The `gol` command-line binary, for cross-checks: $GOL_BIN, else the workspace's build."""
    root = Path(__file__).resolve().parents[2]
    for candidate in [os.environ.get("GOL_BIN"), root / "target/release/gol", root / "target/debug/gol", shutil.which("gol")]:
        if candidate and Path(candidate).is_file():
            return str(candidate)
    pytest.skip("no gol binary built (cargo build) and GOL_BIN unset")


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True)
