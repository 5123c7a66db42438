"""`naparena verify --rerun` and `--tournament`: results no one can forge.

`verify` alone shows that a run's files agree with each other; a forger who re-simulates
with naparena's own engine and recomputes summaries, standings and the manifest's hash
passes it. Every run is deterministic, so the bots themselves can say what they played:
`rerun` plays every match again with the recorded bots, seeds, isolation and sandbox
setting into a scratch directory and requires the same files byte for byte. Time is the
one input a re-run cannot repeat: a logged time-out or hang is taken as given (that seat
faults at the same decision without being asked) and listed, so a reader can judge it.
`tournament_differences` names every way a run is not the one a tournament file describes.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from naparena.arena.records.logs import LoggedMatch
from naparena.arena.records.rundir import MANIFEST, MATCHES, STANDINGS, RunDir, bot_identity, manifest
from naparena.arena.records.verify import time_dependent
from naparena.arena.session import Session, registry_for, shake_hands
from naparena.arena.setup.reader import check_bots, load_tournament
from naparena.arena.setup.schedule import MatchSpec
from naparena.arena.setup.tournament import Tournament
from naparena.bots.plugins import Registry, load_registry
from naparena.errors import ConfigError, PluginError, RunError

#: Fault reasons that depend on the machine's speed, not on the bot alone.
TIME_DEPENDENT = ("time-out", "hang:")
#: Manifest keys that say which naparena and Python wrote a run: a re-run elsewhere may differ.
MACHINE_KEYS = ("naparena", "python")
#: Manifest keys that say who vouches for a run, not what it was: a re-run is not signed.
NOT_REPLAYED = ("signed_by",)
#: Tournament keys not compared with a file: where a run's files are on one machine, and how
#: its bots were run (the command line may override both, and neither changes a result).
NOT_COMPARED = ("log_dir", "bots_dir", "isolation", "seats")


@dataclass
class Rerun:
    """What playing a run again found."""

    matches: int = 0                                                  # match files compared
    problems: list[tuple[str, str]] = field(default_factory=list)     # (file, how it differs)
    unrunnable: list[tuple[str, str]] = field(default_factory=list)   # (bot alias, why not)
    given: list[tuple[str, str]] = field(default_factory=list)        # (file, time-out taken as given)
    notes: list[str] = field(default_factory=list)


def recorded_tournament(rd: RunDir) -> Tournament:
    """The run's tournament as its manifest records it, placed where the run's file was
    (drop-in folder and external programs are found relative to it, as in the run)."""
    rd.check_format()
    where = rd.read_where()
    return dataclasses.replace(rd.recorded_tournament(), path=where.get("file") or "", folder=where.get("folder") or "")


def unrunnable(t: Tournament, registry: Registry, recorded: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Each bot that cannot be played again as the run played it, and why."""
    out = []
    for bot in t.bots:
        then = recorded.get(bot.alias) or {}
        if bot.command is not None:
            program = t.command_of(bot)[0]
            if shutil.which(program) is None:
                out.append((bot.alias, f"its program {bot.command[0]} is missing"))
                continue
        else:
            try:
                registry.get(bot.name)
            except PluginError:
                out.append((bot.alias, f"no bot '{bot.name}' is installed or in the drop-in folder"))
                continue
        now = bot_identity(t, bot, registry)
        changed = [k for k in ("source", "command", "version") if now.get(k) != then.get(k)]
        if changed:
            word = "code hash" if str(now.get("version", "")).startswith("sha256:") else changed[-1]
            out.append((bot.alias, f"its {word} is {now.get(changed[-1])!r} now, the run's was "
                                   f"{then.get(changed[-1])!r} ({then.get('source')})"))
    return out


def rerun(run_dir: str | Path, scratch: str | Path, workers: int | None = None) -> Rerun:
    """Play the run in `run_dir` again into `scratch` (a fresh folder) and compare."""
    rd = RunDir(run_dir)
    t = recorded_tournament(rd)
    found = Rerun()
    try:
        registry = registry_for(t)
    except ConfigError:  # its drop-in folder is gone: the bots it held are named below
        registry = load_registry(None)
    found.unrunnable = unrunnable(t, registry, rd.load_manifest().bots)
    if found.unrunnable:
        return found
    try:
        t = check_bots(t, registry)
        shake_hands(t, registry)
    except ConfigError as e:
        found.unrunnable.append(("", str(e)))
        return found
    session = Session(t, registry, Path(scratch), workers, replaying=rd.path)
    for spec in session.specs:
        logged = _logged(rd, spec)
        if logged is not None and logged.skipped is None:
            hangs, time_outs = time_dependent(logged.data)
            session.given[spec.index] = (hangs, time_outs)
            name = f"{MATCHES}/{rd.match_path(spec.index).name}"
            found.given += [(name, f"hand {h}, seat {s}, decision {d}: {r}") for h, s, d, r in time_outs]
            found.given += [(name, f"hand {h}, seat {s}, decision {d}: {r}") for h, s, d, r in hangs]
    try:
        session.play()
    except RunError as e:
        found.problems.append(("", f"the re-run stopped: {e}"))
        return found
    _compare(rd, session.run_dir, session.specs, found)
    return found


def _logged(rd: RunDir, spec: MatchSpec) -> LoggedMatch | None:
    """A match's log, if it is on disk and readable (plain `verify` names the others)."""
    if not rd.has_match(spec.index):
        return None
    try:
        return rd.read_match(spec.index)
    except RunError:
        return None


