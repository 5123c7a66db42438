"""What an external bot's process needs to see: its own files and the runtime its author meant.

A sandboxed seat sees the system read-only and, besides, only what this module finds for
its command, each path read-only at its own place:

- the bot's folder: the folder of the command's first argument that names a file (a
  script, a jar), else of the program itself when it is given as a path;
- the program as it really is: a symlink followed to its target; a version manager's
  shim (pyenv, asdf, mise/rtx) replaced by the interpreter it would run; a shell script
  that `exec`s an absolute path followed to that program;
- that program's runtime: a Python's virtual or conda environment and its base prefix
  (and the folders its `.pth` files and editable installs point to), an interpreter's
  installation prefix outside the system folders, the `node_modules` folders from a
  script's folder upwards, a compiled program's RUNPATH/RPATH folders and loader;
- the paths its `[[bots]]` entry names in `files = [...]`.

Nothing here runs the bot's own files: only a version manager found on PATH is asked
which interpreter a shim means. The run's own places (the run directory, the tournament
file, other bots' files) are masked by the sandbox after these mounts, whatever they are.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import struct
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: Folders every sandboxed seat sees anyway (read-only): nothing under them is mounted again.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

#: Mounts one path read-only (None: nothing to mount), saying why the bot needs it.
Mount = Callable[[str | None, str], None]

_PYTHON = re.compile(r"(python|pypy)[0-9.]*")
_NODE = ("node", "nodejs")
_EXEC = re.compile(r"""^\s*exec\s+(?:-a\s+\S+\s+)?["']?(/[^\s"']+)["']?""", re.M)
_PYENV = re.compile(r"""exec\s+["']?(/[^\s"']+)/libexec/pyenv["']?\s+exec\b""")
_ASDF = re.compile(r"""exec\s+["']?([^\s"']*asdf)["']?\s+exec\b""")
_MANAGERS = ("mise", "rtx")
_DEPTH = 4  # shims and wrappers followed at most this deep


@dataclass(frozen=True)
class Footprint:
    """An external bot as its sandbox starts it: `argv` (a known shim replaced by the
    interpreter it runs) and `mounts`, each (path, why it is shown)."""

    argv: tuple[str, ...]
    mounts: tuple[tuple[str, str], ...]

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.mounts]


def in_system(path: str) -> bool:
    """Whether `path` (followed through symlinks) lies in the system folders every seat sees."""
    real = os.path.realpath(path)
    return any(real == d or real.startswith(d + "/") for d in SYSTEM)


@functools.lru_cache(maxsize=64)
def footprint(argv: tuple[str, ...], files: tuple[str, ...] = ()) -> Footprint:
    """What the sandbox shows the bot started by `argv` (paths in it already absolute,
    as `Tournament.command_of` makes them), with the extra `files` its entry names.
    Cached: a worker starts the same command for match after match."""
    found: dict[str, str] = {}

    def add(path: str | None, why: str) -> None:
        if path and os.path.exists(path) and not in_system(path) and not _sandbox_own(path):
            found.setdefault(os.path.abspath(path), why)

    argv = _unshimmed(argv)
    add(bot_folder(argv), "the bot's folder")
    for arg in argv[1:]:
        if os.path.isabs(arg):
            add(arg, "named in the command")
    _runtime(argv[0] if argv else "", add, argv, depth=0)
    script = next((a for a in argv[1:] if os.path.isabs(a) and os.path.isfile(a)), None)
    if script is not None:  # a script's own interpreter and the programs it execs
        _runtime(script, add, argv, depth=1)
    for path in files:
        add(path, "files = [...]")
    return Footprint(argv, tuple(found.items()))


#: Places the sandbox makes itself (or never shows): a command naming them is not shown the host's.
_OWN_PLACES = ("/", "/tmp", "/run", "/dev", "/proc", "/sys")


def _sandbox_own(path: str) -> bool:
    path = os.path.abspath(path)
    return path in _OWN_PLACES or path.startswith(("/dev/", "/proc/", "/sys/"))


def bot_folder(argv: tuple[str, ...] | list[str]) -> str | None:
    """The folder the bot lives in: its first argument that names a file (a script), or
    a folder named as an argument, else the program's own folder when given as a path."""
    for arg in argv[1:]:
        if os.path.isabs(arg) and os.path.isfile(arg):
            return os.path.dirname(arg)
    for arg in argv[1:]:
        if os.path.isabs(arg) and os.path.isdir(arg):
            return arg
    if argv and "/" in argv[0] and os.path.exists(argv[0]):
        return os.path.dirname(os.path.abspath(argv[0]))
    return None


