"""Where the repository's vectors and built components are (override with CAPACITY_REPO)."""

import os
from pathlib import Path

import pytest

REPO = Path(os.environ.get("CAPACITY_REPO") or Path(__file__).resolve().parents[4])
VECTORS = REPO / "tests" / "vectors"
POLICIES = REPO / "target" / "policies"


def built(name: str) -> Path:
    path = POLICIES / name
    if not path.is_file():
        pytest.fail(f"{path} is missing: run `cargo policies` in {REPO} first")
    return path
