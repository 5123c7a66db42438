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
from naparena.arena.logs import read_match
from naparena.arena.play import FORMAT, Job, dumps, play_job, write_atomic
from naparena.arena.pool import WorkerDied, WorkerLost, make_executor
from naparena.arena.schedule import (
    BOARDS_NOTE,
    board_seeds,
    bot_seed,
    schedule,
    seating_design,
    total_hands,
    uses_boards,
)
from naparena.arena.tournament import FAULT_MIN_DECISIONS, STAND_IN_ALIAS, SprtSpec, Tournament
from naparena.bots.plugins import DROP_IN_PACKAGE, bot_version, load_registry
from naparena.errors import ConfigError, RunError
from naparena.stats.standings import Standings

log = logging.getLogger("naparena")

MANIFEST, STANDINGS, MATCHES, WHERE = "manifest.json", "standings.json", "matches", "resume.json"
#: The bot that takes a disqualified bot's seat in the line-ups still to play (always registered).
STAND_IN_BOT = "random"

# A match whose worker is lost this often to something outside any bot stops the run.
MAX_LOSSES = 5


def write_file(path: str | Path, data: bytes) -> None:
    """`write_atomic`, with a full disk or a read-only folder as one clear error."""
    try:
        write_atomic(str(path), data)
    except OSError as e:
        raise RunError(f"{path}: cannot write it: {e.strerror or e}") from None


# --- in the worker --------------------------------------------------------------------

_registries: dict = {}


def _drop_in_key(folder: str | None) -> tuple:
    """What a worker's cached registry depends on: the folder and its files' mtimes."""
    if folder is None:
        return (None,)
    path = Path(folder).resolve()
    return (str(path),) + tuple(sorted((p.name, p.stat().st_mtime_ns) for p in path.glob("*.py")))


def run_job(job: Job) -> dict | tuple[dict, bytes]:
    """Worker entry point: play one match, write its log, return only its summary. A job
    without a path (played on another machine) returns (summary, log bytes) instead."""
    key = _drop_in_key(job.bots_dir)
    registry = _registries.get(key)
    if registry is None:
        registry = _registries[key] = load_registry(job.bots_dir)
    match_log = play_job(job, registry)
    if job.path is None:
        return match_log.summary, bytes(match_log)
    write_file(job.path, bytes(match_log))
    return match_log.summary


# --- the run directory ----------------------------------------------------------------

def bots_dir(t: Tournament) -> str | None:
    """The drop-in folder to load, or None when the default one is simply absent."""
    path = t.bots_path
    if t.bots_dir == "bots" and not path.exists():
        return None
    if not path.is_dir():
        problem = "is a file, not a folder" if path.exists() else "does not exist"
        raise ConfigError(t.path, "tournament.bots_dir", f"the drop-in bot folder {path} {problem}")
    return str(path.absolute())  # a worker whose bot changed directory must still find it


def registry_for(t: Tournament):
    registry = load_registry(bots_dir(t))
    if bots_dir(t) is None:
        registry.searched.append(f"no drop-in folder ({t.bots_path.resolve()} does not exist)")
    return registry


# Where things are on this machine is not what a run is: leave it out of the hash, so a
# run can be resumed from another directory or with --bots-dir.
# Nor is how bots are run: isolation and seat limits change no result, so a run can be
# resumed isolated that was started inline.
_NOT_HASHED = ("workers", "scheduler", "bots_dir", "log_dir", "isolation", "seats")
_NOT_RECORDED = ("workers", "scheduler")  # how a run is executed is not what it is


def config_hash(t: Tournament) -> str:
    config = {k: v for k, v in t.as_dict().items() if k not in _NOT_HASHED}
    config["bots"] = [{k: v for k, v in b.items() if k != "isolation"} for b in config["bots"]]
    return hashlib.blake2b(json.dumps(config, sort_keys=True).encode(), digest_size=4).hexdigest()


def manifest(t: Tournament, registry) -> dict:
    """What a run was: resolved configuration, versions, bot sources, seeds. No clock, no pids."""
    config = {k: v for k, v in t.as_dict().items() if k not in _NOT_RECORDED}
    bots = {b.alias: {"name": b.name, **(_command_identity(t, b) if b.command is not None
                                         else _identity(registry.get(b.name))),
                      "isolation": t.isolation_of(b)} for b in t.bots}
    out = {"format": FORMAT, "naparena": __version__, "python": platform.python_version(),
           "config_hash": config_hash(t), "tournament": config, "bots": bots,
           "seed": t.seed, "matches": len(schedule(t)), "hands": total_hands(t),
           "seating": seating_design(t)}
    boards = [v.name for v in t.variants if uses_boards(t, v)]
    if boards:  # said where it applies, so other manifests stay as they were
        out["duplicate_boards"] = {"variants": boards, "dealing": BOARDS_NOTE}
    return out


