"""The dispatch and crash policy of a run: which matches go out when, and what a lost or
dead worker costs.

A `Dispatch` sends the session's jobs to an executor a bounded window ahead, collects
their outcomes in any order, books them strictly in schedule order through the `Ledger`,
and decides what a worker's loss means: replayed on a fresh worker when nothing in a bot
did it, a crash charged to the seat in whose call it died (replayed with the crash given),
the run stopped when a match keeps losing workers. It holds only what it is handed: the
schedule, the run directory, how a job is built, the time limits and the hands each
checkpoint brought.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Any

from naparena.arena.executors.executor import MatchExecutor
from naparena.arena.executors.pool import WorkerDied, WorkerLost
from naparena.arena.match.job import Job
from naparena.arena.records.ledger import Ledger, Skip
from naparena.arena.records.rundir import RunDir
from naparena.arena.setup.schedule import MatchSpec
from naparena.arena.setup.settings import Timing
from naparena.arena.worker import run_job
from naparena.errors import RunError

log = logging.getLogger("naparena")

# Seconds between progress reports while a long match is under way.
PROGRESS_TICK = 0.5

# A match whose worker is lost this often to something outside any bot stops the run.
MAX_LOSSES = 5

#: Matches booked, hands booked, hands played in this session (a `Watcher`'s `progress`).
Progress = Callable[[int, int, int], None]
#: The session's job builder: (spec, crashes, stand-in seats, prestart) -> the `Job` to play.
MakeJob = Callable[..., Job]


class Dispatch:
    """One session's matches sent out, collected and booked in schedule order."""

    def __init__(self, specs: list[MatchSpec], run_dir: RunDir, job: MakeJob, timing: Timing,
                 earlier: dict[int, int]) -> None:
        self.specs, self.run_dir, self.job, self.timing = specs, run_dir, job, timing
        # Hands each match had in its checkpoint when the session took it up (the session's
        # `job` fills it as it builds jobs): not played now.
        self.earlier = earlier
        # Per match, where its workers were lost: a second loss in the same place is a crash.
        self.losses: dict[int, list[Any]] = {}

    def play_all(self, ledger: Ledger, executor: MatchExecutor, progress: Progress) -> None:
        """Play every match not yet done on `executor`, booking each in schedule order."""
        # Played in an earlier session: only this session's jobs write match files meanwhile,
        # each after it is sent, so the listing taken now answers for every match not yet sent.
        earlier = self.run_dir.done_matches()
        # A cluster sizes its last batches by what is left.
        executor.expect(sum(1 for spec in self.specs if spec.index not in earlier))
        todo = iter(self.specs)
        # future → (spec, crashes, stand-in seats)
        futures: dict[Future[Any], tuple[MatchSpec, list[Any], tuple[int, ...]]] = {}
        ready: dict[int, dict[str, Any] | None] = {}
        next_index, hands_done, session_hands = 0, 0, 0
        tells = executor.in_play() is not None  # whether it can tell the hands of matches under way
        submitted = 0
        while next_index < len(self.specs):
            # Bounded look-ahead keeps memory flat; the executor says how far ahead it wants to see.
            window = executor.window
            while submitted < len(self.specs) and len(futures) + len(ready) < window:
                spec = next(todo)
                submitted += 1
                plan = ledger.plan(spec)
                if spec.index in earlier:
                    ready[spec.index] = None  # done in an earlier session: read at its turn
                elif isinstance(plan, Skip):
                    ready[spec.index] = {"skip": True}
                else:
                    # With fewer matches to come than workers, most workers play no match
                    # after this one: the seats they would start for it would be closed
                    # unused (Python start-ups, each worker's, wasted at the run's end).
                    ahead = len(self.specs) - submitted >= executor.workers
                    job = self.job(spec, None, plan.stand_ins, prestart=ahead)
                    futures[self._send(executor, job)] = (spec, [], plan.stand_ins)
            if next_index not in ready:
                executor.flush()  # a cluster sends its batch of matches when told
                done, _ = wait(list(futures), timeout=PROGRESS_TICK if tells else None,
                               return_when=FIRST_COMPLETED)
                if not done and tells:  # a long match under way: its hands so far
                    playing, now = self._under_way(executor.in_play() or {}, ready)
                    progress(next_index, hands_done + playing, session_hands + now)
                for f in done:
                    spec, crashes, stand_ins = futures.pop(f)
                    self._collect(f, spec, crashes, stand_ins, futures, ready, executor)
                continue
            spec = self.specs[next_index]
            outcome = ready.pop(next_index)
            stale = self._stale(spec, outcome, ledger)
            if stale is not None:  # a bot was disqualified since: play it again with the stand-in
                futures[self._send(executor, self.job(spec, None, stale))] = (spec, [], stale)
                continue
            summary = self._consume(spec, outcome, ledger)
            following = self.specs[next_index + 1] if next_index + 1 < len(self.specs) else None
            ledger.end_of_unit(spec, following)
            if summary is not None:
                hands_done += summary["hands"]
                if outcome is not None:
                    session_hands += summary["hands"] - self.earlier.get(spec.index, 0)
            next_index += 1
            playing_now = executor.in_play()
            playing, now = self._under_way(playing_now, ready) if playing_now is not None else (0, 0)
            progress(next_index, hands_done + playing, session_hands + now)

    def _send(self, executor: MatchExecutor, job: Job) -> Future[Any]:
        """Play `job` on `executor`, watched by the run's time limits."""
        return executor.play(run_job, job, self.timing)

    def _under_way(self, playing: dict[int, int], ready: dict[int, dict[str, Any] | None]) -> tuple[int, int]:
        """Hands of matches not booked yet (being played, or done ahead of their turn): all
        of them, and those played in this session (not the ones a checkpoint brought)."""
        hands = dict(playing)
        hands.update((i, o["summary"]["hands"]) for i, o in ready.items() if o is not None and "summary" in o)
        return sum(hands.values()), sum(max(0, h - self.earlier.get(i, 0)) for i, h in hands.items())

    def _collect(self, future: Future[Any], spec: MatchSpec, crashes: list[Any], stand_ins: tuple[int, ...],
                 futures: dict[Future[Any], tuple[MatchSpec, list[Any], tuple[int, ...]]],
                 ready: dict[int, dict[str, Any] | None], executor: MatchExecutor) -> None:
        try:
            ready[spec.index] = {"summary": future.result(), "stand_ins": stand_ins}
        except WorkerLost as lost:
            if not self._lost(spec, lost):
                futures[self._send(executor, self.job(spec, crashes, stand_ins))] = (spec, crashes, stand_ins)
                return
            crash = self._crash(spec, lost, crashes)
            job = self.job(spec, crashes + [crash], stand_ins)
            futures[self._send(executor, job)] = (spec, crashes + [crash], stand_ins)
        except WorkerDied as died:
            crash = self._crash(spec, died, crashes)
            job = self.job(spec, crashes + [crash], stand_ins)
            futures[self._send(executor, job)] = (spec, crashes + [crash], stand_ins)
        except RunError:
            raise
        except RuntimeError as e:  # not a bot's doing: the engine or the runner failed
            raise RunError(f"match {spec.index} failed outside any bot: {e}") from None

    def _lost(self, spec: MatchSpec, lost: WorkerLost) -> bool:
        """A worker lost to something outside any bot: replay the match on a fresh one.
        True when it is lost again in the same bot call: the bot does it (say, by killing
        its own process), so it is charged as a crash after all."""
        w = lost.where
        place = (w["hand"], w["seat"], w["decision"]) if w["match"] == spec.index and w["seat"] >= 0 else None
        seen = self.losses.setdefault(spec.index, [])
        if place is not None and place in seen:
            return True
        seen.append(place)
        log.warning("match %d: worker lost (%s); playing the match again", spec.index, lost.reason)
        if len(seen) >= MAX_LOSSES:
            raise RunError(f"match {spec.index}: its worker was lost {len(seen)} times to something"
                           f" outside any bot (last: {lost.reason})")
        return False

    def _crash(self, spec: MatchSpec, died: WorkerDied, crashes: list[Any]) -> list[Any]:
        w = died.where
        if w["match"] != spec.index or w["seat"] < 0:
            raise RunError(f"match {spec.index}: a worker died outside any bot ({died.reason})")
        crash = [w["hand"], w["seat"], w["decision"], died.reason]
        if crash in crashes:
            raise RunError(f"match {spec.index}: crash replay did not reproduce ({died.reason})")
        return crash

    def _stale(self, spec: MatchSpec, outcome: dict[str, Any] | None, ledger: Ledger) -> tuple[Any, ...] | None:
        """The stand-in seats match `spec` must be replayed with, if it was played before a
        bot in it was disqualified (in schedule order); None if it stands as played."""
        plan = ledger.plan(spec)
        if isinstance(plan, Skip) or (outcome is not None and outcome.get("skip")):
            return None
        if outcome is None:
            logged = self.run_dir.read_match(spec.index, spec)
            played = None if logged.skipped is not None else logged.stand_ins
        else:
            played = outcome["stand_ins"]
        return plan.stand_ins if played != plan.stand_ins else None

    def _consume(self, spec: MatchSpec, outcome: dict[str, Any] | None, ledger: Ledger) -> dict[str, Any] | None:
        """Book match `spec` in schedule order; skip it if too few of its bots are left."""
        plan = ledger.plan(spec)
        if isinstance(plan, Skip):
            self.run_dir.write_skipped(spec, plan.reason)
            ledger.skip(spec, plan.reason)
            return None
        if outcome is None:
            logged = self.run_dir.read_match(spec.index, spec)
            if logged.skipped is not None:
                ledger.skip(spec, logged.skipped)
                return None
            summary = logged.summary
        else:
            summary = outcome["summary"]
        assert isinstance(summary, dict)
        _note(spec.index, ledger.book(spec, summary, plan.stand_ins), summary)
        return summary


def _note(index: int, booked: tuple[str, ...], summary: dict[str, Any]) -> None:
    """Faults and crashes to run.log, in schedule order like everything else (`booked`: who
    was booked in each seat, a stand-in's seat named as such)."""
    for seat, (alias, s) in enumerate(zip(booked, summary["seats"])):
        if s["faults"]:
            faults = ", ".join(f"{k} {n}" for k, n in sorted(s["faults"].items()))
            log.info("match %d seat %d (%s): %s", index, seat, alias, faults)
        if "crashed_at" in s:
            log.warning("match %d seat %d (%s) %s in hand %d; the stand-in plays it from there (run.log has "
                        "its stderr)", index, seat, alias, _DIED.get(s.get("crashed_by", ""), "crashed"),
                        s["crashed_at"])


#: How a seat's end reads in a sentence, by the kind of the fault that ended it.
_DIED = {"crash": "crashed", "time-out": "timed out", "protocol": "broke the protocol (stray stdout?)",
         "exception": "crashed", "illegal": "crashed"}
