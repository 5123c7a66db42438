"""The run directory, one owner for it: its layout and file names (the only module that
writes them), the manifest (what a run was) and the check that a resumed run is the same
one, where a run's tournament file and bots are, the config hash that names it, and
reading and writing its match logs (in the format of `logs.py`), all written atomically.

    <log_dir>/<name>-<config hash>[-N]/
        manifest.json    resolved configuration, versions, bot sources, seeds
        resume.json      where the tournament file and drop-in bots are (for `resume`)
        matches/NNNNNN.json   one match log each (`logs.py`)
        standings.json   written once every match is booked
        signature.json   the organizer's Ed25519 signature of every file's hash (`signing.py`)
        run.log          faults, crashes and warnings, for people (not canonical)
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from naparena._version import __version__
from naparena.arena.records import jsontext
from naparena.arena.records.checkpoint import saved_hand, saved_hands
from naparena.arena.records.logs import FORMAT, LoggedMatch, dumps, other_format, read_match, write_atomic
from naparena.arena.setup.reader import tournament_from_record
from naparena.arena.setup.schedule import BOARDS_NOTE, MatchSpec, schedule, seating_design, total_hands, uses_boards
from naparena.arena.setup.tournament import BotSpec, Tournament
from naparena.bots.plugins import DROP_IN_PACKAGE, BotEntry, Registry, bot_version
from naparena.errors import ConfigError, RunError

MANIFEST, STANDINGS, MATCHES, WHERE = "manifest.json", "standings.json", "matches", "resume.json"
RUN_LOG = "run.log"
SIGNATURE = "signature.json"  # written and read by records/signing.py alone
#: The manifest's key naming the public key a run is signed with (run --sign, resume --sign),
#: so that plain `verify` tells a signed run whose signature is gone.
SIGNED_BY = "signed_by"
CHECKPOINTS = "checkpoints"  # long matches part-played (records/checkpoint.py)


def write_file(path: str | Path, data: bytes) -> None:
    """`write_atomic`, with a full disk or a read-only folder as one clear error."""
    try:
        write_atomic(str(path), data)
    except OSError as e:
        raise RunError(f"{path}: cannot write it: {e.strerror or e}") from None


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


def manifest(t: Tournament, registry: Registry) -> dict[str, Any]:
    """What a run was: resolved configuration, versions, bot sources, seeds. No clock, no pids."""
    config = {k: v for k, v in t.as_dict().items() if k not in _NOT_RECORDED}
    bots = {b.alias: bot_identity(t, b, registry) for b in t.bots}
    out = {"format": FORMAT, "naparena": __version__, "python": platform.python_version(),
           "config_hash": config_hash(t), "tournament": config, "bots": bots,
           "seed": t.seed, "matches": len(schedule(t)), "hands": total_hands(t),
           "seating": seating_design(t)}
    boards = [v.name for v in t.variants if uses_boards(t, v)]
    if boards:  # said where it applies, so other manifests stay as they were
        out["duplicate_boards"] = {"variants": boards, "dealing": BOARDS_NOTE}
    return out


def bot_identity(t: Tournament, bot: BotSpec, registry: Registry) -> dict[str, Any]:
    """A bot's line in the manifest: its name, where it comes from, its version or code hash,
    and how it is run."""
    source = _command_identity(t, bot) if bot.command is not None else _identity(registry.get(bot.name))
    return {"name": bot.name, **source, "isolation": t.isolation_of(bot)}


def _identity(entry: BotEntry) -> dict[str, Any]:
    """Where a bot comes from and which version, independent of where the run started:
    a drop-in file is named by its file name and the hash of its contents."""
    module = sys.modules.get(entry.cls.__module__)
    path = getattr(module, "__file__", None)
    if entry.cls.__module__.startswith(DROP_IN_PACKAGE + ".") and path:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        return {"source": f"drop-in file {Path(path).name}", "version": f"sha256:{digest}"}
    return {"source": entry.source, "version": bot_version(entry)}


def _command_identity(t: Tournament, bot: BotSpec) -> dict[str, Any]:
    """An external bot: its command as written and a hash of the files it names."""
    return {"source": "command", "command": list(bot.command or ()), "version": t.command_hash(bot)}


def new_run_dir(t: Tournament, log_dir: str | Path | None = None) -> Path:
    """A fresh directory `<log_dir>/<name>-<config hash>[-N]`: earlier runs are never touched."""
    base = Path(log_dir or t.log_path)
    stem = f"{t.name}-{config_hash(t)}"
    path, n = base / stem, 1
    while path.exists():
        n += 1
        path = base / f"{stem}-{n}"
    return path


def run_places(t: Tournament, *runs: str | Path) -> dict[str, str]:
    """Where runs of `t` are, each with what it is, for the seat sandbox to hide: the log
    folder as this process resolves it (from the working directory), the one beside the
    tournament file (where a run started from that folder wrote: the same file's runs
    have the same deals), each of `runs` (the run directory; a re-run's, and the run it
    replays), and every run beside one (`--log-dir`, or a run resumed or verified from
    another folder)."""
    places = {str(t.log_path.absolute()): "the log folder"}
    if t.path and not Path(t.log_dir).is_absolute():
        places.setdefault(str((t.base / t.log_dir).absolute()), "the log folder beside the tournament file")
    for run in (Path(r).absolute() for r in runs if r):
        try:
            beside = sorted(p for p in run.parent.iterdir() if p != run and _is_run(p))
        except OSError:
            beside = []
        places.update((str(p), "a run beside the run directory") for p in beside)
        places[str(run)] = "the run directory"
    return places


def _is_run(path: Path) -> bool:
    return (path / MANIFEST).is_file() or (path / MATCHES).is_dir()


def make_run_dir(run_dir: Path) -> None:
    """Create the run directory (and its matches folder), or say plainly why it cannot be."""
    try:
        (run_dir / MATCHES).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        blocked = next((p for p in [run_dir, *run_dir.parents] if p.exists() and not p.is_dir()), None)
        why = f"{blocked} is a file, not a folder" if blocked else (e.strerror or str(e))
        raise RunError(f"{run_dir}: cannot create the run directory: {why}") from None


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


def read_where(run_dir: Path) -> dict[str, Any]:
    """Where a run's tournament file and drop-in bots are (absolute), for resuming it."""
    try:
        where: dict[str, Any] = json.loads((Path(run_dir) / WHERE).read_text())
        return where
    except (FileNotFoundError, json.JSONDecodeError):
        m = read_manifest(Path(run_dir))
        return {"file": m.get("source"), "bots_dir": None}


