"""Running tournaments from Python: the names a researcher's script imports, which will not
move between releases (they are also exported from the package root, `naparena`).

    import naparena

    t = naparena.load_tournament("tournaments/quickstart.toml")   # or build_tournament({...})
    run = naparena.run_tournament(t, log_dir="logs", on_progress=print)
    print(run.standings()["variants"])

`run_tournament` and `resume_run` play through the same session as `naparena run` and
`naparena resume`; `open_run` opens a run directory as `naparena report`, `compare`,
`view`, `verify` and `ratings` do. Errors are `NaparenaError`s with one clear message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from naparena.arena.records.run import Run, open_run
from naparena.arena.session import Quiet, Session, Watcher
from naparena.arena.setup import reader
from naparena.arena.setup.tournament import Tournament
from naparena.bots.plugins import Registry

__all__ = ["Progress", "Quiet", "Run", "Tournament", "Watcher", "build_tournament", "load_tournament", "open_run",
           "resume_run", "run_tournament"]


@dataclass(frozen=True)
class Progress:
    """Where a run stands, as `on_progress` hears it after each booked match (and during
    a long one): matches and hands booked of the run's total, hands played this session."""

    matches: int
    total_matches: int
    hands: int
    total_hands: int
    session_hands: int


#: A progress callback: called with a `Progress` as the run goes.
OnProgress = Callable[[Progress], None]


def load_tournament(path: str | Path) -> Tournament:
    """Read and validate a tournament file (TOML), as `naparena run` does; a bad file is a
    `ConfigError` naming the file, the key and the problem."""
    return reader.load_tournament(path)


def build_tournament(config: Mapping[str, Any], name_for_errors: str = "") -> Tournament:
    """A tournament from a mapping shaped like the file (`{"tournament": {...}, "bots":
    [...], "variants": [...]}`), validated as a file is; errors name `name_for_errors`
    (a label only: it is never taken for a file). It has no file, so the paths it names
    (`bots_dir`, a bot's `command` and `files`) are from the current directory; a run of
    it records that folder, and `resume_run` rebuilds it from the run's manifest."""
    return reader.parse_tournament(config, None, label=name_for_errors)


# Ten arguments (PLR0913 waived): the public API's keyword-only overrides, one per flag of
# `naparena run`; a parameter object would change how every caller spells them.
def run_tournament(tournament: Tournament | str | Path, *, log_dir: str | Path | None = None,  # noqa: PLR0913
                   run_dir: str | Path | None = None, workers: int | None = None,
                   bots_dir: str | Path | None = None, isolation: str | None = None,
                   scheduler: str | None = None, sandbox: str | None = None,
                   on_progress: OnProgress | None = None, watcher: Watcher | None = None) -> Run:
    """Play a tournament (one built here, or a file's path) to the end and return its run.

    The run goes into `run_dir`, else a new folder under `log_dir` (default: the file's
    `log_dir`). `workers` (0: one per core), `bots_dir` and `isolation` override the
    file's, and so do `scheduler` (a Dask scheduler, as `run --scheduler`) and `sandbox`
    ("auto", "required" or "off", as `run --sandbox`). `on_progress` hears a `Progress`
    as matches are booked; a `watcher` (see `Watcher`) hears everything else. The
    standings are `run.standings()`."""
    session = Session.open(tournament, run_dir, log_dir=log_dir, bots_dir=bots_dir, isolation=isolation,
                           workers=workers, scheduler=scheduler, sandbox=sandbox,
                           watcher=_listener(watcher, on_progress))
    session.play()
    return open_run(session.run_dir, sound=False)


def resume_run(run_dir: str | Path, *, workers: int | None = None, bots_dir: str | Path | None = None,
               on_progress: OnProgress | None = None, watcher: Watcher | None = None) -> Run:
    """Play the matches an interrupted run has left, from its own tournament file and
    bots (as `naparena resume`), and return the finished run. A run of a tournament built
    from a mapping (`build_tournament`) is resumed from the configuration its manifest
    records, its relative paths from the folder the run started in."""
    session = Session.resume(run_dir, bots_dir=bots_dir, workers=workers, watcher=_listener(watcher, on_progress))
    session.play()
    return open_run(session.run_dir, sound=False)


class _Listener(Quiet):
    """A `Watcher` that passes everything on to `inner`, and progress to `on_progress` too."""

    def __init__(self, inner: Watcher, on_progress: OnProgress | None) -> None:
        self.inner, self.on_progress = inner, on_progress
        self.total_matches = self.total_hands = 0

    def failures(self, registry: Registry) -> None:
        self.inner.failures(registry)

    def caveat(self, text: str) -> None:
        self.inner.caveat(text)

    def started(self, session: Session, done: int) -> None:
        self.total_matches, self.total_hands = session.matches, session.hands
        self.inner.started(session, done)

    def live(self) -> AbstractContextManager[Any]:
        return self.inner.live()

    def notice(self, text: str) -> None:
        self.inner.notice(text)

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        self.inner.progress(matches, hands, session_hands)
        if self.on_progress is not None:
            self.on_progress(Progress(matches, self.total_matches, hands, self.total_hands, session_hands))


def _listener(watcher: Watcher | None, on_progress: OnProgress | None) -> Watcher:
    return _Listener(watcher or Quiet(), on_progress)
