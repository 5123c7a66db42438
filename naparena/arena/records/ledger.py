"""The one place results are booked in schedule order: which seats the stand-in plays,
which matches are skipped, who is disqualified, when a deal set closes. The live run, the
rebuild from a run directory's logs (`report`, `compare`) and `verify` all book through a
`Ledger`, so they cannot disagree; in schedule order, so the same for any worker count.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from naparena.arena.records.logs import LoggedMatch
from naparena.arena.records.rundir import RunDir, match_name
from naparena.arena.setup.schedule import MatchSpec
from naparena.arena.setup.settings import FAULT_MIN_DECISIONS, Format
from naparena.arena.setup.tournament import SprtSpec, Tournament
from naparena.errors import RunError
from naparena.stats.standings import ADJUSTED, PLAIN, STAND_IN_ALIAS, Standings
from naparena.table.luck import SCALE

log = logging.getLogger("naparena")

#: The bot that takes a disqualified bot's seat in the line-ups still to play (always registered).
STAND_IN_BOT = "random"


@dataclass(frozen=True)
class Skip:
    """The match is not played: too few bots left at its table, or its test is decided."""

    reason: str


@dataclass(frozen=True)
class Play:
    """The match is played, the stand-in in these seats (those of disqualified bots)."""

    stand_ins: tuple[int, ...] = ()


def booked_seats(seats: Sequence[str], stand_ins: Collection[int]) -> tuple[str, ...]:
    """Who the standings book in each seat: the stand-in under its own alias where it played
    (`stand_ins`), so a disqualified bot's results end where it was disqualified and chips
    still add up; the scheduled seats stay the match's, so its boards there are left out
    of its intervals."""
    return tuple(STAND_IN_ALIAS if i in stand_ins else a for i, a in enumerate(seats))


class Ledger:
    """Books a run's matches one by one, in schedule order, into its `Standings`.

    For each match: `plan` says whether it is skipped or with which stand-in seats it is
    played; then `skip`, `book` (a played match's summary) or `book_log` (a match file as
    read back) books it, judging disqualification; `end_of_unit` closes its deal set when
    the next match starts another. `result()` is the standings.
    """

    def __init__(self, variants: list[str], aliases: list[str], duplicate: bool,
                 sprt: SprtSpec | None, max_fault_share: float, strength: bool = False,
                 estimator: str = PLAIN):
        self.standings = Standings(variants, aliases + [STAND_IN_ALIAS], duplicate, sprt, strength, estimator,
                                   luck_unit=SCALE)
        self.max_fault_share = max_fault_share

    @classmethod
    def of(cls, t: Tournament) -> Ledger:
        return cls([v.name for v in t.variants], [b.alias for b in t.bots], t.duplicate, t.sprt,
                   t.max_fault_share, t.lineups.format is not Format.ROUND_ROBIN,
                   ADJUSTED if t.luck_adjusted else PLAIN)

    def plan(self, spec: MatchSpec) -> Skip | Play:
        """Whether match `spec` is played, given what is booked before it."""
        reason = self.skip_reason(spec)
        return Skip(reason) if reason else Play(self.stand_in_seats(spec))

    def skip_reason(self, spec: MatchSpec) -> str | None:
        """Why match `spec` is not played: fewer than two bots left at the table once the
        disqualified are replaced by the stand-in, or a decided sequential test."""
        out = [a for a in spec.seats if a in self.standings.disqualified]
        if out and len(set(spec.seats) - set(out)) < 2:
            return "disqualified: " + ", ".join(sorted(set(out), key=out.index))
        sprt = self.standings.sprt
        if self.standings.sprt_decided(spec) and sprt is not None and sprt.verdict:
            return "sprt decided: " + sprt.verdict
        return None

    def stand_in_seats(self, spec: MatchSpec) -> tuple[int, ...]:
        """The seats of match `spec` whose bot is disqualified: the stand-in plays them."""
        return tuple(i for i, a in enumerate(spec.seats) if a in self.standings.disqualified)

    def skip(self, spec: MatchSpec, reason: str) -> None:
        self.standings.skip(spec, reason)

    def book(self, spec: MatchSpec, summary: dict[str, Any], stand_ins: Collection[int]) -> tuple[str, ...]:
        """Book a played match; return who was booked in each seat (the stand-in's seats renamed)."""
        booked = booked_seats(spec.seats, stand_ins)
        self.standings.add(spec, summary, booked)
        self._judge(spec, booked)
        return booked

    def book_log(self, logged: LoggedMatch) -> None:
        """Book a match file as read back: a skipped stub, or a played match with the
        stand-in seats its header names."""
        if logged.skipped is not None:
            self.skip(logged.spec, logged.skipped)
        else:
            self.book(logged.spec, logged.summary, logged.stand_ins)

    def end_of_unit(self, spec: MatchSpec, following: MatchSpec | None) -> None:
        """Close the deal set of `spec` when the next match starts another (schedule order),
        saying whether it ends a seed stream of its variant (the sequential test is judged
        there, where the seating design is balanced)."""
        unit = self.standings.unit_of(spec)
        if following is None or self.standings.unit_of(following) != unit:
            self.standings.close_unit(unit, following is None or (following.variant, following.stream)
                                      != (spec.variant, spec.stream))

    def result(self) -> dict[str, Any]:
        return self.standings.result()

    def _judge(self, spec: MatchSpec, booked: Sequence[str]) -> None:
        """Disqualify a bot whose faults exceed the allowed share; decided in schedule order,
        so the same matches are skipped whatever order the workers finish in."""
        share, standings = self.max_fault_share, self.standings
        if share >= 1:
            return
        for alias in sorted(set(booked) - {STAND_IN_ALIAS}):
            faults, decisions = standings.fault_share(alias)
            if decisions >= FAULT_MIN_DECISIONS and faults > share * decisions and alias not in standings.disqualified:
                standings.disqualified[alias] = {"after_match": spec.index, "faults": faults, "decisions": decisions}
                log.warning("%s disqualified after match %d: %d faults in %d decisions",
                            alias, spec.index, faults, decisions)


def standings_from_logs(run_dir: str | Path) -> dict[str, Any]:
    """Rebuild the standings from the run directory's logs alone (`naparena report`)."""
    return load_standings(run_dir).result()


def load_standings(run_dir: str | Path | RunDir, leave_out: Collection[int] = (),
                   t: Tournament | None = None) -> Standings:
    """The standings, booked from a run directory's match files in schedule order, less
    the matches numbered in `leave_out` (booked elsewhere already). `t` is the run's
    tournament, if the caller has it built already (else it is built from the manifest)."""
    rd = RunDir(run_dir)
    t = t or rd.recorded_tournament()
    ledger = Ledger.of(t)
    variants, aliases = [v.name for v in t.variants], [b.alias for b in t.bots]
    # By file name, never by path: the folder may be named relatively, absolutely or
    # through a link, and the same match file must be left out however it is spelt.
    left_out = {match_name(i) for i in leave_out}
    files = [f for f in rd.match_files() if f.name not in left_out]
    logged = rd.read_match_file(files[0]) if files else None
    for i, path in enumerate(files):
        following = rd.read_match_file(files[i + 1]) if i + 1 < len(files) else None
        assert logged is not None
        spec = logged.spec
        if logged.skipped is None and (spec.variant not in variants or not set(spec.seats) <= set(aliases)):
            raise RunError(f"{path}: names a variant or bot this run does not have")
        ledger.book_log(logged)
        ledger.end_of_unit(spec, following.spec if following else None)
        logged = following
    return ledger.standings
