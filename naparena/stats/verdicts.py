"""The standings' head-to-head results in words, for the top of the terminal table and
the HTML report: one sentence per clear difference, one for the rest, with the numbers.

A difference is clear when its 95% interval excludes zero, as the head-to-head table's
verdict column says; the sentences only put those rows in words.
"""

from __future__ import annotations

from typing import Any

from naparena.stats.ratings import oriented

#: Clear differences given a sentence each, per variant; a league has thousands of pairs.
MOST_SENTENCES = 10


def _p(p: float | None) -> str:
    return "" if p is None else ", p < 1e-300" if p == 0 else f", p = {p:.2g}"


def _numbers(pair: dict[str, Any]) -> str:
    lo, hi = pair["ci95"]
    return f"{pair['diff_per100']:+.1f} [{lo:+.1f}, {hi:+.1f}]"


def verdicts(variant: str, pairs: list[dict[str, Any]]) -> list[str]:
    """The sentences for one variant's head-to-head rows (chips per 100 hands, A − B, with
    the 95% interval over the boards both bots played)."""
    clear, unclear, few = [], [], []
    for pair in pairs:
        ci = pair["ci95"]
        if ci is None:
            few.append(pair)
        elif ci[0] > 0 or ci[1] < 0:
            clear.append(pair if ci[0] > 0 else oriented(pair, pair["b"]))
        else:
            unclear.append(pair)
    clear.sort(key=lambda p: (-p["diff_per100"], p["a"], p["b"]))
    out = []
    for p in clear[:MOST_SENTENCES]:
        lo, hi = p["ci95"]
        out.append(f"{p['a']} is ahead of {p['b']} by {p['diff_per100']:.1f} chips per 100 hands "
                   f"[{lo:.1f}, {hi:.1f}] in {variant} ({p['units']:,} boards{_p(p.get('p_value'))})"
                   + (", conditional: the sequential test stopped it" if p.get("conditional") else "") + ".")
    if len(clear) > MOST_SENTENCES:
        out.append(f"{len(clear) - MOST_SENTENCES} more pairs differ clearly in {variant} "
                   "(the head-to-head table, or --json, has every pair).")
    if unclear:
        named = "; ".join(f"{p['a']} − {p['b']} {_numbers(p)}" for p in unclear[:MOST_SENTENCES])
        more = f"; and {len(unclear) - MOST_SENTENCES} more pairs" if len(unclear) > MOST_SENTENCES else ""
        if len(unclear) == 1:
            out.append(f"No clear difference in {variant} for {named} (its 95% interval includes 0).")
        else:
            out.append(f"No clear difference in {variant} for {len(unclear)} pairs (each 95% interval "
                       f"includes 0): {named}{more}.")
    if few:
        out.append(f"Too few boards for an interval in {variant}: "
                   + ", ".join(f"{p['a']} and {p['b']}" for p in few) + ".")
    return out


def every_verdict(result: dict[str, Any]) -> list[str]:
    """The sentences of every variant of a standings result, in its variants' order."""
    return [line for variant, data in result["variants"].items() for line in verdicts(variant, data["pairs"])]
