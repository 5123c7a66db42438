"""What a sandboxed seat is shown, opened once: the wall the organizer draws.

`View.of(shown, empty, hidden)` resolves every path a seat is shown and opens it one
component at a time (`O_PATH | O_NOFOLLOW`, each component checked by its identity, its
device and inode), so the sandbox binds the very file or folder that was checked: a folder
swapped for a symlink afterwards changes nothing. The run's places (`hidden`: the
tournament file, the log folder, the run directory, other bots' paths) are compared by
identity too, so an alias (a symlink, `..`, a bind mount, a hard link) is the place
itself. A shown folder that holds a hidden place (at any depth, or through a mount below
it) is not bound whole: it is rebuilt from its entries, each bound on its own, and the
hidden one is simply absent, so nothing inside the sandbox, not even a mount point, names
it. A path that is, or lies in, a hidden place, the organizer's home, or a folder above
them, is refused (`Refused`). The rule in words: docs/explanation/sandbox.md.
"""

from __future__ import annotations

import functools
import os
import pwd
import stat
from dataclasses import dataclass, field

Identity = tuple[int, int]
#: Places a seat gets fresh from the sandbox itself: never bound from the host.
SANDBOX_OWN = ("/", "/tmp", "/run", "/dev", "/proc", "/sys")
_FOLLOW = 40  # symlinks followed at most on one path, as the kernel does


def sandbox_own(path: str) -> bool:
    """Whether `path` is one of the places the sandbox makes itself (or below /dev,
    /proc, /sys): a command naming it means the seat's own."""
    path = os.path.abspath(path)
    return path in SANDBOX_OWN or path.startswith(("/dev/", "/proc/", "/sys/"))


class Refused(Exception):
    """A path the sandbox will not show; `path` and `why` say which and why."""

    def __init__(self, path: str, why: str):
        super().__init__(f"{path} {why}")
        self.path, self.why = path, why


def resolve(path: str) -> tuple[list[tuple[str, str]], str]:
    """(the symlinks met on the way, each (where, its text), the real path) of `path`,
    made absolute; FileNotFoundError for a path that does not exist."""
    links: list[tuple[str, str]] = []
    todo = os.path.abspath(path).strip("/").split("/")
    done = "/"
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, part)
        mode = os.lstat(here).st_mode
        if stat.S_ISLNK(mode):
            if len(links) >= _FOLLOW:
                raise OSError(f"too many symlinks on {path}")
            text = os.readlink(here)
            links.append((here, text))
            todo = [*text.strip("/").split("/"), *todo] if text else todo
            if text.startswith("/"):
                done = "/"
            continue
        done = here
    return links, done


def identity(st: os.stat_result) -> Identity:
    return st.st_dev, st.st_ino


def homes() -> list[str]:
    """The folders people keep their files in: $HOME, root's and every person's home
    (uid 0 or from 1000), and the folders in /home."""
    return list(_homes(os.environ.get("HOME", "")))


@functools.lru_cache(maxsize=4)
def _homes(home: str) -> tuple[str, ...]:
    found = {home, "/root"}
    try:
        found |= {p.pw_dir for p in pwd.getpwall() if p.pw_uid == 0 or 1000 <= p.pw_uid < 65534}
    except OSError:  # pragma: no cover - no passwd database
        pass
    try:
        found |= {os.path.join("/home", name) for name in os.listdir("/home")}
    except OSError:
        pass
    return tuple(sorted({os.path.realpath(h) for h in found if h and os.path.isdir(h) and os.path.realpath(h) != "/"}))


