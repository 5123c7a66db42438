"""`naparena play`: a person at a table with bots, through the human seat program.

The tournament is an ordinary one whose `human` entry is an external bot running
`naparena.people.seat`; the session plays and logs it like any run. This module builds
that tournament and holds the table's end of the seat's socket: a thread, started once
the session has forked its workers, that takes each match's seat connection and hands
its messages to a front (the terminal or the web page), which asks the person.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import orjson

from naparena.arena.records.checkpoint import EVERY_ENV
from naparena.arena.records.rundir import RunDir
from naparena.arena.session import Quiet, registry_for
from naparena.arena.setup.reader import check_bots, parse_tournament
from naparena.arena.setup.settings import NAME
from naparena.arena.setup.tournament import Tournament
from naparena.bots import protocol
from naparena.errors import ConfigError, NaparenaError, RulesError, RunError, did_you_mean
from naparena.game.rules import VARIANTS, make_rules
from naparena.people.seat import NAME as HUMAN
from naparena.people.seat import table_address
from naparena.people.table import Table, after_exchanges

YOU = "you"
#: A person needs no time-out: the longest a tournament file allows, one hour a decision
#: (and the watchdog's stall limit, ten times the hard limit, follows from it).
PERSON_TIMEOUT = 3600.0
#: Seconds the table waits for a finished match to be booked before it shows the deals.
BOOKING_WAIT = 30.0


def seat_command() -> list[str]:
    """The human seat's argv: this interpreter, so the seat imports this naparena. The runner
    starts an external command as written, so a bare `python3` would be whichever one PATH
    finds (often not the environment naparena is installed in); hence the absolute path in
    the manifest."""
    return [sys.executable, "-m", "naparena.people.seat"]


def quick_tournament(variant: str, bots: list[str], hands: int, seed: int, log_dir: str) -> Tournament:
    """One person and `bots` at one table of `variant`, in every seating of the design."""
    if not bots:
        raise ConfigError("", "--bots", "name at least one bot to play against, e.g. --bots heuristic,random")
    _check_table(variant, len(bots))
    entries: list[dict[str, Any]] = [{"name": HUMAN, "alias": YOU, "command": seat_command()}]
    taken = {YOU}
    for name in bots:
        alias, n = name, 2
        while alias in taken:
            alias, n = f"{name}-{n}", n + 1
        taken.add(alias)
        entries.append({"name": name, "alias": alias})
    data = {"tournament": {"name": "play", "seed": seed, "hands": hands, "table": len(entries),
                           "duplicate": False, "workers": 1, "timeout": PERSON_TIMEOUT, "log_dir": log_dir},
            "bots": entries, "variants": [{"name": variant}], "seats": {"sandbox": NO_SANDBOX}}
    t = parse_tournament(data, None)
    try:
        check_bots(t, registry_for(t))
    except ConfigError as e:  # the file is play's own: what is wrong is a name in --bots
        raise ConfigError("", "--bots", e.message) from None
    return t


def _check_table(variant: str, bots: int) -> None:
    """Refuse a variant or a table the person typed by the flag they typed it with: the
    tournament file's keys and advice would name a file they never wrote."""
    if variant not in VARIANTS:
        raise ConfigError("", "--variant", f"unknown variant {variant!r}{did_you_mean(variant, VARIANTS)}; "
                                           f"known: {', '.join(VARIANTS)}")
    try:
        make_rules(variant).check_players(bots + 1)
    except RulesError as e:
        players = f"you and {bots} bot{'' if bots == 1 else 's'} are {bots + 1} players"
        raise ConfigError("", "--bots", f"{players}, and in {variant} {e.message}") from None


#: The human seat reaches its table through a socket of this machine's network and finds
#: it among this machine's processes: a sandbox's own namespaces would hide both.
NO_SANDBOX = "off"


