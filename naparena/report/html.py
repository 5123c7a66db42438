"""One self-contained HTML page of a run's results, built from its logs alone.

Per variant: chips per 100 hands with 95% intervals (a forest plot), cumulative chips
over the hands (bankroll curves), the head-to-head matrix as a heat map and the make
rate of every contract. The charts are inline SVG written here, with inline CSS and no
script, so the page opens anywhere without a network.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

import orjson

from naparena.arena.runner import MATCHES, read_manifest, standings_from_logs
from naparena.game.rules import FLOATER_LADDER, SEVEN_LADDER, STANDARD_LADDER

# Bot colours: distinguishable, and readable on white.
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22")
CURVE_POINTS = 400  # points per bankroll curve: enough to see its shape, small on disk
FONT = "font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif"

CSS = f"""
body {{ {FONT}; margin: 1.5em auto; max-width: 1000px; color: #222; padding: 0 1em; }}
h1 {{ font-size: 1.5em; margin-bottom: .2em; }}
h2 {{ font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }}
h3 {{ font-size: 1em; margin: 1.2em 0 .3em; }}
p.note {{ color: #555; font-size: .9em; margin: .2em 0 .6em; }}
.meta {{ color: #555; font-size: .9em; }}
svg text {{ {FONT}; font-size: 12px; fill: #222; }}
svg .axis {{ stroke: #999; stroke-width: 1; }}
svg .grid {{ stroke: #e5e5e5; stroke-width: 1; }}
svg .zero {{ stroke: #555; stroke-width: 1; stroke-dasharray: 4 3; }}
.warn {{ color: #a40000; }}
"""


def write_report(run_dir: str | Path, out: str | Path) -> int:
    """Write the page for `run_dir` to `out`; return its size in bytes."""
    data = page(Path(run_dir)).encode()
    Path(out).write_bytes(data)
    return len(data)


def page(run_dir: Path) -> str:
    manifest = read_manifest(run_dir)
    result = standings_from_logs(run_dir)
    curves = bankrolls(run_dir)
    colours = {alias: PALETTE[i % len(PALETTE)] for i, alias in enumerate(manifest["bots"])}
    name = manifest["tournament"]["name"]
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>naparena: {escape(name)}</title>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'><style>{CSS}</style></head><body>",
             f"<h1>naparena: {escape(name)}</h1>",
             f"<p class='meta'>{manifest['matches']} matches, {manifest['hands']:,} hands, "
             f"master seed {manifest['seed']}, {len(manifest['bots'])} bots; naparena {escape(manifest['naparena'])}, "
             f"Python {escape(manifest['python'])}. Built from the run's logs alone.</p>"]
    parts += _warnings(result)
    for variant, data in result["variants"].items():
        parts.append(f"<h2>{escape(variant)}</h2>")
        parts.append("<h3>Chips per 100 hands, with 95% confidence intervals</h3>"
                     "<p class='note'>Intervals over boards (a board: one hand of a deal, in all its "
                     "rotations); an interval clear of the dashed zero line is a real win or loss.</p>")
        parts.append(forest(data["bots"], colours))
        parts.append("<h3>Cumulative chips over the hands</h3>"
                     "<p class='note'>Each bot's running chip total over the hands it played, in "
                     "schedule order.</p>")
        parts.append(bankroll(curves.get(variant, {}), colours))
        if data["pairs"]:
            parts.append("<h3>Head to head: row − column, chips per 100 hands over the same deals</h3>"
                         "<p class='note'>Green: the row bot did better. Bold with *: the 95% interval of "
                         "the difference excludes zero.</p>")
            parts.append(heatmap([r["bot"] for r in data["bots"]], data["pairs"]))
        parts.append("<h3>Contracts made, as bidder</h3>"
                     "<p class='note'>Share of the contracts each bot played that it made (made / played); "
                     "blank: never played.</p>")
        parts.append(make_rates(data["bots"]))
    parts.append("</body></html>\n")
    return "".join(parts)


def _warnings(result: dict) -> list[str]:
    out = []
    for alias, d in result["disqualified"].items():
        out.append(f"<p class='warn'>{escape(alias)} was disqualified after match {d['after_match']}: "
                   f"{d['faults']} faults in {d['decisions']} decisions.</p>")
    if result["skipped"]:
        out.append(f"<p class='warn'>{len(result['skipped'])} matches were not played "
                   f"({escape(result['skipped'][0]['reason'])}…).</p>")
    return out


# --- data from the logs ---------------------------------------------------------------

def bankrolls(run_dir: Path) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """variant → bot → [(hands played, cumulative chips)], thinned to CURVE_POINTS."""
    full: dict[str, dict[str, list[int]]] = {}
    for path in sorted((run_dir / MATCHES).glob("*.json")):
        data = orjson.loads(path.read_bytes())
        if "skipped" in data:
            continue
        seats = data["match"]["seats"]
        per_bot = full.setdefault(data["match"]["variant"], {})
        for record in data["hands"]:
            for alias, chips in zip(seats, record["chips"]):
                series = per_bot.setdefault(alias, [])
                series.append((series[-1] if series else 0) + chips)
    return {v: {alias: _thin(series) for alias, series in bots.items()} for v, bots in full.items()}


def _thin(series: list[int]) -> list[tuple[int, int]]:
    step = max(1, math.ceil(len(series) / CURVE_POINTS))
    points = [(0, 0)] + [(i + 1, series[i]) for i in range(step - 1, len(series), step)]
    if points[-1][0] != len(series):
        points.append((len(series), series[-1]))
    return points


# --- charts ---------------------------------------------------------------------------

def _ticks(lo: float, hi: float) -> list[float]:
    """Round tick values covering [lo, hi], overshooting it as little as possible."""
    if hi <= lo:
        hi = lo + 1
    best = None
    for count in range(4, 9):
        raw = (hi - lo) / count
        power = 10 ** math.floor(math.log10(raw))
        step = min((m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw), default=10 * power)
        first = math.floor(lo / step) * step
        ticks = [first + i * step for i in range(int(math.ceil((hi - first) / step - 1e-9)) + 1)]
        span = ticks[-1] - ticks[0]
        if best is None or span < best[0]:
            best = (span, ticks)
    return best[1]


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 or v == int(v) else f"{v:,.1f}"


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' width='100%' "
            f"style='max-width:{width}px' role='img' aria-label='{escape(label)}'>" + "".join(body) + "</svg>")


def forest(rows: list[dict], colours: dict[str, str]) -> str:
    """One line per bot: its chips per 100 hands as a dot, its 95% interval as a bar."""
    left, top, row_h = 150, 30, 26
    width, plot = 960, 960 - left - 190  # 190 on the right for the labels
    height = top + row_h * len(rows) + 30
    values = [r["per100"] for r in rows] + [v for r in rows if r["ci95"] for v in r["ci95"]] + [0.0]
    ticks = _ticks(min(values), max(values))
    lo, hi = ticks[0], ticks[-1]
    x = lambda v: left + (v - lo) / (hi - lo) * plot  # noqa: E731
    body = []
    for t in ticks:
        body.append(f"<line class='grid' x1='{x(t):.1f}' x2='{x(t):.1f}' y1='{top - 8}' y2='{height - 24}'/>"
                    f"<text x='{x(t):.1f}' y='{height - 8}' text-anchor='middle'>{_num(t)}</text>")
    body.append(f"<line class='zero' x1='{x(0):.1f}' x2='{x(0):.1f}' y1='{top - 8}' y2='{height - 24}'/>")
    for i, r in enumerate(rows):
        y = top + i * row_h + row_h / 2
        colour = colours.get(r["bot"], "#333")
        body.append(f"<text x='{left - 10}' y='{y + 4:.1f}' text-anchor='end'>{escape(r['bot'])}</text>")
        if r["ci95"]:
            a, b = r["ci95"]
            body.append(f"<line x1='{x(a):.1f}' x2='{x(b):.1f}' y1='{y:.1f}' y2='{y:.1f}' stroke='{colour}' "
                        f"stroke-width='3'/>")
            label = f"{r['per100']:+.1f} [{a:+.1f}, {b:+.1f}]"
        else:
            label = f"{r['per100']:+.1f} (no interval: too few boards)"
        body.append(f"<circle cx='{x(r['per100']):.1f}' cy='{y:.1f}' r='5' fill='{colour}'/>"
                    f"<text x='{left + plot + 10}' y='{y + 4:.1f}'>{escape(label)}</text>")
    return _svg(width, height, body, "chips per 100 hands with 95% intervals")


def bankroll(curves: dict[str, list[tuple[int, int]]], colours: dict[str, str]) -> str:
    """Every bot's cumulative chips against the hands it has played."""
    left, right, top, bottom = 70, 150, 15, 40
    width, height = 960, 340
    plot_w, plot_h = width - left - right, height - top - bottom
    if not curves:
        return "<p class='note'>No hands were played.</p>"
    xs = max(p[0] for c in curves.values() for p in c) or 1
    ys = [p[1] for c in curves.values() for p in c]
    yt = _ticks(min(ys + [0]), max(ys + [0]))
    xt = _ticks(0, xs)
    x = lambda v: left + v / xt[-1] * plot_w  # noqa: E731
    y = lambda v: top + (yt[-1] - v) / (yt[-1] - yt[0]) * plot_h  # noqa: E731
    body = []
    for t in yt:
        body.append(f"<line class='grid' x1='{left}' x2='{left + plot_w}' y1='{y(t):.1f}' y2='{y(t):.1f}'/>"
                    f"<text x='{left - 6}' y='{y(t) + 4:.1f}' text-anchor='end'>{_num(t)}</text>")
    for t in xt:
        body.append(f"<text x='{x(t):.1f}' y='{height - bottom + 18}' text-anchor='middle'>{_num(t)}</text>")
    body.append(f"<line class='zero' x1='{left}' x2='{left + plot_w}' y1='{y(0):.1f}' y2='{y(0):.1f}'/>")
    body.append(f"<text x='{left + plot_w / 2:.0f}' y='{height - 4}' text-anchor='middle'>hands played</text>")
    ends = sorted(curves, key=lambda a: -curves[a][-1][1])
    for i, alias in enumerate(ends):
        points = " ".join(f"{x(h):.1f},{y(c):.1f}" for h, c in curves[alias])
        colour = colours.get(alias, "#333")
        body.append(f"<polyline fill='none' stroke='{colour}' stroke-width='1.6' points='{points}'/>")
        body.append(f"<rect x='{left + plot_w + 14}' y='{top + i * 20}' width='12' height='12' fill='{colour}'/>"
                    f"<text x='{left + plot_w + 32}' y='{top + i * 20 + 11}'>{escape(alias)} "
                    f"{curves[alias][-1][1]:+,}</text>")
    return _svg(width, height, body, "cumulative chips over the hands")


def _ladder_order(contract: str) -> tuple[int, str]:
    for ladder in (STANDARD_LADDER, SEVEN_LADDER, FLOATER_LADDER):
        if contract in ladder:
            return ladder.index(contract), contract
    return 99, contract


def _diverging(value: float, scale: float) -> str:
    """White at 0, green for a positive value, red for a negative one."""
    # Square root: small real differences stay visible beside one large one.
    share = math.sqrt(min(abs(value) / scale, 1.0)) if scale else 0.0
    strong = (26, 150, 65) if value > 0 else (215, 48, 39)
    r, g, b = (round(255 + (c - 255) * share * 0.85) for c in strong)
    return f"rgb({r},{g},{b})"


def heatmap(bots: list[str], pairs: list[dict]) -> str:
    """The head-to-head matrix: cell (row, column) is row − column per 100 hands."""
    cell, left, top = 78, 150, 80
    n = len(bots)
    diff: dict[tuple[str, str], tuple[float, bool]] = {}
    for p in pairs:
        ci = p["ci95"]
        clear = bool(ci) and (ci[0] > 0 or ci[1] < 0)
        diff[(p["a"], p["b"])] = (p["diff_per100"], clear)
        diff[(p["b"], p["a"])] = (-p["diff_per100"], clear)
    scale = max((abs(v) for v, _ in diff.values()), default=1.0)
    width, height = left + cell * n + 20, top + cell * n + 10
    body = []
    for j, col in enumerate(bots):
        cx = left + j * cell + cell / 2
        body.append(f"<text transform='translate({cx:.0f},{top - 8}) rotate(-35)'>{escape(col)}</text>")
    for i, row in enumerate(bots):
        cy = top + i * cell
        body.append(f"<text x='{left - 8}' y='{cy + cell / 2 + 4:.0f}' text-anchor='end'>{escape(row)}</text>")
        for j, col in enumerate(bots):
            cx = left + j * cell
            if row == col or (row, col) not in diff:
                body.append(f"<rect x='{cx}' y='{cy}' width='{cell}' height='{cell}' fill='#f0f0f0' stroke='#fff'/>")
                continue
            value, clear = diff[(row, col)]
            weight = "bold" if clear else "normal"
            body.append(f"<rect x='{cx}' y='{cy}' width='{cell}' height='{cell}' fill='{_diverging(value, scale)}' "
                        f"stroke='#fff'><title>{escape(row)} − {escape(col)}: {value:+.2f}</title></rect>"
                        f"<text x='{cx + cell / 2:.0f}' y='{cy + cell / 2 + 4:.0f}' text-anchor='middle' "
                        f"font-weight='{weight}'>{value:+.0f}{'*' if clear else ''}</text>")
    return _svg(width, height, body, "head to head heat map")


def make_rates(rows: list[dict]) -> str:
    """Bots by contracts: the share made, shaded from white (none) to blue (all)."""
    contracts = sorted({c for r in rows for c in r["contracts"]}, key=_ladder_order)
    if not contracts:
        return "<p class='note'>No contract was played.</p>"
    cell_w, cell_h, left, top = 132, 34, 150, 30
    width, height = left + cell_w * len(contracts) + 20, top + cell_h * len(rows) + 10
    body = [f"<text x='{left + j * cell_w + cell_w / 2:.0f}' y='{top - 10}' text-anchor='middle'>{escape(c)}</text>"
            for j, c in enumerate(contracts)]
    for i, r in enumerate(rows):
        cy = top + i * cell_h
        body.append(f"<text x='{left - 8}' y='{cy + cell_h / 2 + 4:.0f}' text-anchor='end'>{escape(r['bot'])}</text>")
        for j, c in enumerate(contracts):
            cx = left + j * cell_w
            got = r["contracts"].get(c)
            if got is None:
                body.append(f"<rect x='{cx}' y='{cy}' width='{cell_w}' height='{cell_h}' fill='#fafafa' stroke='#fff'/>")
                continue
            share = got["made"] / got["bid"] if got["bid"] else 0.0
            shade = f"rgb({round(255 - 190 * share)},{round(255 - 120 * share)},{round(255 - 40 * share)})"
            ink = "#fff" if share > 0.65 else "#222"
            body.append(f"<rect x='{cx}' y='{cy}' width='{cell_w}' height='{cell_h}' fill='{shade}' stroke='#fff'/>"
                        f"<text x='{cx + cell_w / 2:.0f}' y='{cy + cell_h / 2 + 4:.0f}' text-anchor='middle' "
                        f"style='fill:{ink}'>{share:.0%} ({got['made']}/{got['bid']})</text>")
    return _svg(width, height, body, "contract make rates")