@dataclass
class Places:
    """The places no seat may see, known by identity: `hidden` (the run's places and
    other bots' paths), each folder above them (a folder holding one is rebuilt without
    it), `empty` folders (shown empty: a seat sees only what is shown inside them), and
    the organizer's homes and the folders above them (never shown whole)."""

    hidden: dict[Identity, str] = field(default_factory=dict)
    above: dict[Identity, str] = field(default_factory=dict)
    empty: dict[Identity, str] = field(default_factory=dict)
    homes: dict[Identity, str] = field(default_factory=dict)
    #: Files of hidden places with more than one name (hard links): the place each is in.
    linked: dict[Identity, str] = field(default_factory=dict)

    @classmethod
    def of(cls, hidden: list[str] | tuple[str, ...], empty: list[str] | tuple[str, ...] = ()) -> Places:
        out = cls()
        for path, into in [*((h, out.hidden) for h in hidden), *((e, out.empty) for e in empty)]:
            try:
                real = os.path.realpath(path)
                into[identity(os.stat(real))] = path
            except OSError:
                continue
            out._mark_above(real, path)
            if into is out.hidden:
                out._note_links(real, path)
        for home in homes():
            try:
                out.homes[identity(os.stat(home))] = home
            except OSError:
                continue
            folder = home
            while folder != "/":
                folder = os.path.dirname(folder)
                try:
                    out.homes.setdefault(identity(os.stat(folder)), home)
                except OSError:
                    break
        return out

    def _note_links(self, real: str, place: str) -> None:
        """A hidden file (the tournament file, a file another bot's command names) that
        has another name somewhere (st_nlink > 1). A hidden folder's own files are not
        looked through: a match file linked into a bot's folder needs write access to that
        folder during the run, which could copy it as well."""
        try:
            st = os.lstat(real)
        except OSError:
            return
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            self.linked[identity(st)] = place

    def _mark_above(self, real: str, path: str) -> None:
        folder = real
        while folder != "/":
            folder = os.path.dirname(folder)
            try:
                self.above.setdefault(identity(os.stat(folder)), path)
            except OSError:
                return

    def relation(self, path: str) -> tuple[str, str] | None:
        """How `path` stands to a hidden place: ("is", place) or ("lies in", place), by
        identity (a symlink, a bind mount or a hard link is the place itself); None if neither."""
        try:
            real = os.path.realpath(path)
            st = os.stat(real)
        except OSError:
            return None
        if identity(st) in self.hidden:
            return "is", self.hidden[identity(st)]
        if identity(st) in self.linked:
            return "lies in", self.linked[identity(st)]
        folder = real
        while folder != "/":
            folder = os.path.dirname(folder)
            try:
                found = self.hidden.get(identity(os.stat(folder)))
            except OSError:
                return None
            if found is not None:
                return "lies in", found
        return None

    def holds_home(self, path: str) -> str | None:
        """The organizer's home `path` is or holds (None if neither)."""
        try:
            return self.homes.get(identity(os.stat(path)))
        except OSError:
            return None


@dataclass(frozen=True)
class Mount:
    """One step of a seat's view: `bind` the open `fd` at `dest`, make an empty `dir`,
    or a `symlink` at `dest` holding `text`."""

    kind: str
    dest: str
    fd: int = -1
    text: str = ""

    def args(self) -> list[str]:
        if self.kind == "bind":
            return ["--ro-bind-fd", str(self.fd), self.dest]
        if self.kind == "dir":
            return ["--dir", self.dest]
        return ["--symlink", self.text, self.dest]