def file_tournament(path: Path) -> Tournament:
    """A tournament file with one `[[bots]]` entry named "human": that entry becomes the
    human seat; without a `timeout` of its own the file gets the person's."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(str(path), "", f"cannot be read as TOML: {e}") from None
    humans = [b for b in data.get("bots", []) if isinstance(b, dict) and b.get("name") == HUMAN]
    if len(humans) != 1:
        raise ConfigError(str(path), "bots", f'needs exactly one entry with name = "{HUMAN}" to seat you '
                          f"(found {len(humans)})")
    humans[0].setdefault("alias", YOU)
    humans[0]["command"] = seat_command()
    settings = data.setdefault("tournament", {})
    if isinstance(settings, dict):
        settings.setdefault("timeout", PERSON_TIMEOUT)
        settings["workers"] = 1  # one person plays one match at a time
    seats = data.setdefault("seats", {})
    if isinstance(seats, dict):
        seats["sandbox"] = NO_SANDBOX
    return parse_tournament(data, path)


def play_tournament(run_dir: Path) -> Tournament | None:
    """The tournament of a run a person sat at, rebuilt to resume it (None: no person sat
    there). A file's run reads its file again; `play`'s own table is built from the
    manifest's variant, bots, hands, seed and log folder, as `quick_tournament` built it."""
    rd = RunDir(run_dir)
    config = rd.check_format().get("tournament", {})
    entries = config.get("bots", [])
    if not any(b.get("name") == HUMAN for b in entries):
        return None
    file = rd.read_where().get("file")
    if file:
        return file_tournament(Path(file))
    bots = [b["name"] for b in entries if b.get("name") != HUMAN]
    return quick_tournament(config["variants"][0]["name"], bots, config["hands"], config["seed"],
                            str(config.get("log_dir", "logs")))


def bot_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if not NAME.fullmatch(n):
            raise ConfigError("", "--bots", f"{n!r} is not a bot name")
    return names


# --- the table's end of the seat's socket ------------------------------------------------

class Front(Protocol):
    """Where the person sits: asks them each decision, shows each match's end."""

    def decide(self, table: Table) -> Any:
        """The person's legal answer to `table.view` (shows finished hands first)."""

    def match_over(self, table: Table, left: int) -> bool:
        """Show the match's end; `left` matches remain. True to play on."""


class Stop(Exception):
    """The person left the table."""


