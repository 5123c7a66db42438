"""The table in a terminal: plain text that reads without colour, answers typed by number
or by name. It reads and writes the terminal of the `naparena play` process (/dev/tty
when there is one); the seat program's pipes carry only the protocol."""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Any, TextIO

from naparena.people.play import Stop
from naparena.people.table import Table, read_answer

CLEAR = "\x1b[H\x1b[2J"
QUIT = {"q", "quit"}


def open_terminal() -> tuple[TextIO, TextIO]:
    """(input, output): the controlling terminal, else this process's stdin and stderr."""
    with contextlib.suppress(OSError):
        tty = open("/dev/tty", "r+", encoding="utf-8", buffering=1)
        return tty, tty
    return sys.stdin, sys.stderr


class TerminalFront:
    """Asks the person at the terminal; `q` at any prompt leaves after this match is cut short."""

    def __init__(self, keys: TextIO | None = None, screen: TextIO | None = None):
        if keys is None or screen is None:
            keys, screen = open_terminal()
        self.keys, self.screen = keys, screen

    def _say(self, text: str) -> None:
        self.screen.write(text)
        self.screen.flush()

    def _line(self, prompt: str) -> str:
        self._say(prompt)
        line = self.keys.readline()
        if not line:  # end of input: the person has gone
            raise Stop()
        return line.strip()

    def _hand_ends(self, table: Table) -> None:
        while table.finished:
            record = table.finished.pop(0)
            self._say(CLEAR + table.hand_end(record) + "\n\n")
            self._line("press Enter to go on ")

    def decide(self, table: Table) -> Any:
        self._hand_ends(table)
        view = table.view
        lines = [table.screen()]
        if table.happened:
            lines.append("since your last turn: " + "; ".join(table.happened))
            table.happened = []
        lines += ["", table.ask(), *table.choices()]
        self._say(CLEAR + "\n".join(lines) + "\n")
        hint = "type a number or a name (QH, 10s, pass, yes)"
        if not table.choices():
            hint = "type the cards (e.g. QH 10S), or none"
        while True:
            text = self._line(f"{hint} > ")
            if text.lower() in QUIT:
                raise Stop()
            answer, error = read_answer(view.get("kind"), view.get("legal", []), text)
            if error is None:
                return answer
            self._say(f"{error}; try again\n")

    def match_over(self, table: Table, left: int) -> bool:
        self._hand_ends(table)
        totals = "   ".join(f"{table.alias(i)} {c:+d}" for i, c in enumerate(table.won))
        self._say(CLEAR + f"match {table.match} over: {totals}\n")
        if table.held:
            self._say("what everybody held:\n" + table.deals() + "\n")
        if not left:
            self._say("that was the last match: the standings follow\n")
            return True
        answer = self._line(f"{left} more match(es) in other seatings: Enter to play on, q to stop here > ")
        return answer.lower() not in QUIT


def scripted(text: str) -> tuple[io.StringIO, io.StringIO]:
    """Keys from `text` and a screen to read back, for tests without a terminal."""
    return io.StringIO(text), io.StringIO()