class View:
    """What one seat is shown read-only, opened and checked once: a list of `Mount`s
    holding open descriptors until `close`."""

    def __init__(self, places: Places):
        self.places = places
        self.mounts: list[Mount] = []
        self.bound: list[str] = []  # real paths bound whole
        self.links: set[str] = set()
        self._mounts_below: list[str] | None = None

    @classmethod
    def of(cls, shown: list[str] | tuple[str, ...] = (), empty: list[str] | tuple[str, ...] = (),
           hidden: list[str] | tuple[str, ...] = (), *, exact: list[str] | tuple[str, ...] = (),
           links: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (), places: Places | None = None) -> View:
        """The view of `shown` paths (resolved now; those that do not exist are left
        out), `exact` real paths resolved earlier (by the footprint that checked them:
        opened without following any link, so one swapped in since refuses the path) with
        the `links` met on the way to them, `empty` folders shown empty, and `hidden`
        places carved out wherever they lie. `Refused` for a path that is, or lies in, a
        hidden place, or that is or holds the organizer's home."""
        view = cls(places or Places.of(hidden, empty))
        try:
            found = []
            for path in dict.fromkeys(shown):
                try:
                    found.append((path, *resolve(path)))
                except OSError:
                    continue  # not there: nothing to show
            found += [(real, [], real) for real in exact if os.path.lexists(real)]
            view.show_all(found)
            for where, text in links:
                view.link(where, text)
            for folder in empty:
                view.mounts.append(Mount("dir", os.path.abspath(folder)))
        except BaseException:
            view.close()
            raise
        return view

    @property
    def fds(self) -> tuple[int, ...]:
        return tuple(m.fd for m in self.mounts if m.kind == "bind")

    def args(self) -> list[str]:
        return [a for m in self.mounts for a in m.args()]

    def close(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.mounts = []

    def show_all(self, found: list[tuple[str, list[tuple[str, str]], str]]) -> None:
        """Show each (path, the links on its way, its real path), the outermost real
        folder first (what lies in one already shown is shown with it)."""
        for path, links, real in sorted(found, key=lambda f: (f[2].count("/"), f[2])):
            if sandbox_own(real):
                raise Refused(path, "is a place the sandbox makes itself; it is never shown from this machine")
            for where, text in links:
                self.link(where, text)
            if not self.covered(real):
                self._bind(self._open(real, path), real, path)

    def link(self, where: str, text: str) -> None:
        """A symlink at `where` holding `text`, unless one is there already."""
        if where not in self.links and not self.covered(where):
            self.links.add(where)
            self.mounts.append(Mount("symlink", where, text=text))

    def covered(self, real: str) -> bool:
        return any(real == b or real.startswith(b.rstrip("/") + "/") for b in self.bound)

    def _open(self, real: str, path: str) -> int:
        """`real` opened one component at a time, never following a symlink: a component
        that is one now (swapped since it was resolved) or that is a hidden place refuses it."""
        fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for part in real.strip("/").split("/"):
                if not part:
                    continue
                nfd = os.open(part, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = nfd
                st = os.fstat(fd)
                if stat.S_ISLNK(st.st_mode):
                    raise Refused(path, "changed while it was being shown (a symlink now stands on its way)")
                place = self.places.hidden.get(identity(st))
                if place is not None:
                    raise Refused(path, f"is or lies in {place}, which no seat may see")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _bind(self, fd: int, real: str, path: str) -> None:
        """Bind `fd` (at `real`) whole, or, for a folder holding a hidden place, rebuild
        it from its entries without it."""
        st = os.fstat(fd)
        ident = identity(st)
        if ident in self.places.homes and stat.S_ISDIR(st.st_mode):
            os.close(fd)
            raise Refused(path, f"is or holds the home folder {self.places.homes[ident]}, which no seat may see whole")
        if ident in self.places.linked:
            os.close(fd)
            raise Refused(path, f"is a hard link to a file of {self.places.linked[ident]}, which no seat may see")
        if stat.S_ISDIR(st.st_mode) and self.places.linked:
            try:
                self._find_links(real, ident)
            except BaseException:
                os.close(fd)
                raise
        if not stat.S_ISDIR(st.st_mode) or (ident not in self.places.above and not self._has_mount_below(real)):
            self.mounts.append(Mount("bind", real, fd))
            self.bound.append(real)
            return
        self.mounts.append(Mount("dir", real))
        try:
            listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
            try:
                names = sorted(os.listdir(listing))
            finally:
                os.close(listing)
            for name in names:
                self._entry(fd, name, os.path.join(real, name))
        finally:
            os.close(fd)

    def _entry(self, folder: int, name: str, real: str) -> None:
        try:
            fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        except OSError:
            return  # gone since the listing
        st = os.fstat(fd)
        ident = identity(st)
        if stat.S_ISLNK(st.st_mode):
            os.close(fd)
            self.link(real, os.readlink(name, dir_fd=folder))
            return
        if ident in self.places.hidden or ident in self.places.linked:
            os.close(fd)
            return  # carved out: absent from the seat's view
        if ident in self.places.empty:
            os.close(fd)
            self.mounts.append(Mount("dir", real))
            return
        self._bind(fd, real, real)

    def _find_links(self, real: str, ident: Identity) -> None:
        """Another name, below `real`, of a hidden place's file: the folders above it are
        then rebuilt without it, as for the place itself. A folder too big to look
        through at once is rebuilt too: each of its entries is then checked (a folder in
        it looked through afresh), so no number of files hides another name."""
        found, complete = _files(real)
        for path, st in found:
            if identity(st) in self.places.linked:
                self.places._mark_above(path, self.places.linked[identity(st)])
        if complete:
            return
        try:
            entries = len(os.listdir(real))
        except OSError:
            entries = _REBUILT + 1
        if entries > _REBUILT:
            place = next(iter(self.places.linked.values()))
            raise Refused(real, f"holds more than {_SCANNED} files, {entries} of them side by side: too many to "
                          f"look through for another name (a hard link) of {place}, which no seat may see")
        self.places.above.setdefault(ident, real)

    def _has_mount_below(self, real: str) -> bool:
        """Whether another filesystem is mounted somewhere below `real` (a bind mount
        there could alias a hidden place: the folder is then rebuilt entry by entry)."""
        if self._mounts_below is None:
            self._mounts_below = _mount_points()
        prefix = real.rstrip("/") + "/"
        return any(m.startswith(prefix) for m in self._mounts_below)


_SCANNED = 20_000  # entries looked at, at most, for the hard links of one folder
_REBUILT = 256  # entries of a folder too big to look through that may be shown one by one


def _files(top: str) -> tuple[list[tuple[str, os.stat_result]], bool]:
    """The regular files under `top` (itself, if it is one), with their lstat, never
    following a link, at most `_SCANNED` entries; and whether that was all of them."""
    try:
        st = os.lstat(top)
    except OSError:
        return [], True
    if stat.S_ISREG(st.st_mode):
        return [(top, st)], True
    out: list[tuple[str, os.stat_result]] = []
    seen = 0
    for folder, dirs, names in os.walk(top):
        seen += len(dirs)
        for name in names:
            seen += 1
            if seen > _SCANNED:
                return out, False
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append((path, st))
    return out, True


def _mount_points() -> list[str]:
    try:
        with open("/proc/self/mountinfo") as f:
            return [_unescape(line.split()[4]) for line in f if len(line.split()) > 4]
    except OSError:
        return []


def _unescape(field: str) -> str:
    """A mountinfo path: spaces and the like are written as octal escapes."""
    if "\\" not in field:
        return field
    return field.encode().decode("unicode_escape")