def _identity(entry) -> dict:
    """Where a bot comes from and which version, independent of where the run started:
    a drop-in file is named by its file name and the hash of its contents."""
    module = sys.modules.get(entry.cls.__module__)
    path = getattr(module, "__file__", None)
    if entry.cls.__module__.startswith(DROP_IN_PACKAGE + ".") and path:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        return {"source": f"drop-in file {Path(path).name}", "version": f"sha256:{digest}"}
    return {"source": entry.source, "version": bot_version(entry)}


def _command_identity(t: Tournament, bot) -> dict:
    """An external bot: its command as written and a hash of the files it names."""
    return {"source": "command", "command": list(bot.command), "version": t.command_hash(bot)}


def new_run_dir(t: Tournament, log_dir: str | Path | None = None) -> Path:
    """A fresh directory `<log_dir>/<name>-<config hash>[-N]`: earlier runs are never touched."""
    base = Path(log_dir or t.log_path)
    stem = f"{t.name}-{config_hash(t)}"
    path, n = base / stem, 1
    while path.exists():
        n += 1
        path = base / f"{stem}-{n}"
    return path


def make_run_dir(run_dir: Path) -> None:
    """Create the run directory (and its matches folder), or say plainly why it cannot be."""
    try:
        (run_dir / MATCHES).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        blocked = next((p for p in [run_dir, *run_dir.parents] if p.exists() and not p.is_dir()), None)
        why = f"{blocked} is a file, not a folder" if blocked else (e.strerror or str(e))
        raise RunError(f"{run_dir}: cannot create the run directory: {why}") from None


def _same_bots(run_dir: Path, old: dict | None, mine: dict) -> None:
    """Resuming must play the same bots: a drop-in file is known by its content hash, so an
    edited file, or another file of the same name (--bots-dir elsewhere), is refused."""
    old = old or {}
    for alias, now in mine.items():
        before = old.get(alias)
        if before != now:
            was = f"{before.get('source')} {before.get('version')}" if isinstance(before, dict) else "absent"
            raise RunError(f"{run_dir}: bot '{alias}' is not the one this run started with (then: {was};"
                           f" now: {now.get('source')} {now.get('version')}); start a new run")


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
        data = json.loads((run_dir / MANIFEST).read_bytes())
    except FileNotFoundError:
        raise RunError(f"{run_dir}: not a run directory (no {MANIFEST})") from None
    except NotADirectoryError:
        raise RunError(f"{run_dir}: not a run directory (it is a file)") from None
    except OSError as e:
        raise RunError(f"{run_dir / MANIFEST}: cannot read it: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RunError(f"{run_dir / MANIFEST}: not valid JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("tournament"), dict):
        raise RunError(f"{run_dir / MANIFEST}: damaged: no tournament configuration")
    return data


def match_path(run_dir: Path, index: int) -> Path:
    return run_dir / MATCHES / f"{index:06d}.json"


# --- the run --------------------------------------------------------------------------

Progress = Callable[[int, int, int], None]  # (matches done, hands done, hands this session)


