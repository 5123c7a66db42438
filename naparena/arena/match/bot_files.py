"""What an external bot's process is shown, and who asked for each path.

The rule (docs/explanation/sandbox.md, "Who draws the wall"): only the organizer's word
widens what a seat sees. The organizer speaks through the tournament file (`command`,
`files`) and the machine's installed programs (found on its PATH); the bot's author
controls every byte under the bot's folder, its environment's packages and its links.
So a path is shown when

- the organizer named it: a path the command names, `files = [...]`, the program the
  command starts (a symlink followed to its target, a wrapper the organizer installed
  followed to what it `exec`s), that program's environment and installation, the
  `node_modules` folders from the bot's folder upwards;
- or it lies in the bot's own folder (the folder of the first file its command names);
- or, when the bot's own bytes name it (a `#!` line, an `exec` line, a `.pth` file or an
  editable finder, `pyvenv.cfg`'s `home`, an ELF's RUNPATH, a symlink, a version
  manager's answer from the bot's folder), it lies in a runtime installation on this
  machine: a folder that is provably an interpreter's own prefix (a Python with its
  standard library, a virtual environment made from one, a conda environment, a Node
  or a JDK), outside every bot folder and place of the run, not `/`, not a home
  folder, not under `/etc`. Anything else such bytes name is refused, and said so
  (`Footprint.refused`).

Nothing here runs the bot's own files: only a version manager found on PATH is asked,
from the bot's folder, which interpreter a shim means. The run's places are carved out
by the sandbox (`wall.py`) whatever is shown.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import struct
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from naparena.arena.match.wall import homes, resolve, sandbox_own

#: Folders every sandboxed seat sees anyway (read-only): nothing under them is mounted again.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Who asked for a path the organizer named (a path the bot's bytes named says which file).
ORGANIZER = "the organizer's word"
#: How a refusal of the bot's own folder begins: no `files = [...]` line shows what a link made it.
FOLDER_LINKED = "the bot's folder is not shown"

_PYTHON = re.compile(r"(python|pypy)[0-9.]*")
_NODE = ("node", "nodejs")
_EXEC = re.compile(r"""^\s*exec\s+(?:-a\s+\S+\s+)?["']?(/[^\s"']+)["']?""", re.M)
_PYENV = re.compile(r"""exec\s+["']?(/[^\s"']+)/libexec/pyenv["']?\s+exec\b""")
_ASDF = re.compile(r"""exec\s+["']?([^\s"']*asdf)["']?\s+exec\b""")
_MANAGERS = ("mise", "rtx")
#: Where the organizer keeps a manager's versions and settings, when not in the default
#: places under HOME (a container image's MISE_DATA_DIR=/mise, say): the manager is asked
#: with these as naparena has them, so it answers as it does in the organizer's shell.
#: Nothing else of naparena's environment: a variable that trusts config files (CI,
#: MISE_TRUSTED_CONFIG_PATHS) would let the bot's own mise.toml run its templates here.
_MANAGER_HOMES = ("MISE_DATA_DIR", "MISE_CONFIG_DIR", "MISE_STATE_DIR", "MISE_CACHE_DIR", "MISE_GLOBAL_CONFIG_FILE",
                  "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
                  "ASDF_DATA_DIR", "ASDF_DIR", "ASDF_CONFIG_FILE")
_SHELLS = ("sh", "bash", "dash", "zsh", "ksh")
_DEPTH = 4  # shims and wrappers followed at most this deep
_JDK_ENTRIES = 5000  # a JDK's files looked through for its links into /etc, at most


@dataclass(frozen=True)
class Footprint:
    """An external bot as its sandbox starts it: `argv` (a known shim replaced by the
    interpreter it runs), `mounts`, each (path, why it is shown and who asked), and
    `refused`, each (path, why the bot's own files could not show it)."""

    argv: tuple[str, ...]
    mounts: tuple[tuple[str, str], ...]
    refused: tuple[tuple[str, str], ...] = ()
    exact: tuple[str, ...] = ()  # the real paths of `mounts`, as they were checked
    links: tuple[tuple[str, str], ...] = ()  # the symlinks on the way to them: (where, text)

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.mounts]

    @classmethod
    def showing(cls, argv: tuple[str, ...], mounts: Iterable[tuple[str, str]],
                refused: Iterable[tuple[str, str]] = ()) -> Footprint:
        """The footprint that shows `mounts`, each resolved now (a control's mount rule, or
        `footprint`'s own)."""
        mounts = tuple(mounts)
        exact: dict[str, None] = {}
        links: dict[str, str] = {}
        for path, _ in mounts:
            try:
                chain, real = resolve(path)
            except OSError:
                continue
            exact.setdefault(real)
            links.update(_made_links(chain))
        return cls(argv, mounts, tuple(refused), tuple(exact), tuple(links.items()))


