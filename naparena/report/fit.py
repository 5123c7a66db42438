"""Tables that fit the console without ever cutting a number.

Rich shrinks a table that is too wide by cutting cells (`+273.7..…`, `h…`). Here every
number column gets exactly the width of its widest cell; when the columns do not fit,
the ones that do not are printed in a continuation table that repeats the key columns
(the bot's name), and only text columns (descriptions, errors) ever wrap.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

# A HEAVY_HEAD box: one rule left of every column and one at the right edge, and one
# space of padding either side of each cell.
_PER_COLUMN = 3
_EDGE = 1
# A text column that may wrap is never made narrower than this (or its longest word).
_TEXT_MIN = 8


@dataclass(frozen=True)
class Col:
    """One column: its header, alignment, and whether it is text that may wrap."""

    header: str
    justify: JustifyMethod = "right"
    wrap: bool = False


def _cell_width(cell: str) -> int:
    return Text.from_markup(cell).cell_len


def _widths(cols: list[Col], rows: list[list[str]]) -> list[int]:
    """The width each column needs: a number column all of its widest cell, a text column
    its longest word (it wraps the rest)."""
    widths = []
    for i, col in enumerate(cols):
        cells = [col.header] + [row[i] for row in rows]
        if col.wrap:
            words = [_cell_width(w) for c in cells for w in Text.from_markup(c).plain.split()] or [1]
            widths.append(min(max(*words, _TEXT_MIN), max(map(_cell_width, cells))))
        else:
            widths.append(max(map(_cell_width, cells)))
    return widths


def chunks(cols: list[Col], rows: list[list[str]], width: int, keys: int = 1) -> list[list[int]]:
    """Column indices of each table to print: the key columns, then as many more as fit
    in `width`; at least one more per table, so a very narrow console still shows all."""
    need = _widths(cols, rows)
    key_width = _EDGE + sum(need[i] + _PER_COLUMN for i in range(keys))
    out: list[list[int]] = []
    current: list[int] = []
    used = key_width
    for i in range(keys, len(cols)):
        w = need[i] + _PER_COLUMN
        if current and used + w > width:
            out.append(list(range(keys)) + current)
            current, used = [], key_width
        current.append(i)
        used += w
    if current or not out:
        out.append(list(range(keys)) + current)
    return out


def titled(title: str | None, width: int) -> Table:
    """A table at least as wide as its title where the console allows: Rich wraps a title
    to the table's width, which cut phrases like "chips per 100 | hands" in two."""
    return Table(title=title, min_width=min(len(title), width) if title else None)


def print_table(console: Console, title: str | None, cols: list[Col], rows: list[list[str]],
                keys: int = 1, caption: str | None = None) -> None:
    """Print `rows` under `cols`, split into as many tables as the console's width needs."""
    need = _widths(cols, rows)
    parts = chunks(cols, rows, console.width, keys)
    for n, part in enumerate(parts):
        heading = title
        if title and len(parts) > 1:
            heading = f"{title} ({n + 1}/{len(parts)})"
        table = titled(heading, console.width)
        for i in part:
            col = cols[i]
            if col.wrap:
                table.add_column(col.header, justify=col.justify, min_width=need[i], overflow="fold")
            else:
                table.add_column(col.header, justify=col.justify, width=need[i], no_wrap=True)
        for row in rows:
            table.add_row(*(row[i] for i in part))
        total = _EDGE + sum(need[i] + _PER_COLUMN for i in part)
        # Only a console narrower than the key columns plus one column gets a wider line
        # (the terminal wraps it) rather than a cut number. Rich caps print(width=...) at
        # the console's width, so the console is widened for that one table.
        _print_wide(console, table, total)
    if caption:  # under the last part, as wide as the console rather than that part
        console.print(caption, style="dim", highlight=False)


def _print_wide(console: Console, table: Table, width: int) -> None:
    """`table` at `width` columns at least, even past the console's own width."""
    own = console.width
    if width <= own:
        console.print(table)
        return
    console.width = width
    try:
        console.print(table)
    finally:
        console.width = own
