"""Shared fixtures: a run through the session, the path `naparena run` takes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from naparena.arena.session import Session


@pytest.fixture
def run_session() -> Callable[..., tuple[Path, dict]]:
    """Play a tournament (a file or a `Tournament`) through `Session.open(...).play()`,
    as the CLI does (bots checked, external bots preflighted, worker logs, run.log);
    returns the run directory and the standings. Options as `Session.open` takes them."""
    def run(source: Any, run_dir: Path | None = None, **options: Any) -> tuple[Path, dict]:
        session = Session.open(source, run_dir, **options)
        return session.run_dir.path, session.play()
    return run
