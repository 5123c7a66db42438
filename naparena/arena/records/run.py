"""A run directory opened once, as its readers need it: `Run` holds the typed manifest, the
tournament it records (built by the file's reader), its schedule and match files, and
answers for its standings, its completeness and its soundness. `report`, `compare`,
`view`, `verify`, `ratings` and the HTML report all open a run here (`open_run`), so a
run is read, typed and checked in one way; `RunDir` below it knows where each file is.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from naparena.arena.records.ledger import load_standings
from naparena.arena.records.rundir import Manifest, RunDir
from naparena.arena.records.verify import Audit, AuditProgress, audit, refuse_unsound
from naparena.arena.setup.schedule import MatchSpec, schedule
from naparena.arena.setup.tournament import Tournament
from naparena.stats.standings import Standings


class Run:
    """A finished or under-way run, read from its directory: opening it reads and types
    the manifest and rebuilds the tournament, so a damaged one is refused here, once
    (a `RunError` naming the file and the key)."""

    def __init__(self, path: str | Path | RunDir) -> None:
        self.dir = RunDir(path)
        self.manifest: Manifest = self.dir.load_manifest()
        self.tournament: Tournament = self.dir.recorded_tournament(self.manifest)

    def __str__(self) -> str:
        return str(self.dir)

    @property
    def path(self) -> Path:
        """The run directory as it was named (for messages)."""
        return self.dir.given

    @property
    def name(self) -> str:
        """The tournament's name."""
        return self.tournament.name

    def schedule(self) -> list[MatchSpec]:
        """Every match of the run, in schedule order."""
        return schedule(self.tournament)

    def match_files(self) -> list[Path]:
        """The match files on disk, in schedule order."""
        return self.dir.match_files()

    def match(self, index: int) -> dict[str, Any]:
        """Match `index`'s log, read back and checked, as the JSON it is."""
        return self.dir.read_match(index).data

    @property
    def kept(self) -> int:
        """How many matches are on disk."""
        return self.dir.kept()

    @property
    def complete(self) -> bool:
        """Whether every match of the schedule is on disk."""
        return self.kept == self.manifest.matches

    def booked(self, leave_out: Collection[int] = ()) -> Standings:
        """The standings booked from the match files (less the matches in `leave_out`)."""
        return load_standings(self.dir, leave_out, self.tournament)

    def standings(self) -> dict[str, Any]:
        """The standings of the matches played so far, rebuilt from the logs alone: the
        same as the run's standings.json once it is complete."""
        return self.booked().result()

    def audit(self, replay: bool = True, progress: AuditProgress | None = None) -> Audit:
        """Every way the run's files are not one run's (with `replay`, every hand replayed too)."""
        return audit(self.dir, self.manifest, self.tournament, replay, progress)

    def check_sound(self) -> None:
        """Refuse (`RunError`) a run whose files are not all its own: standings built from
        them would credit the wrong bots."""
        refuse_unsound(self.dir, self.audit(replay=False))


def open_run(path: str | Path | RunDir | Run, sound: bool = True) -> Run:
    """The run in `path`, opened; with `sound`, refused unless its files are all its own."""
    run = path if isinstance(path, Run) else Run(path)
    if sound:
        run.check_sound()
    return run
