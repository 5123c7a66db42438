"""What crosses between a run and its Dask workers (`cluster.py` sends, `dask_worker.py`
plays): the drop-in bot files by content, what a batch's outcomes look like, and the
bots' identities, which must be the same on every machine."""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from naparena._version import __version__
from naparena.bots.plugins import DROP_IN_PACKAGE, Registry
from naparena.errors import PluginError

# Drop-in bot files as they travel: (digest, ((file name, content), ...)).
DropIns = tuple[str, tuple[tuple[str, bytes], ...]]
# Where a worker on a shared file system writes a batch's logs: (token file, its nonce, paths).
Shared = tuple[str, str, list[str]]
# One match's outcome on a worker: ("ok", summary, log bytes or None, records, seconds),
# ("died", reason, where), ("error", message) or ("mismatch", message).
Outcome = tuple[Any, ...]
# A machine's naparena and bots, as `describe_bots` gives them.
Identity = dict[str, Any]


@functools.cache
def code_digest() -> str:
    """A hash of naparena's own source: two machines with one version number but other
    code would not give the same logs."""
    root = Path(__file__).resolve().parents[2]  # the naparena package
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def describe_bots(registry: Registry, names: Iterable[str]) -> Identity:
    """This machine's naparena and, for each bot name, where the bot comes from (in words
    that do not depend on paths) with a hash of the file defining it, or why it is missing."""
    bots: dict[str, dict[str, str]] = {}
    for name in names:
        if name not in registry.bots and name not in registry.clashes:
            bots[name] = {"error": "not installed there"}
            continue
        try:
            entry = registry.get(name)
        except PluginError as e:  # two plug-ins register the name
            bots[name] = {"error": str(e)}
            continue
        path = getattr(sys.modules.get(entry.cls.__module__), "__file__", None)
        if entry.cls.__module__.startswith(DROP_IN_PACKAGE + ".") and path:
            source = f"drop-in file {Path(path).name}"  # as the manifest names it: no folder
        else:
            source = entry.source  # an installed plug-in's names its package and version
        h = hashlib.sha256(source.encode() + b"\0")
        if path:
            h.update(Path(path).read_bytes())
        bots[name] = {"source": source, "digest": h.hexdigest()[:12]}
    return {"naparena": __version__, "code": code_digest(), "bots": bots}


def mismatch(worker: str, theirs: Identity, ours: Identity) -> str | None:
    """What a worker lacks or has otherwise than this machine, in one sentence; or None."""
    if (theirs["naparena"], theirs["code"]) != (ours["naparena"], ours["code"]):
        return (f"Dask worker {worker} runs naparena {theirs['naparena']} (code {theirs['code']}), "
                f"this machine {ours['naparena']} (code {ours['code']}): install the same naparena on every worker")
    for name, here in ours["bots"].items():
        there = theirs["bots"].get(name, {"error": "not reported"})
        if "error" in there:
            return (f"Dask worker {worker} cannot load bot '{name}' ({there['error']}); here it is "
                    f"{here['source']}: install it on every worker")
        if there["digest"] != here["digest"]:
            return (f"Dask worker {worker} has another bot '{name}' ({there['source']}, hash {there['digest']}) "
                    f"than this machine ({here['source']}, hash {here['digest']}): install the same on every worker")
    return None


def pack_drop_ins(folder: str | None) -> DropIns | None:
    """The drop-in folder's `*.py` files (helpers too) by name and content, with their digest."""
    if folder is None:
        return None
    files = tuple((p.name, p.read_bytes()) for p in sorted(Path(folder).glob("*.py")))
    return (digest(files), files) if files else None


def digest(files: Iterable[tuple[str, bytes]]) -> str:
    h = hashlib.sha256()
    for name, content in files:
        h.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    return h.hexdigest()[:16]
