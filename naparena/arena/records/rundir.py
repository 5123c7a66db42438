"""The run directory: its layout and file names, the manifest (what a run was) and where a
run's tournament file and bots are, the config hash that names it, and atomic writes.

    <log_dir>/<name>-<config hash>[-N]/
        manifest.json    resolved configuration, versions, bot sources, seeds
        resume.json      where the tournament file and drop-in bots are (for `resume`)
        matches/NNNNNN.json   one match log each (`logs.py`)
        standings.json   written once every match is booked
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from pathlib import Path

from naparena._version import __version__
from naparena.arena.records.logs import FORMAT, write_atomic
from naparena.arena.setup.schedule import BOARDS_NOTE, schedule, seating_design, total_hands, uses_boards
from naparena.arena.setup.tournament import Tournament
from naparena.bots.plugins import DROP_IN_PACKAGE, bot_version
from naparena.errors import RunError

MANIFEST, STANDINGS, MATCHES, WHERE = "manifest.json", "standings.json", "matches", "resume.json"


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


def is_complete(run_dir: Path) -> bool:
    return len(list((Path(run_dir) / MATCHES).glob("*.json"))) == read_manifest(Path(run_dir))["matches"]