def read_manifest(run_dir: Path) -> dict[str, Any]:
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


@dataclass(frozen=True)
class Manifest:
    """A run's manifest as read back, typed: what the run was. The tournament's
    configuration stays the plain record it was written as (`Tournament.as_dict()`);
    `tournament()` of `records/run.py` builds it again through the file's reader."""

    format: int
    naparena: str
    python: str
    config_hash: str
    seed: int
    matches: int
    hands: int
    tournament: Mapping[str, Any]
    bots: Mapping[str, Mapping[str, Any]]  # alias -> name, source, version, isolation
    seating: Mapping[str, Any]
    fields: Mapping[str, Any]  # every key as written, for the checks that compare them

    @property
    def name(self) -> str:
        return str(self.tournament.get("name", ""))

    @classmethod
    def of(cls, data: Mapping[str, Any], where: Path) -> Manifest:
        """The manifest `data` read from `where`: a run of another log format, or a key
        missing or of the wrong type, is one clear `RunError`."""
        if data.get("format") != FORMAT:
            raise RunError(f"{where}: {other_format(data).replace('not a match log', 'not a manifest')}")
        typed: dict[str, Any] = {}
        for key, kind in (("naparena", str), ("python", str), ("config_hash", str), ("seed", int),
                          ("matches", int), ("hands", int), ("tournament", dict), ("bots", dict),
                          ("seating", dict)):
            value = data.get(key)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise RunError(f"{where}: damaged: '{key}' must be {_KINDS[kind]}, got {value!r}")
            typed[key] = value
        if not all(isinstance(v, dict) for v in typed["bots"].values()):
            raise RunError(f"{where}: damaged: 'bots' must map each alias to a table")
        return cls(format=FORMAT, fields=dict(data), **typed)


