"""A registered Python bot as a protocol program: JSON lines on stdin, answers on stdout.

`naparena serve BOT` runs this, and so does the match for every bot it isolates
(`python -m naparena.bots.serve BOT`, which skips the command line's start-up cost):
one code path, so an isolated bot plays exactly as it would inline. `docs/PROTOCOL.md`
describes the messages.
"""

from __future__ import annotations

import atexit
import importlib
import json
import marshal
import os
import random
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from naparena.bots import protocol
from naparena.bots.bot import Bot, wants_events
from naparena.errors import PluginError
from naparena.game.rules import Rules
from naparena.game.view import View

# A seat imports this module and its bot, nothing else: no argparse, no plug-in manager
# (pluggy, importlib.metadata). `tests/test_seat_start.py` holds the list, and
# `benchmarks/seat_speed.py` counts what a seat's start costs.


@dataclass(frozen=True)
class Served:
    """The bot a seat serves: its name, class and the version its hello reports."""

    name: str
    cls: type[Bot]
    version: str


def registered(name: str, bots_dir: str | None) -> Served:
    """The bot as the plug-in registry finds it (every plug-in loaded: the slow way)."""
    from naparena.bots.plugins import bot_version, load_registry

    entry = load_registry(bots_dir).get(name)
    return Served(entry.name, entry.cls, bot_version(entry))


def imported(name: str, where: str, version: str) -> Served:
    """The bot's class by `module:qualname`, as the match's registry already found it:
    a seat then starts without loading every plug-in (importlib.metadata, pluggy and
    each built-in bot cost a Python seat most of its start-up)."""
    module, _, qualname = where.partition(":")
    try:
        found: object = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as e:
        raise PluginError(f"bot {name!r}: cannot import {where}: {e}") from None
    if not (isinstance(found, type) and issubclass(found, Bot)):
        raise PluginError(f"bot {name!r}: {where} is not a Bot class")
    return Served(name, found, version)


def serve(name: str, params: dict[str, Any] | None = None, bots_dir: str | None = None,
          stdin: BinaryIO | None = None, out_fd: int | None = None, entry: str | None = None,
          version: str = "") -> int:
    """Answer the protocol for bot `name` until shutdown or end of input; the exit code.
    An unknown bot is a `PluginError`, raised before any input is read.

    `params` are defaults the handshake's params override. Anything the bot prints goes
    to stderr: stdout carries the protocol alone, so a stray `print` cannot break it.
    """
    if out_fd is None:
        out_fd = _protocol_stdout()
    try:  # the bot before the hello: a person who names no bot is told so at once
        bot = resolve(name, entry, version, bots_dir)
    except PluginError as e:
        _write_all(out_fd, protocol.refusal(str(e)))
        raise
    return play(bot, params, stdin or sys.stdin.buffer, out_fd)


def play(bot: Served, params: dict[str, Any] | None, stdin: BinaryIO, out_fd: int) -> int:
    """The handshake and the match for a bot already imported (`serve`'s, or a warm
    seat's, whose server imported it before the fork); the exit code."""

    def write(data: bytes) -> None:  # one syscall per message
        _write_all(out_fd, data)

    try:
        first = protocol.loads(stdin.readline(protocol.MAX_LINE))
    except ValueError:
        first = None
    if not isinstance(first, dict) or first.get("type") != "hello":
        write(protocol.refusal("the first message must be hello"))
        return 2
    try:
        given = {**(params or {}), **first.get("params", {})}
        full = bot.cls.validate_params(given)
    except PluginError as e:
        write(protocol.refusal(str(e)))
        return 2
    cls = bot.cls
    # Frames when the match offers them and this is its own Python: the same messages,
    # a view rebuilt in C instead of from JSON (`protocol.FRAMES`).
    frames = protocol.FRAMES if first.get("frames") == protocol.FRAMES else None
    ends = cls.end_hand is not Bot.end_hand  # without an end_hand, no hand's record is sent
    write(protocol.bot_hello(bot.name, bot.version, _plain(full), wants_events(cls),
                             cls.start_hand is not Bot.start_hand, ends, frames))
    seat = _Seat(bot, full, write)
    return seat.frames(stdin) if frames else seat.lines(stdin)