class TableServer:
    """Listens where the human seat looks (this process's table address) and serves each
    seat connection, one match after another, to the front."""

    def __init__(self, front: Front):
        if not sys.platform.startswith("linux"):
            raise RunError("naparena play needs Linux: the human seat finds its table on an abstract socket")
        self.front = front
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(table_address(os.getpid()))
        self.sock.listen(4)
        self.left = 0        # matches still to play (told by the watcher at the start)
        self.run_dir: RunDir | None = None
        self.booked = 0      # matches the session has booked, in schedule order
        self.booking = threading.Condition()
        self.stopped = False
        self.totals: dict[str, int] = {}  # chips per bot over the run's matches so far
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Serve seats (and the front's own threads): once the session's workers are forked."""
        getattr(self.front, "on_leave", lambda leave: None)(self.leave)
        getattr(self.front, "start", lambda: None)()
        self._thread = threading.Thread(target=self._serve, name="table", daemon=True)
        self._thread.start()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                if not _same_user(conn):
                    continue
                try:
                    self.serve_seat(conn)
                except Stop:
                    # The seat's connection stays open meanwhile: closed, it would fault the
                    # seat and let the match end as a crash, booked like any other.
                    self.leave()
                    threading.Event().wait()
                except (OSError, ValueError):
                    continue

    def leave(self) -> None:
        """The person leaves: the session stops as on Ctrl-C and keeps the matches already
        played. No signal: the session's wait for a match under way wakes twice a second
        to report progress, and the watcher stops it there (`PlayWatcher.progress`)."""
        with self.booking:
            self.stopped = True
            self.booking.notify_all()

    def serve_seat(self, conn: socket.socket) -> None:
        """One seat's messages, to the end of its match."""
        table, started = Table(earlier=dict(self.totals)), False
        for line in conn.makefile("rb"):
            message = orjson.loads(line)
            table.feed(message)
            kind = message.get("type")
            started = started or kind == "match"
            if kind == "match" and message.get("first_hand"):
                self.went_before(table, message["first_hand"])
            elif kind == "hand_end":
                self.dealt(table, message.get("record", {}))
            elif kind == "decide":
                nothing_to_choose, answer = table.only_answer()
                if nothing_to_choose:
                    table.happened.append("the stock is empty: no purchase for you this hand")
                else:
                    answer = self.front.decide(table)
                conn.sendall(protocol.answer(answer))
            elif kind == "shutdown":
                break
        if started:  # a handshake check (preflight) opens and closes without a match
            logged = self.held(table.match)
            if logged:
                table.logged([logged[n] for n in sorted(logged)])
            for alias, chips in zip(table.seats, table.won):
                self.totals[alias] = self.totals.get(alias, 0) + chips
            self.left = max(self.left - 1, 0)
            if not self.front.match_over(table, self.left) and self.left:
                raise Stop

    def went_before(self, table: Table, first_hand: int) -> None:
        """A match resumed at `first_hand`: the hands before it, from its checkpoint, count
        in the score and the turns as they did when they were played."""
        if self.run_dir is None:
            return
        records = [self.run_dir.checkpointed_hand(table.match, n) for n in range(first_hand)]
        table.went_before([r for r in records if r is not None])

    def dealt(self, table: Table, public: dict[str, Any]) -> None:
        """What everybody held in the hand that just ended, from the match's checkpoint
        (`every_hand_checkpointed`): the match writes it before the seat is told of the hand's
        end. None there (after a crash, or with an isolated Python bot, whose match keeps no
        checkpoint): the match's end shows it from the log."""
        n = public.get("n")
        if self.run_dir is None or not isinstance(n, int):
            return
        record = self.run_dir.checkpointed_hand(table.match, n)
        if record is not None and record.get("deal"):
            table.held[n], table.after[n] = record["deal"], after_exchanges(record)

    def earlier(self, run_dir: RunDir) -> None:
        """Each bot's chips in the matches already logged (a resumed run): the running score starts there."""
        for path in run_dir.match_files():
            logged = run_dir.read_match_file(path)
            for record in logged.hands:
                for alias, chips in zip(logged.spec.seats, record["chips"]):
                    self.totals[alias] = self.totals.get(alias, 0) + chips

    def held(self, match: int) -> dict[int, dict[str, Any]]:
        """What every seat was dealt in each hand of `match`, from its log once the session
        has booked it (the seat itself is told only the public record); {} if it is not
        there within BOOKING_WAIT seconds."""
        with self.booking:
            self.booking.wait_for(lambda: self.booked > match, BOOKING_WAIT)
        if self.run_dir is None or not self.run_dir.has_match(match):
            return {}
        try:
            return dict(enumerate(self.run_dir.read_match(match).hands))
        except (NaparenaError, KeyError):
            return {}

    def book(self, matches: int) -> None:
        with self.booking:
            self.booked = matches
            self.booking.notify_all()


class Left(KeyboardInterrupt):
    """The person left the table: the run stops as on Ctrl-C, its finished matches kept."""


@contextlib.contextmanager
def every_hand_checkpointed() -> Iterator[None]:
    """A checkpoint after every hand while play runs, so the table can show what everybody
    held as soon as a hand ends. Checkpoints go when their match is logged: the run's files
    are those of any other run."""
    before = os.environ.get(EVERY_ENV)
    os.environ[EVERY_ENV] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[EVERY_ENV]
        else:
            os.environ[EVERY_ENV] = before


def _same_user(conn: socket.socket) -> bool:
    """Only this user's processes may sit at the table (an abstract socket has no file mode)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    uid: int = struct.unpack("3i", creds)[1]  # (pid, uid, gid)
    return uid == os.getuid()


class PlayWatcher(Quiet):
    """The session's watcher for play: starts the table once the workers are forked."""

    def __init__(self, server: TableServer):
        self.server = server

    def started(self, session: Any, done: int) -> None:
        self.server.left = session.matches - done
        self.server.run_dir = session.run_dir
        self.server.earlier(session.run_dir)
        self.server.book(done)

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        """Told as matches are booked, and twice a second while one is under way: where a
        person who left the table stops the run (in the session's own thread, no signal)."""
        if self.server.stopped:
            raise Left
        self.server.book(matches)

    @contextlib.contextmanager
    def live(self) -> Iterator[None]:
        self.server.start()
        yield