def program_path(name: str) -> str | None:
    """The file `name` starts: a path as it is, else the first match on PATH."""
    if "/" in name:
        return os.path.abspath(name) if os.path.exists(name) else None
    return shutil.which(name)


# --- the program as it really is -------------------------------------------------------

def _unshimmed(argv: tuple[str, ...]) -> tuple[str, ...]:
    """`argv` with a version manager's shim on PATH replaced by the interpreter it runs
    (only a program found on PATH: a bot's own file is never asked anything)."""
    if not argv or "/" in argv[0]:
        return argv
    program = shutil.which(argv[0])
    if program is None:
        return argv
    real = _manager_target(program, argv[0])
    return (real, *argv[1:]) if real else argv


def _manager_target(program: str, name: str) -> str | None:
    """The interpreter a pyenv, asdf or mise/rtx shim at `program` runs, asking the
    manager itself (`which`) with the environment a seat starts with."""
    ask: list[str] | None = None
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.environ.get("HOME", "/")}
    if os.path.basename(os.path.realpath(program)) in _MANAGERS:
        ask = [os.path.realpath(program), "which", name]
    else:
        text = _script(program)
        if text is None:
            return None
        if m := _PYENV.search(text):
            ask, env["PYENV_ROOT"] = [f"{m.group(1)}/libexec/pyenv", "which", name], m.group(1)
        elif (m := _ASDF.search(text)) and (asdf := program_path(m.group(1))):
            ask = [asdf, "which", name]
    if ask is None:
        return None
    try:
        done = subprocess.run(ask, capture_output=True, text=True, timeout=10, env=env, cwd="/", check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    target = done.stdout.strip().splitlines()[-1] if done.returncode == 0 and done.stdout.strip() else ""
    return target if os.path.isabs(target) and os.access(target, os.X_OK) else None


def _script(path: str, limit: int = 1 << 16) -> str | None:
    """The text of a `#!` script (its first `limit` bytes), or None for anything else."""
    try:
        with open(path, "rb") as f:
            head = f.read(limit)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    return head.decode("utf-8", "replace")


# --- its runtime -------------------------------------------------------------------------

def _runtime(program: str, add: Mount, argv: tuple[str, ...], depth: int) -> None:
    """Mount `program` and what it needs to run, following wrappers `depth` deep."""
    path = program_path(program) if program else None
    if path is None or depth > _DEPTH:
        return
    for link in _links(path):
        add(link, "the program (a link)")
    real = os.path.realpath(path)
    add(real, "the program")
    name = os.path.basename(real)
    if _PYTHON.fullmatch(name):
        _python(path, real, add)
    elif name in _NODE:
        _node(argv, add)
    if not in_system(real):
        add(_prefix(real), "the program's installation")
    text = _script(real)
    if text is not None:
        interpreter = text[2:].split("\n", 1)[0].split()
        if interpreter:
            _runtime(interpreter[0], add, argv, depth + 1)
            if os.path.basename(interpreter[0]) == "env" and len(interpreter) > 1:
                _runtime(interpreter[1], add, argv, depth + 1)
        for target in _EXEC.findall(text):
            _runtime(target, add, argv, depth + 1)
    else:
        for folder in _elf_folders(real):
            add(folder, "the program's libraries")


def _links(path: str) -> list[str]:
    """Every symlink on the way from `path` to its target (each must exist in the sandbox)."""
    out = []
    for _ in range(40):
        if not os.path.islink(path):
            break
        out.append(path)
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return out


def _prefix(real: str) -> str | None:
    """An installation's prefix: the folder above `bin/` when it has a `lib/` beside."""
    folder = Path(real).parent
    if folder.name == "bin" and (folder.parent / "lib").is_dir():
        return str(folder.parent)
    return None


def _python(path: str, real: str, add: Mount) -> None:
    """A Python's environment: a venv (pyvenv.cfg above its bin/) with its base, a conda
    environment, and the folders its site-packages point to (.pth, editable installs)."""
    env = Path(os.path.abspath(path)).parent.parent
    prefixes = [str(Path(real).parent.parent)]
    config = env / "pyvenv.cfg"
    if config.is_file():
        add(str(env), "the Python environment")
        for line in config.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                prefixes.append(str(Path(value.strip()).parent))
    elif (env / "conda-meta").is_dir():
        add(str(env), "the conda environment")
    for prefix in prefixes:
        if (Path(prefix) / "lib").is_dir():
            add(prefix, "the Python installation")
    for site in [*env.glob("lib/python*/site-packages"), *Path(prefixes[0]).glob("lib/python*/site-packages")]:
        for folder in _site_pointers(site):
            add(folder, "a package installed from elsewhere")


def _site_pointers(site: Path) -> list[str]:
    """Absolute folders a site-packages' `.pth` files and editable-install finders name."""
    out = []
    for file in [*site.glob("*.pth"), *site.glob("__editable__*finder.py")]:
        try:
            text = file.read_text(errors="replace")
        except OSError:
            continue
        out += [p for p in re.findall(r"""(/[^\s'"\\]+)""", text) if os.path.isdir(p)]
    return out


def _node(argv: tuple[str, ...], add: Mount) -> None:
    """Every `node_modules` from the script's folder upwards, as Node resolves them."""
    folder = bot_folder(argv)
    while folder and folder != "/":
        add(os.path.join(folder, "node_modules"), "node_modules")
        folder = os.path.dirname(folder)


# --- compiled programs ------------------------------------------------------------------

_PT_INTERP, _PT_DYNAMIC, _DT_RPATH, _DT_RUNPATH, _DT_STRTAB = 3, 2, 15, 29, 5


def _elf_folders(path: str) -> list[str]:
    """A 64-bit little-endian ELF program's loader and RUNPATH/RPATH folders ($ORIGIN
    expanded): where it finds libraries outside the system folders. Others: none."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 24)
    except OSError:
        return []
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    try:
        return _elf64(data, os.path.dirname(path))
    except (struct.error, IndexError, ValueError):
        return []


def _elf64(data: bytes, origin: str) -> list[str]:
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segments = [struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize) for i in range(phnum)]
    out: list[str] = []
    dynamic = None
    for kind, _, offset, _vaddr, _, size in segments:
        if kind == _PT_INTERP:
            out.append(os.path.dirname(data[offset:offset + size].rstrip(b"\0").decode()))
        elif kind == _PT_DYNAMIC:
            dynamic = (offset, size)
    if dynamic is None:
        return out
    entries = [struct.unpack_from("<qQ", data, dynamic[0] + i) for i in range(0, dynamic[1], 16)]
    strtab_addr = next((v for tag, v in entries if tag == _DT_STRTAB), None)
    if strtab_addr is None:
        return out
    # The string table's file offset: its address within the loadable segment holding it.
    strtab = next(off + strtab_addr - va for kind, _, off, va, _, sz in segments
                  if kind == 1 and va <= strtab_addr < va + sz)
    for tag, value in entries:
        if tag in (_DT_RPATH, _DT_RUNPATH):
            end = data.index(b"\0", strtab + value)
            for folder in data[strtab + value:end].decode().split(":"):
                out.append(folder.replace("$ORIGIN", origin).replace("${ORIGIN}", origin))
    return [os.path.normpath(f) for f in out if f]


# --- what a seat must not see ---------------------------------------------------------------

class InsideRunPlace(ValueError):
    """A bot's own path lies in (or is) a place of the run that seats never see."""


def masks(own: list[str], others: list[str], places: list[str]) -> tuple[str, ...]:
    """What to hide from a seat whatever its mounts show: the run's `places` (its run
    directory, log folder, tournament file) and the `others` bots' own paths, never one
    of its `own`. A place that holds one of its own paths cannot be hidden from it:
    `InsideRunPlace` names it."""
    mine = [os.path.abspath(p) for p in own]

    def holds_own(path: str) -> bool:
        return any(o == path or o.startswith(path.rstrip("/") + "/") for o in mine)

    out = []
    for place in (os.path.abspath(p) for p in places if p):
        if holds_own(place):
            raise InsideRunPlace(place)
        out.append(place)
    out += [p for p in dict.fromkeys(os.path.abspath(p) for p in others) if not holds_own(p)]
    return tuple(out)


def own_paths(argv: list[str] | None, files: list[str], module: list[str] | None = None) -> list[str]:
    """A bot's own paths, to hide from the other seats: its folder and the files its
    command names (external), or its module (Python), and its `files`."""
    out = list(module or ()) + list(files)
    if argv:
        folder = bot_folder(argv)
        out += [folder] if folder else []
        out += [a for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]
    return out
