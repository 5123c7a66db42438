"""The table in a terminal: plain text that reads without colour, answers typed by number
or by name. It reads and writes the terminal of the `naparena play` process (/dev/tty
when there is one); the seat program's pipes carry only the protocol."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import textwrap
from typing import Any, TextIO

from naparena.people.play import Stop
from naparena.people.table import Table, read_answer

CLEAR = "\x1b[H\x1b[2J"
QUIT = {"q", "quit"}
HELP = {"help", "h", "?"}
DEFAULT_WIDTH = 80
HINTS = {
    "exchange": "type the cards to throw out (QH 10S), or none",
    "garnet_discard": "type the 5 cards to throw out (QH 10S 2C 3D 4S)",
}


def wrap(text: str, width: int) -> str:
    """Each line filled to `width` between words; a line's continuation indented."""
    out = []
    for line in text.split("\n"):
        indent = " " * min(len(line) - len(line.lstrip(" ")) + 2, width // 4)
        out.append(textwrap.fill(line, width=max(width, 20), subsequent_indent=indent, break_long_words=False,
                                 break_on_hyphens=False, drop_whitespace=True) if len(line) > width else line)
    return "\n".join(out)


def open_terminal() -> tuple[TextIO, TextIO]:
    """(input, output): the controlling terminal, else this process's stdin and stderr."""
    with contextlib.suppress(OSError):
        tty = open("/dev/tty", "r+", encoding="utf-8", buffering=1)  # noqa: SIM115 - open for the session
        return tty, tty
    return sys.stdin, sys.stderr


class TerminalFront:
    """Asks the person at the terminal; `q` at any prompt leaves after this match is cut short."""

    def __init__(self, keys: TextIO | None = None, screen: TextIO | None = None):
        if keys is None or screen is None:
            keys, screen = open_terminal()
        self.keys, self.screen = keys, screen
        self.asking = False  # a prompt is on the screen, its answer not typed yet

    def _say(self, text: str) -> None:
        self.screen.write(text)
        self.screen.flush()

    def _show(self, text: str) -> None:
        """A new screen, its lines wrapped at the terminal's width between words."""
        self._say(CLEAR + wrap(text, self._width() - 1) + "\n")

    def _width(self) -> int:
        try:
            return os.get_terminal_size(self.screen.fileno()).columns
        except (OSError, ValueError, io.UnsupportedOperation):
            return DEFAULT_WIDTH

    def _go_on(self) -> None:
        """'press Enter': a typed word there is no answer to anything, and is not taken as one."""
        while True:
            text = self._line("press Enter to go on ")
            if not text:
                return
            if text.lower() in QUIT:
                raise Stop
            self._say(wrap(f"{text!r} is not taken: nothing is asked now. Press Enter alone to go on, or q to "
                           "leave", self._width() - 1) + "\n")

    def _line(self, prompt: str) -> str:
        self._say(prompt)
        self.asking = True
        line = self.keys.readline()
        if not line:  # end of input: the person has gone
            raise Stop
        self.asking = False  # the Enter typed ended the prompt's line
        return line.strip()

    def end_line(self) -> None:
        """Leave the table on a line of its own: a prompt left unanswered (Ctrl-C, the end of
        input) still holds the cursor, and what is said next would start after it."""
        if self.asking:
            self._say("\n")
            self.asking = False

    def _hand_ends(self, table: Table) -> None:
        table.ended.clear()  # the frames to draw a hand's end are the web table's
        while table.finished:
            record = table.finished.pop(0)
            self._show(table.hand_end(record) + "\n")
            self._go_on()

    def decide(self, table: Table) -> Any:
        self._hand_ends(table)
        view = table.view
        lines = [table.screen()]
        if table.happened:
            lines.append("since your last turn: " + "; ".join(table.happened))
            table.happened = []
        lines += ["", f"{table.ask()} {table.keys()}", *table.choices()]
        self._show("\n".join(lines))
        hint = HINTS.get(view.get("kind") or "", "type a number or a name (QH, 10s, pass, yes)")
        if not table.choices() and view.get("kind") not in HINTS:
            hint = "type the cards (e.g. QH 10S)"
        while True:
            text = self._line(f"{hint} > ")
            if text.lower() in QUIT:
                raise Stop
            if text.lower() in HELP:
                self._say(wrap(table.help_text(), self._width() - 1) + "\n")
                continue
            answer, error = read_answer(view.get("kind"), view.get("legal", []), text, view)
            if error is None:
                return answer
            self._say(wrap(f"{error}; try again", self._width() - 1) + "\n")

    def match_over(self, table: Table, left: int) -> bool:
        self._hand_ends(table)
        totals = "   ".join(f"{table.alias(i)} {c:+d}" for i, c in enumerate(table.won))
        text = f"match {table.match} over: {totals}\nall matches so far: {table.running_text()}"
        if table.held:
            text += "\nwhat everybody held:\n" + table.deals()
        self._show(text)
        if not left:
            self._say("that was the last match: the standings follow\n")
            return True
        answer = self._line(f"{left} more match(es) in other seatings: Enter to play on, q to stop here > ")
        return answer.lower() not in QUIT


def scripted(text: str) -> tuple[io.StringIO, io.StringIO]:
    """Keys from `text` and a screen to read back, for tests without a terminal."""
    return io.StringIO(text), io.StringIO()
