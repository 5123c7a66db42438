"""Fixtures for every test: only naparena's own bots and the drop-in folders the tests
write, a clean slate between tests, and a drop-in bot folder factory.

Plain helpers (the command line, tournament files, run directories, `wait_for`) are in
`tests/helpers.py`: module-scoped fixtures and other helpers call them too, and a
conftest is not a module to import.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from naparena.arena import runner
from naparena.bots import plugins
from tests.helpers import drop_in


@pytest.fixture(autouse=True, scope="session")
def no_installed_plugins() -> Iterator[None]:
    """Installed plug-ins must not change what a test sees. Set for the whole session, so
    module-scoped runs, forked workers and child processes see it too."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(plugins.DISABLE_AUTOLOAD_ENV, "1")
        yield


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Nothing one test leaves behind reaches the next: worker registries are built afresh,
    drop-in modules are forgotten, and the log handlers a run puts on the root logger go."""
    monkeypatch.setattr(runner, "_registries", {})
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
