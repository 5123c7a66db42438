"""The `naparena` command and `python -m naparena`: the command line, entered so that Ctrl-C
at any moment, its first one included (while the command line is still being loaded),
ends it with one line and exit code 130, never a traceback."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT), as a shell reports it.
INTERRUPTED = 130


def main() -> None:
    """The console script's entry point: nothing is imported before the interrupt is caught."""
    try:
        from naparena.cli import main as command_line
        command_line()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(INTERRUPTED)
    finally:
        # The command is over: a Ctrl-C while the interpreter closes (its exit handlers,
        # worker pools) ends it at once, rather than as a traceback from a handler.
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _exit_now)


def _exit_now(signum: int, frame: FrameType | None) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(INTERRUPTED)


if __name__ == "__main__":
    main()