class Run:
    """One run of a tournament into `run_dir`, fresh or resumed."""

    def __init__(self, t: Tournament, registry, run_dir: Path, workers: int | None = None,
                 scheduler: str | None = None):
        # Absolute: a bot that changes a worker's directory must not move where logs go.
        self.t, self.registry, self.run_dir = t, registry, Path(run_dir).absolute()
        self.workers = workers if workers else (t.workers or os.cpu_count() or 1)
        # A Dask scheduler (see arena/cluster.py), or "" for this machine's pool.
        self.scheduler = t.scheduler if scheduler is None else scheduler
        if self.scheduler == "none":
            self.scheduler = ""
        self.specs = [s.as_dict() for s in schedule(t)]
        self.aliases = [b.alias for b in t.bots]
        self.bots = {b.alias: b for b in t.bots}
        self.rules = {v.name: v.rules.as_dict() for v in t.variants}
        # How each bot is run: nothing extra inline; a seat process, and its argv if external.
        self.processes = {b.alias: _process(t, b) for b in t.bots}

    def prepare(self, resume: bool = False) -> int:
        """Write (or, resuming, check) the manifest; return how many matches are already done."""
        make_run_dir(self.run_dir)
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
            _same_bots(self.run_dir, old.get("bots"), mine["bots"])
        else:
            write_file(path, json.dumps(mine, indent=1, sort_keys=True).encode() + b"\n")
        # Absolute paths, for `naparena resume` from anywhere; kept out of the manifest,
        # which must not depend on where the run was started.
        drop_ins = bots_dir(self.t)
        where = {"file": str(Path(self.t.path).resolve()) if self.t.path else None,
                 "bots_dir": str(Path(drop_ins).resolve()) if drop_ins else None}
        write_file(self.run_dir / WHERE, json.dumps(where, indent=1).encode() + b"\n")
        self.clean()  # left by an interrupted worker; its match will be played again
        return sum(1 for s in self.specs if match_path(self.run_dir, s["index"]).exists())

    def clean(self) -> None:
        """Delete temporary files a stopped worker left half-written."""
        for tmp in (self.run_dir / MATCHES).glob("*.tmp*"):
            try:
                tmp.unlink()
            except OSError:
                pass

    def job(self, spec: dict, crashes: list | None = None, stand_ins: tuple = ()) -> Job:
        seats = []
        for i, alias in enumerate(spec["seats"]):
            b = self.bots[alias]
            # The stand-in is naparena's own random bot, played inline whatever the seat's bot was.
            name, params, process = (STAND_IN_BOT, {}, {}) if i in stand_ins else (b.name, b.params, self.processes[alias])
            seats.append({"alias": alias, "name": name, "params": params,
                          "seed": bot_seed(self.t.seed, spec["index"], i), **process})
        if stand_ins:  # the log says which seats the stand-in played
            spec = {**spec, "stand_ins": list(stand_ins)}
        return Job(index=spec["index"], seed=spec["seed"], variant=spec["variant"],
                   rules=self.rules[spec["variant"]], seats=seats, hands=spec["hands"],
                   stack=self.t.stack, timeout=self.t.timeout, bots_dir=bots_dir(self.t),
                   path=str(match_path(self.run_dir, spec["index"])), spec=spec, crashes=crashes or [],
                   confinement=self.t.seats.as_dict(),
                   boards=board_seeds(spec["seed"], spec["hands"]) if spec.get("boards") else None)

    def open_executor(self):
        """The executor this run asks for: a Dask cluster, or this machine's pool."""
        if self.scheduler:
            from naparena.arena.cluster import ClusterExecutor
            return ClusterExecutor(self.scheduler, self.registry, [b.name for b in self.t.bots], bots_dir(self.t))
        return make_executor(self.workers, self.t.timeout)

    def execute(self, progress: Progress | None = None, executor=None,
                notice: Callable[[str], None] | None = None) -> dict:
        """Play every match not yet done; return the standings (also written to disk).
        `notice` hears what the executor has to say (a cluster's workers and dashboard)."""
        standings = Standings([v.name for v in self.t.variants], self.aliases + [STAND_IN_ALIAS],
                              self.t.duplicate, self.t.sprt)
        own = executor is None
        if own:
            executor = self.open_executor()
        if notice and getattr(executor, "description", None):
            notice(executor.description)
        self.losses: dict[int, list] = {}
        try:
            self._play_all(standings, executor, progress)
        except BaseException:
            if own:
                getattr(executor, "terminate", executor.shutdown)()
                self.clean()
            raise
        if own:
            executor.shutdown()
        self._check_files()
        result = standings.result()
        write_file(self.run_dir / STANDINGS, json.dumps(result, indent=1, sort_keys=True).encode() + b"\n")
        return result

    def _check_files(self) -> None:
        """Every file the run wrote must still be there before it says it is done (a bot,
        or anything else, may have deleted one meanwhile)."""
        gone = [MANIFEST] if not (self.run_dir / MANIFEST).exists() else []
        gone += [f"{MATCHES}/{match_path(self.run_dir, s['index']).name}" for s in self.specs
                 if not match_path(self.run_dir, s["index"]).exists()]
        if gone:
            shown = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
            raise RunError(f"{self.run_dir}: {shown} disappeared while the run went on (deleted by a bot?);"
                           " no standings were written")

    def _play_all(self, standings: Standings, executor, progress: Progress | None) -> None:
        # Bounded look-ahead keeps memory flat; a cluster says how many matches it plays at once.
        window = max(2, getattr(executor, "workers", self.workers) * 3)
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
        except WorkerLost as lost:
            if not self._lost(spec, lost):
                futures[executor.submit(run_job, self.job(spec, crashes, stand_ins))] = (spec, crashes, stand_ins)
                return
            crash = self._crash(spec, lost, crashes)
            job = self.job(spec, crashes + [crash], stand_ins)
            futures[executor.submit(run_job, job)] = (spec, crashes + [crash], stand_ins)
        except WorkerDied as died:
            crash = self._crash(spec, died, crashes)
            job = self.job(spec, crashes + [crash], stand_ins)
            futures[executor.submit(run_job, job)] = (spec, crashes + [crash], stand_ins)
        except RunError:
            raise
        except RuntimeError as e:  # not a bot's doing: the engine or the runner failed
            raise RunError(f"match {spec['index']} failed outside any bot: {e}") from None

    def _lost(self, spec: dict, lost: WorkerLost) -> bool:
        """A worker lost to something outside any bot: replay the match on a fresh one.
        True when it is lost again in the same bot call: the bot does it (say, by killing
        its own process), so it is charged as a crash after all."""
        w = lost.where
        place = (w["hand"], w["seat"], w["decision"]) if w["match"] == spec["index"] and w["seat"] >= 0 else None
        seen = self.losses.setdefault(spec["index"], [])
        if place is not None and place in seen:
            return True
        seen.append(place)
        log.warning("match %d: worker lost (%s); playing the match again", spec["index"], lost.reason)
        if len(seen) >= MAX_LOSSES:
            raise RunError(f"match {spec['index']}: its worker was lost {len(seen)} times to something"
                           f" outside any bot (last: {lost.reason})")
        return False

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
            data = read_match(match_path(self.run_dir, spec["index"]), spec)
            played = None if "skipped" in data else tuple(data["match"].get("stand_ins", ()))
        else:
            played = outcome["stand_ins"]
        return wanted if played != wanted else None

    def _consume(self, spec: dict, outcome: dict | None, standings: Standings) -> dict | None:
        """Book match `spec` in schedule order; skip it if too few of its bots are left."""
        path = match_path(self.run_dir, spec["index"])
        reason = skip_reason(spec, standings)
        if reason:
            write_file(path, dumps({"format": FORMAT, "match": spec, "skipped": reason}))
            standings.skip(spec, reason)
            return None
        if outcome is None:
            data = read_match(path, spec)
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



