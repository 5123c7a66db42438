"""The checks before a run: shake hands with each external bot (`probe`), so a wrong
command or a refused parameter is a bad tournament file, not a run of faults."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from naparena.arena.match.channel import (
    PARAM_REFUSED,
    Channel,
    Mounts,
    _Broken,
    check_params,
    memory_hint,
    sandbox_hint,
)
from naparena.arena.setup.settings import Confinement
from naparena.arena.setup.tournament import Tournament
from naparena.bots import protocol
from naparena.bots.protocol import ProtocolError
from naparena.errors import ConfigError

#: Said with a handshake that timed out: the usual cause is an output buffer.
FLUSH_HINT = ("does the bot flush its stdout after each line? (jq needs --unbuffered, "
              "Python print(..., flush=True), C fflush(stdout))")



def probe(argv: list[str], params: dict[str, Any], confinement: Confinement, python: bool = False,
          mounts: Mounts = ((), (), ())) -> dict[str, Any]:
    """Start a bot, shake hands, shut it down: its hello, or `ProtocolError` saying why
    not, with what the sandbox hid from it (if that is why) and the last lines of the
    bot's stderr (a syntax error, a wrong path)."""
    try:
        channel = Channel(argv, confinement, python, tag="probe", mounts=mounts)
    except _Broken as e:
        raise ProtocolError(e.reason.removeprefix("crash: ")) from None
    reason = ""
    try:
        deadline = time.monotonic() + confinement.start_timeout
        channel.send(protocol.hello(params), deadline)
        hello = protocol.read_hello(channel.receive(deadline))
        check_params(hello, params)
        return hello
    except _Broken as e:
        reason = (f"no hello within {confinement.start_timeout:g} s; {FLUSH_HINT}" if e.reason == "time-out"
                  else e.reason.removeprefix("crash: "))
    except ProtocolError as e:
        reason = str(e)
    finally:
        channel.begin_close(protocol.SHUTDOWN)
        channel.finish_close(time.monotonic() + 1.0)
    told = channel.stderr_shown
    hint = memory_hint([reason, *told], channel.memory_mb, channel.address_bound) or (
        sandbox_hint(reason, told, channel.shown, channel.hidden, channel.refused) if channel.sandboxed else None)
    raise ProtocolError(reason + (f"\n  {hint}" if hint else "") + with_stderr(told))


def with_stderr(lines: Iterable[str]) -> str:
    """The last lines a bot wrote to stderr, to follow a message about it ('' if none)."""
    if not lines:
        return ""
    return "\n  the bot's stderr ended with:\n" + "\n".join(f"    {line}" for line in lines)


def preflight(t: Tournament, files: dict[str, tuple[list[str], list[str]]]) -> None:
    """Shake hands with every external bot of tournament `t` before any play, so a wrong
    command or a parameter the bot refuses is a bad tournament file, not a run of faults.
    `files`: per alias, the paths its sandbox shows and masks (none unsandboxed)."""
    for i, bot in enumerate(t.bots, 1):
        if bot.command is None:
            continue
        shown, hidden = files.get(bot.alias, ([], []))
        try:
            probe(t.command_of(bot), bot.params, t.seats, mounts=(tuple(shown), (), tuple(hidden)))
        except ProtocolError as e:
            key = f"bots[{i}].params" if str(e).startswith(PARAM_REFUSED) else f"bots[{i}].command"
            raise ConfigError(t.shown, key, f"bot '{bot.alias}' failed its handshake: {e}") from None
