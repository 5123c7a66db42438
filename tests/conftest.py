"""Fixtures for every test: only naparena's own bots and the drop-in folders the tests
write, a clean slate between tests, a drop-in bot folder factory, and a run through the
session (the path `naparena run` takes).

Plain helpers (the command line, tournament files, run directories, `wait_for`) are in
`tests/helpers.py`: module-scoped fixtures and other helpers call them too, and a
conftest is not a module to import.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from naparena.arena import worker
from naparena.arena.session import Session
from naparena.bots import plugins
from tests.helpers import drop_in


@pytest.fixture(autouse=True, scope="session")
def plain_environment() -> Iterator[None]:
    """What the tests see must not depend on who runs them. Installed plug-ins are off,
    and the terminal size is unset: the command line's tables are as wide as when piped,
    whatever the caller's COLUMNS (pytest-xdist's workers run with COLUMNS=80, which
    wraps the tables the tests read). For the whole session, so module-scoped runs,
    forked workers and child processes see the same."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(plugins.DISABLE_AUTOLOAD_ENV, "1")
        mp.delenv("COLUMNS", raising=False)
        mp.delenv("LINES", raising=False)
        yield


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Nothing one test leaves behind reaches the next: worker registries are built afresh,
    drop-in modules are forgotten, and the log handlers a run puts on the root logger go."""
    monkeypatch.setattr(worker, "_registries", {})
    modules = set(sys.modules)
    root, ours = logging.getLogger(), logging.getLogger("naparena")
    handlers, level = list(root.handlers), ours.level
    yield
    for h in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(h)
        h.close()
    ours.setLevel(level)
    for name in set(sys.modules) - modules:
        if name == plugins.DROP_IN_PACKAGE or name.startswith(plugins.DROP_IN_PACKAGE + "."):
            del sys.modules[name]


@pytest.fixture
def bots_dir(tmp_path: Path) -> Callable[..., Path]:
    """A factory: `bots_dir(good=SOURCE, ...)` writes each source as `tmp_path/bots/NAME.py`
    (`example=True` adds the repository's example bot) and returns the folder."""
    def write(example: bool = False, **sources: str) -> Path:
        return drop_in(tmp_path / "bots", sources, example=example)
    return write


@pytest.fixture
def run_session() -> Callable[..., tuple[Path, dict]]:
    """Play a tournament (a file or a `Tournament`) through `Session.open(...).play()`,
    as the CLI does (bots checked, external bots preflighted, worker logs, run.log);
    returns the run directory and the standings. Options as `Session.open` takes them."""
    def run(source: Any, run_dir: Path | None = None, **options: Any) -> tuple[Path, dict]:
        opened = Session.open(source, run_dir, **options)
        return opened.run_dir.path, opened.play()
    return run



@pytest.fixture
def loaded() -> Iterator[int]:
    """Every core kept busy while the test runs (a busy loop per core, at the test's own
    priority), as a CI machine or a laptop doing other work is: full-size runs are tested
    so. Yields the number of loops."""
    import os
    import subprocess
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        yield len(loops)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