def _made_links(chain: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The links of `chain` the sandbox makes again: not those in the system folders,
    which every seat sees as they are (bubblewrap cannot make a link where a file is)."""
    return [(where, text) for where, text in chain if not _lexically_system(where)]


def in_system(path: str) -> bool:
    """Whether `path` (followed through symlinks) lies in the system folders every seat sees."""
    return _in_system(os.path.realpath(path))


def _in_system(real: str) -> bool:
    return any(real == d or real.startswith(d + "/") for d in SYSTEM)


def _lexically_system(path: str) -> bool:
    return any(_inside(os.path.abspath(path), d) for d in SYSTEM)


def _inside(path: str, folder: str | None) -> bool:
    return folder is not None and (path == folder or path.startswith(folder.rstrip("/") + "/"))


@functools.lru_cache(maxsize=64)
def footprint(argv: tuple[str, ...], files: tuple[str, ...] = (), avoid: tuple[str, ...] = ()) -> Footprint:
    """What the sandbox shows the bot started by `argv` (paths in it already absolute,
    as `Tournament.command_of` makes them), with the extra `files` its entry names;
    `avoid`: the run's places and other bots' paths, never a runtime installation.
    Cached: a worker starts the same command for match after match."""
    door = _Door(argv, avoid)
    argv = door.unshimmed(argv)
    folder = bot_folder(argv)
    if folder is not None:
        named = next((a for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)), argv[0])
        door.organizer(folder, f"the bot's folder: the command names {named}")
    for arg in argv[1:]:
        if os.path.isabs(arg):
            door.organizer(arg, "named in the command")
    if argv:
        door.program(argv[0], "the command's program", by_organizer=not door.from_manager, depth=0)
    script = next((a for a in argv[1:] if os.path.isabs(a) and os.path.isfile(a)), None)
    if script is not None and argv and os.path.basename(argv[0]) in _SHELLS:
        door.script(script, by_organizer=door.trusted(script), depth=1, shell=True)
    for path in files:
        door.organizer(path, "files = [...]")
    return door.footprint(argv)


class _Door:
    """What one bot is shown, path by path, with why and who asked (`found`), and what
    its own bytes named but may not be shown (`refused`)."""

    def __init__(self, argv: tuple[str, ...], avoid: tuple[str, ...]):
        folder = bot_folder(argv)
        self.folder = os.path.abspath(folder) if folder else None
        self.folder_real = os.path.realpath(folder) if folder else None
        self.avoid = [os.path.realpath(a) for a in avoid if a]
        self.found: dict[str, str] = {}
        self.refused: dict[str, str] = {}
        # Each path of `found` as it was resolved when it was checked: (the links on the
        # way, its real path). What is shown is what was checked, however its links change after.
        self.resolved: dict[str, tuple[list[tuple[str, str]], str]] = {}
        held = self._held_through_link([a for a in avoid if a])
        if held is not None and self.folder is not None:
            self.refused[self.folder] = (f"{FOLDER_LINKED}: a link makes it {self.folder_real}, which holds {held}, "
                                         "a place of the run or another bot's: make it a folder of its own, "
                                         "not a link")
            self.folder_real = None
        self.from_manager = False
        self.argv = argv

    def _held_through_link(self, avoid: list[str]) -> str | None:
        """A place of the run (or another bot's) the bot's real folder holds though its
        folder as named does not: a link on the way (the bot's folder made a link to the
        tournament folder, say) would show the bot the organizer's folder, its other files
        and tournaments with it. A bot kept beside the tournament file holds it by the
        organizer's own layout: that one is its folder."""
        if self.folder is None or self.folder_real is None:
            return None
        for place in avoid:
            real = os.path.realpath(place)
            if _inside(real, self.folder_real) and not _inside(os.path.abspath(place), self.folder):
                return place
        return None

    # --- who asked ---------------------------------------------------------------------

    def footprint(self, argv: tuple[str, ...]) -> Footprint:
        """What was found, each path with the real path and links it was checked by."""
        exact: dict[str, None] = {}
        links: dict[str, str] = {}
        for path in self.found:
            chain, real = self.resolved[path]
            exact.setdefault(real)
            links.update(_made_links(chain))
        return Footprint(argv, tuple(self.found.items()), tuple(self.refused.items()), tuple(exact),
                         tuple(links.items()))

    def _show(self, path: str, why: str, resolved: tuple[list[tuple[str, str]], str]) -> None:
        if path not in self.found:
            self.found[path] = why
            self.resolved[path] = resolved

    def organizer(self, path: str | None, why: str) -> None:
        """A path the organizer's word names (the tournament file, a program on PATH).
        Where it leads through a link in the bot's folder, what lies past that link is
        the bot's word: shown only as `bot` shows a path."""
        if not path or sandbox_own(path):
            return
        path = os.path.abspath(path)
        try:
            resolved = resolve(path)
        except OSError:
            return
        real = resolved[1]
        if _in_system(real):
            return
        whose = self._whose(path, resolved)
        if whose is not None and not _inside(real, self.folder_real):
            self.bot(path, f"{why}, {whose}", resolved)
            return
        self._show(path, f"{why} ({ORGANIZER})", resolved)

    def bot(self, path: str | None, why: str, resolved: tuple[list[tuple[str, str]], str] | None = None) -> bool:
        """A path the bot's own bytes name: shown only in the bot's folder or in a runtime
        installation on this machine. Whether it may be used. Resolved once (or as the
        caller resolved it): what is checked is what is shown."""
        if not path:
            return False
        if not os.path.isabs(path):
            self.refused.setdefault(path, f"{why}: a relative path, which means the seat's empty home")
            return False
        path = os.path.abspath(path)
        try:
            resolved = resolved or resolve(path)
        except OSError:
            return False
        real = resolved[1]
        if (problem := self._off_limits(path, resolved)) is not None:
            self.refused.setdefault(path, f"{why}: {problem}")
            return False
        if _in_system(real) and (_inside(path, self.folder) or _lexically_system(path)):
            return True
        if _inside(path, self.folder) and _inside(real, self.folder_real):
            return True
        found = runtime_installation(real)
        problem = self._not_a_runtime(found[0] if found else None)
        if found is None or problem:
            self.refused.setdefault(path, f"{why}: {problem or 'neither in the bot folder nor a runtime installation'}")
            return False
        if not _in_system(found[0]):
            self._show(found[0], f"{found[1]} on this machine: {why}", ([], found[0]))
        if not _inside(path, found[0]) and not _inside(path, self.folder):
            self._show(path, f"{why} (a link to {found[1]})", resolved)
        return True

    def _off_limits(self, path: str, resolved: tuple[list[tuple[str, str]], str]) -> str | None:
        """Why the bot's word may not reach `path` (None: it may, if it is its own or a
        runtime's): it, or a link on its way, lies in a place of the run (the link would be
        made again inside the sandbox, naming the place), or a link on its way leads to a
        folder no runtime may be (a version linked to the organizer's home, say)."""
        links, real = resolved
        if any(_inside(p, a) for p in (path, real, *(where for where, _ in links)) for a in self.avoid):
            return "a place of the run or another bot's, which no seat may see"
        for where, _ in links:
            target = os.path.realpath(where)
            if not os.path.isdir(target) or (self.folder_real and _inside(self.folder_real, target)):
                continue  # a file, or the way to the bot's own folder (checked as the folder is)
            if (problem := self._not_a_runtime(target)) is not None:
                return f"the link {where} on its way leads to a folder no runtime may be: {problem}"
        return None

    def _not_a_runtime(self, prefix: str | None) -> str | None:
        """Why `prefix` may not be shown as a runtime installation (None: it may)."""
        if prefix is None:
            return None
        if prefix == "/" or _inside(prefix, "/etc"):
            return f"{prefix} is / or under /etc"
        for home in homes():
            if _inside(home, prefix):
                return f"{prefix} is or holds the home folder {home}"
        for place in self.avoid:
            if _inside(place, prefix) or _inside(prefix, place):
                return f"{prefix} is, holds or lies in {place}, a place of the run or another bot's"
        if self.folder_real and _inside(self.folder_real, prefix):
            return f"{prefix} holds the bot's own folder"
        return None

    def trusted(self, path: str) -> bool:
        """Whether the bytes of the file at `path` and its links are the organizer's: none
        of them lies in the bot's folder or a place of the run (`_whose`)."""
        return self._whose(path) is None

    def _whose(self, path: str, resolved: tuple[list[tuple[str, str]], str] | None = None) -> str | None:
        """Why the file at `path`, or a link on its way, is not the organizer's word (None:
        it is): it lies in the bot's folder or a place of the run, or belongs to another
        user than this one or root (in a folder anyone may write, such as /tmp, another
        user's link names what they like)."""
        try:
            links, real = resolved or resolve(path)
        except OSError:
            return "it cannot be followed"
        places = [os.path.abspath(path), real, *(where for where, _ in links)]
        if any(_inside(p, self.folder) or _inside(p, self.folder_real) or
               any(_inside(p, a) for a in self.avoid) for p in places):
            return "through a link in the bot's folder"
        if not all(_organizers(p) for p in [real, *(where for where, _ in links)]):
            return "through a link or file of another user's"
        return None

    # --- the program and its runtime -----------------------------------------------------

    def unshimmed(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        """`argv` with a version manager's shim on PATH replaced by the interpreter it
        runs, asked from the bot's folder (its `.python-version` counts). The answer
        follows the bot's own file, so it is shown only if it is a runtime installation."""
        if not argv or "/" in argv[0]:
            return argv
        program = shutil.which(argv[0])
        if program is None:
            return argv
        real = _manager_target(program, argv[0], self.folder or "/")
        if real is None:
            return argv
        if not self.bot(real, f"the version manager's answer for {argv[0]} from the bot's folder"):
            return argv
        self.from_manager = True
        return (real, *argv[1:])

    def program(self, program: str, why: str, by_organizer: bool, depth: int) -> None:
        """Show `program` (a path or a name on PATH) and what it needs to run, following
        wrappers `depth` deep; `by_organizer`: whether the organizer's word named it."""
        if depth > _DEPTH or not program:
            return
        if by_organizer:
            path = program_path(program)
        elif "/" not in program:
            path = shutil.which(program)  # on the organizer's PATH: shown if a runtime's or the system's
        else:
            path = program
        if path is None:
            return
        if by_organizer:
            self.organizer(path, why)
        elif not self.bot(path, why):
            return
        real = os.path.realpath(path)
        trusted = by_organizer and self.trusted(path)
        name = os.path.basename(real)
        if _PYTHON.fullmatch(name):
            self.python(path, real, by_organizer, trusted)
        elif name in _NODE:
            self.node()
        elif name == "java" and (in_system(real) or runtime_installation(real)):
            self.jdk(str(Path(real).parent.parent))
        elif name == "uv" and depth == 0:
            self.uv()
        if not in_system(real):
            prefix = _prefix(real)
            if trusted:
                self.organizer(prefix, f"the installation of {path}")
            else:
                self.bot(prefix, f"the installation of {path}")
        text = _script(real)
        if text is not None:
            self.script(real, trusted, depth + 1, text)
        else:
            for folder in _elf_folders(real):
                if trusted:
                    self.organizer(folder, f"the libraries of {path} (its RUNPATH)")
                else:
                    self.bot(folder, f"the RUNPATH of {path}")

    def script(self, path: str, by_organizer: bool, depth: int, text: str | None = None,
               shell: bool = False) -> None:
        """A script's `#!` interpreter (when the kernel runs it) and the programs its
        `exec` lines name; a script a shell is named to run may lack the `#!` line."""
        if text is None:
            text = _script(path) if not shell else _text(path)
        if text is None:
            return
        interpreter = text[2:].split("\n", 1)[0].split() if text.startswith("#!") and not shell else []
        where = f"the #! line of {path}"
        if interpreter:
            self.program(interpreter[0], where, by_organizer, depth)
            if os.path.basename(interpreter[0]) == "env" and len(interpreter) > 1:
                self.program(interpreter[1], where, by_organizer, depth)
        for target in _EXEC.findall(text):
            self.program(target, f"an exec line of {path}", by_organizer, depth)

    def python(self, path: str, real: str, by_organizer: bool, trusted: bool) -> None:
        """A Python's environment: a venv (pyvenv.cfg above its bin/) with its base, a
        conda environment, and the folders its site-packages point to (.pth files,
        editable installs)."""
        env = Path(os.path.abspath(path)).parent.parent
        config = env / "pyvenv.cfg"
        if config.is_file() or (env / "conda-meta").is_dir():
            what = "the Python environment" if config.is_file() else "the conda environment"
            if by_organizer:
                self.organizer(str(env), f"{what} of {path}")
            elif not self.bot(str(env), f"{what} of {path}"):
                return
        home = _venv_home(env) if config.is_file() else None
        if home is not None:
            self.bot(str(Path(home).parent), f"the home in {config}")
        base = str(Path(real).parent.parent)
        if (Path(base) / "lib").is_dir():
            if trusted:
                self.organizer(base, f"the Python installation of {path}")
            else:
                self.bot(base, f"the Python installation of {path}")
        # Packages' .pth files and editable finders: the organizer's in an environment it
        # named outside the bot's folder, or in the installation its word reaches; the bot's
        # in its own, and in an installation a link of the bot's chose (which may be a
        # folder of its own dressed as one: its .pth files are its own bytes).
        own_env = not (by_organizer and self.trusted(str(env)))
        sites = [(s, own_env) for s in env.glob("lib/python*/site-packages")]
        sites += [(s, not trusted) for s in Path(base).glob("lib/python*/site-packages") if Path(base) != env]
        for site, bots in sites:
            for folder, file in _site_pointers(site):
                if bots:
                    self.bot(folder, f"{file} names it")
                else:
                    self.organizer(folder, f"{file} names it")

    def uv(self) -> None:
        """`uv run`'s project environment (`--project`/`--directory`, else the bot's
        folder): its `.venv` and the Python it was made from."""
        argv = self.argv
        if "run" not in argv[1:]:
            return
        project = self.folder
        for flag in ("--project", "--directory"):
            if flag in argv[:-1]:
                project = os.path.abspath(argv[argv.index(flag) + 1])
        if project is None:
            return
        python = os.path.join(project, ".venv", "bin", "python")
        if os.path.exists(python):
            self.program(python, "uv run's project environment", by_organizer=self.trusted(project), depth=1)

    def node(self) -> None:
        """Every `node_modules` from the bot's folder upwards, as Node resolves them."""
        folder = self.folder
        while folder and folder != "/":
            self.organizer(os.path.join(folder, "node_modules"), "node_modules above the bot's script")
            folder = os.path.dirname(folder)

    def jdk(self, home: str) -> None:
        """A JDK's own configuration under /etc, which Debian links to from the JDK's folder.
        Only an installation of the organizer's speaks for it: a folder in the bot's own
        (a `bin/java` beside a `lib/modules` is easily made) links where its author likes."""
        if not self.trusted(home):
            return
        for target in _jdk_config(home):
            self.organizer(target, f"the JDK's configuration, linked from {home}")


def _organizers(path: str) -> bool:
    """Whether the file or link at `path` itself belongs to the organizer: this user or root."""
    try:
        return os.lstat(path).st_uid in (0, os.getuid())
    except OSError:
        return False


def _venv_home(env: Path) -> str | None:
    try:
        text = (env / "pyvenv.cfg").read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return value.strip()
    return None


def runtime_installation(real: str) -> tuple[str, str] | None:
    """(prefix, what it is) of the runtime installation `real` lies in: the innermost
    folder above it that is provably an interpreter's own prefix; None if none is."""
    folder = real if os.path.isdir(real) else os.path.dirname(real)
    for _ in range(8):
        kind = _runtime_kind(Path(folder))
        if kind is not None:
            return folder, kind
        if folder == "/":
            return None
        folder = os.path.dirname(folder)
    return None


def _runtime_kind(p: Path, depth: int = 0) -> str | None:
    """What the folder `p` is, if an interpreter's prefix: by the landmarks the
    interpreters themselves look for (CPython's lib/pythonX.Y/os.py, a venv's home, a
    conda environment's conda-meta, Node's headers or npm, a JDK's modules image)."""
    bin_dir = p / "bin"
    if not bin_dir.is_dir() or str(p) == "/":
        return None
    pythons = list(bin_dir.glob("python*")) + list(bin_dir.glob("pypy*"))
    if (p / "pyvenv.cfg").is_file():
        home = _venv_home(p)
        inner = _runtime_kind(Path(home).parent, depth + 1) if home and depth < 2 else None
        return "a Python virtual environment" if inner and pythons else None
    if pythons and (p / "conda-meta").is_dir():
        return "a conda environment"
    if pythons and (any(p.glob("lib/python3*/os.py")) or any(p.glob("lib/pypy*/os.py"))):
        return "a Python installation"
    if (bin_dir / "node").is_file() and ((p / "include/node/node.h").is_file() or (p / "lib/node_modules").is_dir()):
        return "a Node installation"
    if (bin_dir / "java").is_file() and ((p / "lib/modules").is_file() or (p / "release").is_file()):
        return "a Java installation"
    return None


@functools.lru_cache(maxsize=8)
def _jdk_config(home: str) -> tuple[str, ...]:
    """The folders under /etc a JDK's own files link to (Debian keeps its conf/ there)."""
    out: dict[str, None] = {}
    seen = 0
    for folder, dirs, names in os.walk(home):
        for name in [*dirs, *names]:
            seen += 1
            path = os.path.join(folder, name)
            if os.path.islink(path):
                target = os.path.realpath(path)
                parts = target.split("/")
                # Debian's /etc/java-N-openjdk, Fedora's /etc/java: never /etc itself or a file in it.
                if len(parts) > 3 and parts[1] == "etc" and parts[2].startswith("java") and \
                        os.path.isdir("/etc/" + parts[2]):
                    out.setdefault("/etc/" + parts[2])
        if seen > _JDK_ENTRIES:
            break
    return tuple(out)


def bot_folder(argv: tuple[str, ...] | list[str]) -> str | None:
    """The folder the bot lives in: its first argument that names a file (a script), or
    a folder named as an argument, else the program's own folder when it is given as a
    path and is the bot itself (not a system program, nor one in an environment's or a
    runtime's bin/, such as a venv's `naparena`)."""
    for arg in argv[1:]:
        if os.path.isabs(arg) and os.path.isfile(arg):
            return os.path.dirname(arg)
    for arg in argv[1:]:
        if os.path.isabs(arg) and os.path.isdir(arg):
            return arg
    if argv and "/" in argv[0] and os.path.exists(argv[0]):
        program = os.path.abspath(argv[0])
        folder = Path(program).parent
        if in_system(program) or (folder.name == "bin" and (_runtime_kind(folder.parent) or
                                                            (folder.parent / "pyvenv.cfg").is_file())):
            return None
        return str(folder)
    return None


def program_path(name: str) -> str | None:
    """The file `name` starts: a path as it is, else the first match on PATH."""
    if "/" in name:
        return os.path.abspath(name) if os.path.exists(name) else None
    return shutil.which(name)


def _manager_target(program: str, name: str, folder: str) -> str | None:
    """The interpreter a pyenv, asdf or mise/rtx shim at `program` runs, asking the
    manager itself (`which`) from the bot's `folder`, with the environment a seat
    starts with."""
    ask: list[str] | None = None
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.environ.get("HOME", "/"),
           **{key: value for key, value in os.environ.items() if key in _MANAGER_HOMES}}
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
        done = subprocess.run(ask, capture_output=True, text=True, timeout=10, env=env,
                              cwd=folder if os.path.isdir(folder) else "/", check=False)
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


def _text(path: str, limit: int = 1 << 16) -> str | None:
    """The first `limit` bytes of a file as text (a shell script need not start with #!)."""
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def _prefix(real: str) -> str | None:
    """An installation's prefix: the folder above `bin/` when it has a `lib/` beside."""
    folder = Path(real).parent
    if folder.name == "bin" and (folder.parent / "lib").is_dir():
        return str(folder.parent)
    return None


def _site_pointers(site: Path) -> Iterable[tuple[str, str]]:
    """(folder, the file naming it): the absolute folders a site-packages' `.pth` files
    and editable-install finders name."""
    for file in [*site.glob("*.pth"), *site.glob("__editable__*finder.py")]:
        try:
            text = file.read_text(errors="replace")
        except OSError:
            continue
        for p in re.findall(r"""(/[^\s'"\\]+)""", text):
            if os.path.isdir(p):
                yield p, str(file)


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