def _compare(rd: RunDir, again: RunDir, specs: list[MatchSpec], found: Rerun) -> None:
    """Every file of the run against the re-run's: the same bytes, or say how they differ."""
    logged, replayed = rd.read_manifest(), again.read_manifest()
    for key in sorted(set(logged) | set(replayed)):
        if logged.get(key) == replayed.get(key) or key in NOT_REPLAYED:
            continue
        if key in MACHINE_KEYS:
            found.notes.append(f"the run was made with {key} {logged.get(key)}, the re-run with {replayed.get(key)}")
        else:
            found.problems.append((MANIFEST, f"'{key}' is not what the re-run records"))
    for spec in specs:
        path = rd.match_path(spec.index)
        if not path.exists():
            continue  # not played yet
        found.matches += 1
        mine, theirs = path.read_bytes(), again.match_path(spec.index).read_bytes()
        if mine != theirs:
            found.problems.append((f"{MATCHES}/{path.name}", "differs from its re-run: " + _difference(mine, theirs)))
    if rd.standings.exists() and rd.standings.read_bytes() != again.standings.read_bytes():
        found.problems.append((STANDINGS, "differs from the re-run's standings"))


def _difference(mine: bytes, theirs: bytes) -> str:
    """Where a match log first departs from its re-run, in words."""
    try:
        a, b = json.loads(mine), json.loads(theirs)
    except ValueError:
        return "it is not valid JSON"
    if not isinstance(a, dict):
        return "it is not a match log"
    said = [f"'{k}'" for k in sorted(set(a) | set(b)) if k not in ("hands", "summary") and a.get(k) != b.get(k)]
    for x, y in zip(a.get("hands") or [], b.get("hands") or []):
        if x != y:
            keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
            said.append(f"hand {x.get('n')} (in {', '.join(keys)})")
            if _new_time_out(x, y):
                said.append("the re-run timed out where the log has an answer (a slower or busier machine?"
                            " try fewer --workers)")
            break
    if not said:
        said.append("its summary" if a.get("summary") != b.get("summary") else "its bytes")
    return ", ".join(said)


def _new_time_out(logged: dict[str, Any], again: dict[str, Any]) -> bool:
    before = {tuple(f[:2]) for f in logged.get("faults", ()) if str(f[3]).startswith(TIME_DEPENDENT)}
    return any(tuple(f[:2]) not in before for f in again.get("faults", ()) if str(f[3]).startswith(TIME_DEPENDENT))


# --- the run a tournament file describes ------------------------------------------------

def described_run(file: str | Path) -> dict[str, Any]:
    """The manifest a run of tournament `file` would have (its bots loaded and checked):
    read before anything long, so a bad file is told at once."""
    t = load_tournament(file)
    registry = registry_for(t)
    return manifest(check_bots(t, registry), registry)


def tournament_differences(run_dir: str | Path, file: str | Path, described: dict[str, Any] | None = None) -> list[str]:
    """Every way the run in `run_dir` is not the one tournament `file` describes (its
    `described_run`, if read already): its settings, bots (name, params, command, version
    or code hash), variants and rules, and so its seeds and schedule. `NOT_COMPARED` keys
    are not. Empty when it is that run."""
    run = RunDir(run_dir).load_manifest()
    recorded = run.fields
    described = described if described is not None else described_run(file)
    config = run.tournament
    out = _config_differences(config, described["tournament"], str(file))
    out += _bot_differences(run.bots, described["bots"])
    for key in sorted(set(recorded) | set(described)):
        if key in (*MACHINE_KEYS, *NOT_REPLAYED, "tournament", "bots") or (out and key == "config_hash"):
            continue
        if key in described["tournament"] and config.get(key) != described["tournament"][key]:
            continue  # a setting the manifest repeats (the seed): told once, above
        if recorded.get(key) != described.get(key):
            out.append(f"'{key}' is {recorded.get(key)!r} in the run, {described.get(key)!r} by the file")
    return out


def _config_differences(run: Mapping[str, Any], described: dict[str, Any], file: str) -> list[str]:
    out = []
    for key in sorted(set(run) | set(described)):
        if key in NOT_COMPARED or run.get(key) == described.get(key):
            continue
        if key in ("bots", "variants"):
            out += _listed(key, run.get(key) or [], described.get(key) or [])
        else:
            out.append(f"'{key}' is {run.get(key)!r} in the run, {described.get(key)!r} in {file}")
    return out


def _listed(key: str, run: list[dict[str, Any]], described: list[dict[str, Any]]) -> list[str]:
    """Bots by alias, variants by name: missing, extra, or differing in a field."""
    label = "alias" if key == "bots" else "name"
    ran = {e.get(label): e for e in run}
    given = {e.get(label): e for e in described}
    noun = "bot" if key == "bots" else "variant"
    out = [f"{noun} '{n}' is in the run, not in the file" for n in ran if n not in given]
    out += [f"{noun} '{n}' is in the file, not in the run" for n in given if n not in ran]
    for n in ran.keys() & given.keys():
        for field_name in sorted((set(ran[n]) | set(given[n])) - set(NOT_COMPARED)):
            a, b = ran[n].get(field_name), given[n].get(field_name)
            if a != b:
                out.append(f"{noun} '{n}': {field_name} {a!r} in the run, {b!r} in the file")
    if not out and [e.get(label) for e in run] != [e.get(label) for e in described]:
        out.append(f"the {key} are listed in another order (so the schedule differs)")
    return out


def _bot_differences(run: Mapping[str, Mapping[str, Any]], described: dict[str, Any]) -> list[str]:
    out = []
    for alias in sorted(run.keys() & described.keys()):
        for key in ("source", "command", "version"):
            if run[alias].get(key) != described[alias].get(key):
                out.append(f"bot '{alias}': {key} {run[alias].get(key)!r} in the run, "
                           f"{described[alias].get(key)!r} now")
    return out
