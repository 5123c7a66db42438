"""Runs a tournament: the run directory, worker pool, match order, crashes, resume, standings.

Matches go to an executor as plain data; each worker plays its match and writes the
match log itself. The parent consumes results strictly in schedule order, so the
standings, the disqualifications and every file are the same for any number of
workers and any completion order.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import sys
from concurrent.futures import FIRST_COMPLETED, wait
from pathlib import Path
from typing import Callable

from naparena._version import __version__
from naparena.arena.play import FORMAT, Job, dumps, play_job, write_atomic
from naparena.arena.pool import WorkerDied, make_executor
from naparena.arena.schedule import bot_seed, schedule, total_hands
from naparena.arena.tournament import FAULT_MIN_DECISIONS, STAND_IN_ALIAS, SprtSpec, Tournament
from naparena.bots.plugins import DROP_IN_PACKAGE, bot_version, load_registry
from naparena.errors import RunError
from naparena.stats.standings import Standings

log = logging.getLogger("naparena")

MANIFEST, STANDINGS, MATCHES, WHERE = "manifest.json", "standings.json", "matches", "resume.json"
#: The bot that takes a disqualified bot's seat in the line-ups still to play (always registered).
STAND_IN_BOT = "random"


# --- in the worker --------------------------------------------------------------------

_registries: dict = {}


def _drop_in_key(folder: str | None) -> tuple:
    """What a worker's cached registry depends on: the folder and its files' mtimes."""
    if folder is None:
        return (None,)
    path = Path(folder).resolve()
    return (str(path),) + tuple(sorted((p.name, p.stat().st_mtime_ns) for p in path.glob("*.py")))


def run_job(job: Job) -> dict:
    """Worker entry point: play one match, write its log, return only its summary."""
    key = _drop_in_key(job.bots_dir)
    registry = _registries.get(key)
    if registry is None:
        registry = _registries[key] = load_registry(job.bots_dir)
    match_log = play_job(job, registry)
    write_atomic(job.path, bytes(match_log))
    return match_log.summary


# --- the run directory ----------------------------------------------------------------

def bots_dir(t: Tournament) -> str | None:
    """The drop-in folder to load, or None when the default one is simply absent."""
    path = t.bots_path
    return str(path) if path.is_dir() or t.bots_dir != "bots" else None


def registry_for(t: Tournament):
    registry = load_registry(bots_dir(t))
    if bots_dir(t) is None:
        registry.searched.append(f"no drop-in folder ({t.bots_path.resolve()} does not exist)")
    return registry


# Where things are on this machine is not what a run is: leave it out of the hash, so a
# run can be resumed from another directory or with --bots-dir.
_NOT_HASHED = ("workers", "bots_dir", "log_dir")


def config_hash(t: Tournament) -> str:
    config = {k: v for k, v in t.as_dict().items() if k not in _NOT_HASHED}
    return hashlib.blake2b(json.dumps(config, sort_keys=True).encode(), digest_size=4).hexdigest()


def manifest(t: Tournament, registry) -> dict:
    """What a run was: resolved configuration, versions, bot sources, seeds. No clock, no pids."""
    config = {k: v for k, v in t.as_dict().items() if k != "workers"}
    bots = {b.alias: {"name": b.name, **_identity(registry.get(b.name))} for b in t.bots}
    return {"format": FORMAT, "naparena": __version__, "python": platform.python_version(),
            "config_hash": config_hash(t), "tournament": config, "bots": bots,
            "seed": t.seed, "matches": len(schedule(t)), "hands": total_hands(t)}


def _identity(entry) -> dict:
    """Where a bot comes from and which version, independent of where the run started:
    a drop-in file is named by its file name and the hash of its contents."""
    module = sys.modules.get(entry.cls.__module__)
    path = getattr(module, "__file__", None)
    if entry.cls.__module__.startswith(DROP_IN_PACKAGE + ".") and path:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        return {"source": f"drop-in file {Path(path).name}", "version": f"sha256:{digest}"}
    return {"source": entry.source, "version": bot_version(entry)}


def new_run_dir(t: Tournament, log_dir: str | Path | None = None) -> Path:
    """A fresh directory `<log_dir>/<name>-<config hash>[-N]`: earlier runs are never touched."""
    base = Path(log_dir or t.log_path)
    stem = f"{t.name}-{config_hash(t)}"
    path, n = base / stem, 1
    while path.exists():
        n += 1
        path = base / f"{stem}-{n}"
    return path


def latest_run_dir(t: Tournament, log_dir: str | Path | None = None) -> Path:
    """The newest run of this exact configuration, for `--resume`."""
    base = Path(log_dir or t.log_path)
    stem = f"{t.name}-{config_hash(t)}"
    runs = {1: base / stem} if (base / stem).is_dir() else {}
    for p in base.glob(f"{stem}-*"):
        if p.name[len(stem) + 1:].isdigit() and p.is_dir():
            runs[int(p.name[len(stem) + 1:])] = p
    if not runs:
        raise RunError(f"no earlier run of '{t.name}' with this configuration under {base}/ to resume")
    return runs[max(runs)]


def read_where(run_dir: Path) -> dict:
    """Where a run's tournament file and drop-in bots are (absolute), for resuming it."""
    try:
        return json.loads((Path(run_dir) / WHERE).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        m = read_manifest(Path(run_dir))
        return {"file": m.get("source"), "bots_dir": None}


def read_manifest(run_dir: Path) -> dict:
    try:
        return json.loads((run_dir / MANIFEST).read_text())
    except FileNotFoundError:
        raise RunError(f"{run_dir}: not a run directory (no {MANIFEST})") from None
    except json.JSONDecodeError as e:
        raise RunError(f"{run_dir / MANIFEST}: not valid JSON ({e})") from None


def match_path(run_dir: Path, index: int) -> Path:
    return run_dir / MATCHES / f"{index:06d}.json"


# --- the run --------------------------------------------------------------------------

Progress = Callable[[int, int, int], None]  # (matches done, hands done, hands this session)


class Run:
    """One run of a tournament into `run_dir`, fresh or resumed."""

    def __init__(self, t: Tournament, registry, run_dir: Path, workers: int | None = None):
        self.t, self.registry, self.run_dir = t, registry, Path(run_dir)
        self.workers = workers if workers else (t.workers or os.cpu_count() or 1)
        self.specs = [s.as_dict() for s in schedule(t)]
        self.aliases = [b.alias for b in t.bots]
        self.bots = {b.alias: b for b in t.bots}
        self.rules = {v.name: v.rules.as_dict() for v in t.variants}

    def prepare(self, resume: bool = False) -> int:
        """Write (or, resuming, check) the manifest; return how many matches are already done."""
        (self.run_dir / MATCHES).mkdir(parents=True, exist_ok=True)
        mine = manifest(self.t, self.registry)
        path = self.run_dir / MANIFEST
        if path.exists() and not resume:
            raise RunError(f"{self.run_dir} already holds a run; resume it or start a new one")
        if path.exists():
            old = read_manifest(self.run_dir)
            if old.get("format") != FORMAT:
                raise RunError(f"{self.run_dir}: written in log format {old.get('format')}, this naparena "
                               f"writes format {FORMAT}; resume it with the version that started it")
            if old.get("config_hash") != mine["config_hash"]:
                raise RunError(f"{self.run_dir}: was run with another configuration; start a new run")
        else:
            write_atomic(str(path), json.dumps(mine, indent=1, sort_keys=True).encode() + b"\n")
        # Absolute paths, for `naparena resume` from anywhere; kept out of the manifest,
        # which must not depend on where the run was started.
        drop_ins = bots_dir(self.t)
        where = {"file": str(Path(self.t.path).resolve()) if self.t.path else None,
                 "bots_dir": str(Path(drop_ins).resolve()) if drop_ins else None}
        write_atomic(str(self.run_dir / WHERE), json.dumps(where, indent=1).encode() + b"\n")
        for tmp in (self.run_dir / MATCHES).glob("*.tmp*"):
            tmp.unlink()  # left by an interrupted worker; its match will be played again
        return sum(1 for s in self.specs if match_path(self.run_dir, s["index"]).exists())

    def job(self, spec: dict, crashes: list | None = None, stand_ins: tuple = ()) -> Job:
        seats = []
        for i, alias in enumerate(spec["seats"]):
            b = self.bots[alias]
            name, params = (STAND_IN_BOT, {}) if i in stand_ins else (b.name, b.params)
            seats.append({"alias": alias, "name": name, "params": params,
                          "seed": bot_seed(self.t.seed, spec["index"], i)})
        if stand_ins:  # the log says which seats the stand-in played
            spec = {**spec, "stand_ins": list(stand_ins)}
        return Job(index=spec["index"], seed=spec["seed"], variant=spec["variant"],
                   rules=self.rules[spec["variant"]], seats=seats, hands=spec["hands"],
                   stack=self.t.stack, timeout=self.t.timeout, bots_dir=bots_dir(self.t),
                   path=str(match_path(self.run_dir, spec["index"])), spec=spec, crashes=crashes or [])

    def execute(self, progress: Progress | None = None, executor=None) -> dict:
        """Play every match not yet done; return the standings (also written to disk)."""
        standings = Standings([v.name for v in self.t.variants], self.aliases + [STAND_IN_ALIAS],
                              self.t.duplicate, self.t.sprt)
        own = executor is None
        if own:
            executor = make_executor(self.workers, self.t.timeout)
        try:
            self._play_all(standings, executor, progress)
        except BaseException:
            if own:
                getattr(executor, "terminate", executor.shutdown)()
            raise
        if own:
            executor.shutdown()
        result = standings.result()
        write_atomic(str(self.run_dir / STANDINGS), json.dumps(result, indent=1, sort_keys=True).encode() + b"\n")
        return result

    def _play_all(self, standings: Standings, executor, progress: Progress | None) -> None:
        window = max(2, self.workers * 3)  # bounded look-ahead keeps memory flat
        todo = iter(self.specs)
        futures: dict = {}   # future → (spec, crashes, stand-in seats)
        ready: dict[int, dict | None] = {}
        next_index, hands_done, session_hands = 0, 0, 0
        submitted = 0
        while next_index < len(self.specs):
            while submitted < len(self.specs) and len(futures) + len(ready) < window:
                spec = next(todo)
                submitted += 1
                path = match_path(self.run_dir, spec["index"])
                if path.exists():
                    ready[spec["index"]] = None  # done in an earlier session: read at its turn
                elif skip_reason(spec, standings):
                    ready[spec["index"]] = {"skip": True}
                else:
                    stand_ins = stand_in_seats(spec, standings)
                    futures[executor.submit(run_job, self.job(spec, None, stand_ins))] = (spec, [], stand_ins)
            if next_index not in ready:
                done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
                for f in done:
                    spec, crashes, stand_ins = futures.pop(f)
                    self._collect(f, spec, crashes, stand_ins, futures, ready, executor)
                continue
            spec = self.specs[next_index]
            outcome = ready.pop(next_index)
            stale = self._stale(spec, outcome, standings)
            if stale is not None:  # a bot was disqualified since: play it again with the stand-in
                futures[executor.submit(run_job, self.job(spec, None, stale))] = (spec, [], stale)
                continue
            summary = self._consume(spec, outcome, standings)
            following = self.specs[next_index + 1] if next_index + 1 < len(self.specs) else None
            end_of_unit(standings, spec, following)
            if summary is not None:
                hands_done += summary["hands"]
                if outcome is not None:
                    session_hands += summary["hands"]
            next_index += 1
            if progress:
                progress(next_index, hands_done, session_hands)

    def _collect(self, future, spec, crashes, stand_ins, futures, ready, executor) -> None:
        try:
            ready[spec["index"]] = {"summary": future.result(), "stand_ins": stand_ins}
        except WorkerDied as died:
            crash = self._crash(spec, died, crashes)
            job = self.job(spec, crashes + [crash], stand_ins)
            futures[executor.submit(run_job, job)] = (spec, crashes + [crash], stand_ins)
        except RuntimeError as e:  # not a bot's doing: the engine or the runner failed
            raise RunError(f"match {spec['index']} failed outside any bot: {e}") from None

    def _crash(self, spec: dict, died: WorkerDied, crashes: list) -> list:
        w = died.where
        if w["match"] != spec["index"] or w["seat"] < 0:
            raise RunError(f"match {spec['index']}: a worker died outside any bot ({died.reason})")
        crash = [w["hand"], w["seat"], w["decision"], died.reason]
        if crash in crashes:
            raise RunError(f"match {spec['index']}: crash replay did not reproduce ({died.reason})")
        return crash

    def _stale(self, spec: dict, outcome: dict | None, standings: Standings) -> tuple | None:
        """The stand-in seats match `spec` must be replayed with, if it was played before a
        bot in it was disqualified (in schedule order); None if it stands as played."""
        if skip_reason(spec, standings) or (outcome is not None and outcome.get("skip")):
            return None
        wanted = stand_in_seats(spec, standings)
        if outcome is None:
            data = json.loads(match_path(self.run_dir, spec["index"]).read_bytes())
            played = None if "skipped" in data else tuple(data["match"].get("stand_ins", ()))
        else:
            played = outcome["stand_ins"]
        return wanted if played != wanted else None

    def _consume(self, spec: dict, outcome: dict | None, standings: Standings) -> dict | None:
        """Book match `spec` in schedule order; skip it if too few of its bots are left."""
        path = match_path(self.run_dir, spec["index"])
        reason = skip_reason(spec, standings)
        if reason:
            write_atomic(str(path), dumps({"format": FORMAT, "match": spec, "skipped": reason}))
            standings.skip(spec, reason)
            return None
        if outcome is None:
            data = json.loads(path.read_bytes())
            if "skipped" in data:
                standings.skip(spec, data["skipped"])
                return None
            summary = data["summary"]
        else:
            summary = outcome["summary"]
        booked = booked_spec(spec, stand_in_seats(spec, standings))
        standings.add(booked, summary)
        _note(booked, summary)
        judge(standings, booked, self.t.max_fault_share)
        return summary



def _note(spec: dict, summary: dict) -> None:
    """Faults and crashes to run.log, in schedule order like everything else."""
    for seat, (alias, s) in enumerate(zip(spec["seats"], summary["seats"])):
        if s["faults"]:
            faults = ", ".join(f"{k} {n}" for k, n in sorted(s["faults"].items()))
            log.info("match %d seat %d (%s): %s", spec["index"], seat, alias, faults)
        if "crashed_at" in s:
            log.warning("match %d seat %d (%s) crashed in hand %d", spec["index"], seat, alias, s["crashed_at"])


def stand_in_seats(spec: dict, standings: Standings) -> tuple[int, ...]:
    """The seats of match `spec` whose bot is disqualified: the stand-in plays them."""
    return tuple(i for i, a in enumerate(spec["seats"]) if a in standings.disqualified)


def booked_spec(spec: dict, stand_ins: tuple | list) -> dict:
    """`spec` as the standings book it: the stand-in's seats under its own alias, so a
    disqualified bot's results end where it was disqualified and chips still add up."""
    if not stand_ins:
        return spec
    return {**spec, "seats": [STAND_IN_ALIAS if i in stand_ins else a for i, a in enumerate(spec["seats"])]}


def skip_reason(spec: dict, standings: Standings) -> str | None:
    """Why match `spec` is not played: fewer than two bots left at the table once the
    disqualified are replaced by the stand-in, or a decided sequential test."""
    out = [a for a in spec["seats"] if a in standings.disqualified]
    if out and len(set(spec["seats"]) - set(out)) < 2:
        return "disqualified: " + ", ".join(sorted(set(out), key=out.index))
    if standings.sprt_decided(spec):
        return "sprt decided: " + standings.sprt.verdict
    return None


def end_of_unit(standings: Standings, spec: dict, following: dict | None) -> None:
    """Close the deal set of `spec` when the next match starts another (schedule order)."""
    unit = standings.unit_of(spec)
    if following is None or standings.unit_of(following) != unit:
        standings.close_unit(unit)


def standings_from_logs(run_dir: Path) -> dict:
    """Rebuild the standings from the run directory's logs alone (`naparena report`)."""
    return load_standings(run_dir).result()


def load_standings(run_dir: Path) -> Standings:
    """The standings accumulator, fed from a run directory's match files in schedule order."""
    run_dir = Path(run_dir)
    config = read_manifest(run_dir)["tournament"]
    variants = [v["name"] for v in config["variants"]]
    aliases = [b["alias"] for b in config["bots"]]
    sprt = SprtSpec(**config["sprt"]) if config.get("sprt") else None
    standings = Standings(variants, aliases + [STAND_IN_ALIAS], config["duplicate"], sprt)
    files = sorted((run_dir / MATCHES).glob("*.json"))
    data = json.loads(files[0].read_bytes()) if files else None
    for i in range(len(files)):
        following = json.loads(files[i + 1].read_bytes()) if i + 1 < len(files) else None
        spec = data["match"]
        if "skipped" in data:
            standings.skip(spec, data["skipped"])
        else:
            booked = booked_spec(spec, spec.get("stand_ins", ()))
            standings.add(booked, data["summary"])
            judge(standings, booked, config["max_fault_share"])
        end_of_unit(standings, spec, following["match"] if following else None)
        data = following
    return standings


def is_complete(run_dir: Path) -> bool:
    return len(list((Path(run_dir) / MATCHES).glob("*.json"))) == read_manifest(Path(run_dir))["matches"]


def judge(standings: Standings, spec: dict, share: float) -> None:
    """Disqualify a bot whose faults exceed the allowed share; decided in schedule order,
    so the same matches are skipped whatever order the workers finish in."""
    if share >= 1:
        return
    for alias in sorted(set(spec["seats"]) - {STAND_IN_ALIAS}):
        faults, decisions = standings.fault_share(alias)
        if decisions >= FAULT_MIN_DECISIONS and faults > share * decisions and alias not in standings.disqualified:
            standings.disqualified[alias] = {"after_match": spec["index"], "faults": faults, "decisions": decisions}
            log.warning("%s disqualified after match %d: %d faults in %d decisions",
                        alias, spec["index"], faults, decisions)