class _Seat:
    """The bot's end of one match: each message handed to the bot as an inline bot gets it."""

    def __init__(self, entry: Served, params: dict[str, Any], write: Callable[[bytes], None]):
        self.entry, self.params, self.write = entry, params, write
        self.bot: Bot | None = None
        self.rules: Rules | None = None

    def lines(self, stdin: BinaryIO) -> int:
        """JSON lines until shutdown or the end of input; the exit code."""
        readline, loads, max_line = stdin.readline, protocol.loads, protocol.MAX_LINE
        read_view, write = protocol.read_view, self.write
        while line := readline(max_line):
            message = loads(line)
            if message["type"] == "decide":
                write(_decide(self.bot, read_view(message["view"], self.rules)))
            elif self.message(message):
                return 0
        return 0

    def frames(self, stdin: BinaryIO) -> int:
        """Frames (`protocol.frame`) until shutdown or the end of input; the exit code."""
        read, loads, write = stdin.read, marshal.loads, self.write
        view_from, head = protocol.view_from_fields, protocol.FRAME_HEAD
        decide, hand_start, event = protocol.DECIDE[0], protocol.HAND_START[0], protocol.EVENT[0]
        while len(size := read(head)) == head:
            body = memoryview(read(int.from_bytes(size, "little")))
            kind = body[0]
            if kind == decide:
                write(_decide(self.bot, view_from(loads(body[1:]), self.rules)))
            elif kind == event:
                _quietly(self.bot.observe, loads(body[1:]))  # type: ignore[union-attr]  # as in `message`
            elif kind == hand_start:
                self.hand_start(view_from(loads(body[1:]), self.rules))
            elif self.message(protocol.loads(bytes(body[1:]))):
                return 0
        return 0

    def message(self, message: dict[str, Any]) -> bool:
        """Any message but a decision; True at shutdown."""
        kind, bot = message["type"], self.bot
        if kind == "match":
            self.rules = rules = Rules.from_dict(message["rules"])
            info = {key: message[key] for key in MATCH_INFO_KEYS if key in message}
            info["rules"] = rules
            self.bot = self.entry.cls(random.Random(_seed(message)), message["seat"], **self.params)
            _quietly(self.bot.start_match, info)
        elif kind == "event":
            assert bot is not None, "an event came before the match began"
            _quietly(bot.observe, message["event"])
        elif kind == "hand_start":
            self.hand_start(protocol.read_view(message["view"], self.rules))
        elif kind == "hand_end":
            assert bot is not None, "a hand ended before the match began"
            if self.entry.cls.end_hand is not Bot.end_hand:  # an older match sends it regardless
                _quietly(bot.end_hand, protocol.read_record(message["record"]))
        elif kind == "match_end":
            assert bot is not None, "a match ended before it began"
            _quietly(bot.end_match)
        elif kind == "shutdown":
            return True
        # Any other type is from a later protocol version: ignored, as the protocol says.
        return False

    def hand_start(self, view: View) -> None:
        assert self.bot is not None, "a hand started before the match began"
        _quietly(self.bot.start_hand, view)


#: What an inline bot's `start_match(info)` holds, and so what a served one is given.
MATCH_INFO_KEYS = ("match", "seat", "seats", "players", "rules", "hands", "timeout", "first_hand")


def _seed(message: dict[str, Any]) -> int:
    """The whole 64-bit seed (an older match sent it only as `seed`)."""
    text = message.get("seed_text")
    return int(text) if isinstance(text, str) and text.isdigit() else message["seed"]


def _decide(bot: Bot | None, view: View) -> bytes:
    if view.kind is None:
        return protocol.failure("the view names no decision")
    try:
        answer = getattr(bot, view.kind)(view)
    except BaseException as e:  # sys.exit in a bot is its fault, as inline
        return protocol.failure(f"{type(e).__name__}: {str(e)[:200]}")
    try:
        return protocol.answer(answer)
    except TypeError:
        return protocol.failure(f"answer {answer!r:.100} cannot be sent as JSON")


def _quietly(hook: Callable[..., object], *args: Any) -> None:
    """A lifecycle hook's failure costs nothing in play, as inline."""
    try:
        hook(*args)
    except Exception:
        pass


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """Params as JSON can carry them (a tuple default goes as an array)."""
    plain: dict[str, Any] = json.loads(json.dumps(params, default=str))
    return plain


def _protocol_stdout() -> int:
    """Keep the real stdout for protocol lines and point fd 1 (and `print`) at stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return fd


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    seat = seat_args(args)
    if seat is not None and _control_socket():  # a seat server, started as its seats would be
        from naparena.bots import warm

        return warm.main(sys.modules[__name__], args)
    if seat is not None:  # as a match starts a seat: no argparse to import
        return serve(seat[0], None, seat[3], entry=seat[1], version=seat[2])
    import argparse

    parser = argparse.ArgumentParser(prog="naparena serve", description=__doc__.splitlines()[0])
    parser.add_argument("bot")
    parser.add_argument("--params", default="{}", help="the bot's parameters as a JSON object")
    parser.add_argument("--bots-dir", default=None, help="drop-in bot folder")
    # The match names the class its registry found, and its version: the seat imports that
    # module alone. Without it, the seat loads every plug-in to find the bot by name.
    parser.add_argument("--entry", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--version", dest="bot_version", default="", help=argparse.SUPPRESS)
    parsed = parser.parse_args(args)
    return serve(parsed.bot, parse_params(parsed.params), parsed.bots_dir, entry=parsed.entry,
                 version=parsed.bot_version)


def _control_socket() -> bool:
    """Whether stdin is a socket: a seat server's control socket (a seat's stdin is a pipe)."""
    try:
        return stat.S_ISSOCK(os.fstat(0).st_mode)
    except OSError:
        return False


def seat_args(args: list[str]) -> tuple[str, str | None, str, str | None] | None:
    """(bot, entry, version, bots folder) when `args` are exactly what
    `channel.serve_command` writes; None for anything else (argparse reads it)."""
    if not args or args[0].startswith("-"):
        return None
    if len(args) == 5 and args[1] == "--entry" and args[3] == "--version":
        return args[0], args[2], args[4], None
    if len(args) == 3 and args[1] == "--bots-dir":
        return args[0], None, "", args[2]
    if len(args) == 1:
        return args[0], None, "", None
    return None


def resolve(name: str, entry: str | None, version: str, bots_dir: str | None) -> Served:
    """The bot `seat_args` names, imported (a `PluginError` if it cannot be)."""
    bot = imported(name, entry, version) if entry else registered(name, bots_dir)
    return Served(name, bot.cls, bot.version)  # the hello names it as asked for


def parse_params(text: str) -> dict[str, Any]:
    try:
        params = json.loads(text)
    except json.JSONDecodeError as e:
        raise PluginError(f"--params is not JSON: {e}") from None
    if not isinstance(params, dict):
        raise PluginError("--params must be a JSON object, e.g. '{\"samples\": 40}'")
    return params


def exit_now(code: int) -> None:
    """End the process without the interpreter's teardown: freeing every module took a
    served bot 15 ms at each match's end, four seats a match, on the match's core. The
    bot's atexit hooks still run and its output is flushed, as at a normal exit."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
