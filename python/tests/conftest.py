"""Shared fixtures: the repository's paths and the `cloth` command, when it is built."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository root (scenes/, assets/)."""
    return REPO


@pytest.fixture(scope="session")
def cloth_cli() -> Path:
    """The `cloth` command: $CLOTH_BIN, else target/release/cloth (built by
    `cargo build --release`), else the one on PATH; the test is skipped without one."""
    candidates = [os.environ.get("CLOTH_BIN"), REPO / "target" / "release" / "cloth"]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    found = shutil.which("cloth")
    if found:
        return Path(found)
    pytest.skip(
        "no `cloth` command: build it with `cargo build --release` (target/release/cloth) "
        "or set CLOTH_BIN"
    )