_KINDS: dict[type, str] = {str: "text", int: "a whole number", dict: "a table"}


def match_path(run_dir: Path, index: int) -> Path:
    return run_dir / MATCHES / match_name(index)


def match_name(index: int) -> str:
    return f"{index:06d}.json"


def is_complete(run_dir: Path) -> bool:
    return len(list((Path(run_dir) / MATCHES).glob("*.json"))) == RunDir(run_dir).load_manifest().matches


class RunDir:
    """One run directory: where each of its files is, and reading and writing them."""

    def __init__(self, path: str | Path | RunDir):
        given: Path = path.given if isinstance(path, RunDir) else Path(path)
        self.given: Path = given  # as the user named it, for messages
        # Absolute: a bot that changes a worker's directory must not move where logs go.
        self.path: Path = given.absolute()
        self.manifest = given / MANIFEST
        self.standings = given / STANDINGS
        self.matches = given / MATCHES
        self.where = given / WHERE
        self.signature = given / SIGNATURE
        self.log = given / RUN_LOG

    def __str__(self) -> str:
        return str(self.given)

    def make(self) -> None:
        make_run_dir(self.path)

    def started(self) -> bool:
        """Whether a run was started here (its manifest is written)."""
        return self.manifest.exists()

    # --- the manifest and where the run came from ---

    def read_manifest(self) -> dict[str, Any]:
        return read_manifest(self.given)

    def load_manifest(self) -> Manifest:
        """The manifest, typed (`Manifest.of`)."""
        return Manifest.of(self.read_manifest(), self.manifest)

    def recorded_tournament(self, manifest: Manifest | None = None) -> Tournament:
        """The tournament the manifest (read here unless given) records, built by the
        file's reader (the one builder of a `Tournament`); a damaged record is one clear
        `RunError`."""
        config = (manifest or self.load_manifest()).tournament
        try:
            return tournament_from_record(config, str(self.manifest))
        except ConfigError as e:
            raise RunError(f"{self.manifest}: damaged tournament configuration ({e.key}: {e.message})") from None

    def write_manifest(self, data: dict[str, Any]) -> None:
        write_file(self.manifest, jsontext.dumps(data, indent=1, sort_keys=True).encode() + b"\n")

    def check_format(self) -> dict[str, Any]:
        """The manifest, if this naparena can resume the run it describes."""
        old = self.read_manifest()
        if old.get("format") != FORMAT:  # before the hash, which another format computes differently
            raise RunError(f"{self.given}: {other_format(old).replace('match log', 'run')}; "
                           "resume it with the version that started it")
        return old

    def mark_signed(self, public: str) -> None:
        """Record in the manifest who signs the run (its other keys as they were)."""
        data = self.read_manifest()
        if data.get(SIGNED_BY) != public:
            self.write_manifest({**data, SIGNED_BY: public})

    def check_resume(self, mine: dict[str, Any], source: str | None) -> None:
        """Resuming must play the same run: same log format, configuration and bots."""
        old = self.check_format()
        if old.get("config_hash") != mine["config_hash"]:
            what = f"{source} has changed since {self.given} was started" if source else \
                f"{self.given}: was run with another configuration"
            raise RunError(f"{what}; start a new run")
        _same_bots(self.path, old.get("bots"), mine["bots"])

    def read_where(self) -> dict[str, Any]:
        return read_where(self.given)

    def write_where(self, file: str | None, bots_dir: str | None, folder: str | None = None) -> None:
        """Absolute paths, for `naparena resume` from anywhere; kept out of the manifest,
        which must not depend on where the run was started. A tournament with no file (built
        from a mapping) is resumed from the manifest's record: `folder` is where the relative
        paths it names are from."""
        where: dict[str, Any] = {"file": str(Path(file).resolve()) if file else None,
                                 "bots_dir": str(Path(bots_dir).resolve()) if bots_dir else None}
        if not file and folder:
            where["folder"] = folder
        write_file(self.where, jsontext.dumps(where, indent=1).encode() + b"\n")

    # --- match logs ---

    def match_path(self, index: int) -> Path:
        """Absolute: workers write it, and a bot may change a worker's directory."""
        return match_path(self.path, index)

    def match_files(self) -> list[Path]:
        """The match files on disk, in schedule order (by name: they share a folder, and
        comparing paths part by part was a tenth of a league's rebuild)."""
        return sorted(self.matches.glob("*.json"), key=lambda p: p.name)

    def kept(self) -> int:
        return len(self.match_files())

    def checkpoint_path(self, index: int) -> Path:
        """Where match `index`'s checkpoint state goes while it is played (absolute, as a log's)."""
        return self.path / CHECKPOINTS / f"{index:06d}.json"

    def checkpoint_files(self) -> set[Path]:
        """The checkpoints on disk now, from one listing (none: no folder)."""
        try:
            return {self.path / CHECKPOINTS / name for name in os.listdir(self.path / CHECKPOINTS)}
        except (FileNotFoundError, NotADirectoryError):
            return set()

    def checkpointed_hand(self, index: int, n: int) -> dict[str, Any] | None:
        """Hand `n` of match `index` as its checkpoint holds it, while the match is played."""
        return saved_hand(self.checkpoint_path(index), n)

    def checkpointed(self) -> tuple[int, int]:
        """(matches, hands) kept part-played in checkpoints, to be continued by a resume."""
        folder = self.given / CHECKPOINTS
        hands = [saved_hands(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
        return sum(1 for h in hands if h), sum(hands)

    def drop_checkpoints(self) -> None:
        """The finished run's empty checkpoints folder goes: the run is its logs."""
        try:
            (self.path / CHECKPOINTS).rmdir()
        except OSError:
            pass

    def has_match(self, index: int) -> bool:
        return self.match_path(index).exists()

    def done_matches(self) -> set[int]:
        """The matches whose files are on disk, from one listing of the folder (`has_match`
        for every match of a league of 1,000 bots was 72,000 stat calls)."""
        try:
            names = set(os.listdir(self.matches))
        except (FileNotFoundError, NotADirectoryError):
            return set()
        stems = (name.removesuffix(".json") for name in names)
        return {int(s) for s in stems if s.isascii() and s.isdigit() and match_name(int(s)) in names}

    def read_match(self, index: int, spec: MatchSpec | None = None) -> LoggedMatch:
        """Match `index` read back and checked (against its schedule entry `spec`, if given)."""
        return read_match(self.match_path(index), spec)

    def read_match_file(self, path: Path) -> LoggedMatch:
        return read_match(path)

    def write_skipped(self, spec: MatchSpec, reason: str) -> None:
        """The stub of a match not played, written over its log if it was played ahead."""
        write_file(self.match_path(spec.index), dumps({"format": FORMAT, "match": spec.as_dict(), "skipped": reason}))

    def write_standings(self, result: dict[str, Any]) -> None:
        write_file(self.standings, jsontext.dumps(result, indent=1, sort_keys=True).encode() + b"\n")

    def clean(self) -> None:
        """Delete temporary files a stopped worker left half-written."""
        for tmp in [*self.matches.glob("*.tmp*"), *(self.path / CHECKPOINTS).glob("*.tmp*")]:
            try:
                tmp.unlink()
            except OSError:
                pass

    def missing(self, indices: list[int]) -> list[str]:
        """The files of the run, among the manifest and these matches, no longer on disk."""
        gone = [MANIFEST] if not self.manifest.exists() else []
        done = self.done_matches()
        return gone + [f"{MATCHES}/{self.match_path(i).name}" for i in indices if i not in done]

    def is_complete(self) -> bool:
        return is_complete(self.given)


def _same_bots(run_dir: Path, old: dict[str, Any] | None, mine: dict[str, Any]) -> None:
    """Resuming must play the same bots: a drop-in file is known by its content hash, so an
    edited file, or another file of the same name (--bots-dir elsewhere), is refused."""
    old = old or {}
    for alias, now in mine.items():
        before = old.get(alias)
        if before != now:
            was = f"{before.get('source')} {before.get('version')}" if isinstance(before, dict) else "absent"
            raise RunError(f"{run_dir}: bot '{alias}' is not the one this run started with (then: {was};"
                           f" now: {now.get('source')} {now.get('version')}); start a new run")