def _process(t: Tournament, bot) -> dict:
    if t.isolation_of(bot) != "process":
        return {}
    return {"isolation": "process", **({"command": t.command_of(bot)} if bot.command is not None else {})}


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
    disqualified bot's results end where it was disqualified and chips still add up; the
    scheduled seats stay in `lineup`, so its boards there are left out of its intervals."""
    if not stand_ins:
        return spec
    return {**spec, "seats": [STAND_IN_ALIAS if i in stand_ins else a for i, a in enumerate(spec["seats"])],
            "lineup": list(spec["seats"])}


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
    try:
        variants = [v["name"] for v in config["variants"]]
        aliases = [b["alias"] for b in config["bots"]]
        sprt = SprtSpec(**config["sprt"]) if config.get("sprt") else None
        standings = Standings(variants, aliases + [STAND_IN_ALIAS], config["duplicate"], sprt)
        share = float(config["max_fault_share"])
    except (KeyError, TypeError, ValueError) as e:
        raise RunError(f"{run_dir / MANIFEST}: damaged tournament configuration ({e})") from None
    files = sorted((run_dir / MATCHES).glob("*.json"))
    data = read_match(files[0]) if files else None
    for i in range(len(files)):
        following = read_match(files[i + 1]) if i + 1 < len(files) else None
        spec = data["match"]
        if "skipped" in data:
            standings.skip(spec, data["skipped"])
        else:
            if spec.get("variant") not in variants or not set(spec.get("seats", ())) <= set(aliases):
                raise RunError(f"{files[i]}: names a variant or bot this run does not have")
            booked = booked_spec(spec, spec.get("stand_ins", ()))
            standings.add(booked, data["summary"])
            judge(standings, booked, share)
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
