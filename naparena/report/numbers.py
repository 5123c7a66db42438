"""Numbers as the tables and the HTML page write them, shared so both agree."""

from __future__ import annotations


def signed(value: float, places: int) -> str:
    """`value` with its sign and `places` decimals; what rounds to zero is written without a
    sign ("0.0", never "-0.0" or "+0.0"): a difference too small to show has no direction."""
    text = f"{value:+.{places}f}"
    return text[1:] if float(text) == 0 else text
