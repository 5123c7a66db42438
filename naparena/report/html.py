"""One self-contained HTML page of a run's results, built from its logs alone.

First the ranking, overall and per variant: a table with each bot's rate, its 95%
interval and its gap to the leader, and a chart of those gaps. Then per variant: the
head-to-head table with intervals, p and verdicts, its heat map, cumulative chips over
the hands (bankroll curves) and the make rate of every contract. The charts are inline
SVG written here, sized from their labels, with inline CSS, so the page opens anywhere
without a network. Last, the hand viewer (`viewer.py`), which the head-to-head rows
link into at the hands where the two bots differed most; it loads the hands from data
files beside the page (or from `naparena view`'s server), never from the page itself.
"""

from __future__ import annotations

import functools
import math
import os
import shutil
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

from naparena.arena.records.logs import LoggedMatch
from naparena.arena.records.run import Run, open_run
from naparena.arena.records.rundir import RunDir
from naparena.game.rules import FLOATER_LADDER, SEVEN_LADDER, STANDARD_LADDER
from naparena.report import viewer
from naparena.report.numbers import signed
from naparena.stats.ratings import gaps_to, oriented, pair_verdict
from naparena.stats.standings import STAND_IN_ALIAS
from naparena.stats.verdicts import every_verdict

# Bot colours: distinguishable, and readable on white.
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22")
STAND_IN_COLOUR = "#999"
MAX_BREAKS = 3  # breaks in the axis of the chart of gaps to the leader
CURVE_POINTS = 400  # points per bankroll curve: enough to see its shape, small on disk
FONT = "font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif"
FONT_PX = 12  # the size of every chart label

CSS = f"""
body {{ {FONT}; margin: 1.5em auto; max-width: 1000px; color: #222; padding: 0 1em; }}
h1 {{ font-size: 1.5em; margin-bottom: .2em; }}
h2 {{ font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }}
h3 {{ font-size: 1em; margin: 1.2em 0 .3em; }}
p.note {{ color: #555; font-size: .9em; margin: .2em 0 .6em; }}
.meta {{ color: #555; font-size: .9em; }}
svg {{ display: block; margin: .4em 0 1em; }}
svg text {{ {FONT}; font-size: {FONT_PX}px; fill: #222; }}
svg .axis {{ stroke: #999; stroke-width: 1; }}
svg .grid {{ stroke: #e5e5e5; stroke-width: 1; }}
svg .zero {{ stroke: #555; stroke-width: 1; stroke-dasharray: 4 3; }}
svg text.dq, span.dq {{ fill: #a40000; color: #a40000; }}
svg text.stand, span.stand {{ fill: #666; color: #666; }}
table {{ border-collapse: collapse; font-size: .9em; margin: .4em 0 1em; }}
th, td {{ padding: .25em .6em; border-bottom: 1px solid #e5e5e5; white-space: nowrap; }}
th {{ text-align: right; border-bottom: 1px solid #999; font-weight: 600; }}
td {{ text-align: right; font-variant-numeric: tabular-nums; }}
th.name, td.name {{ text-align: left; white-space: normal; overflow-wrap: normal; }}
div.wide {{ overflow-x: auto; max-width: 100%; }}
@media (max-width: 560px) {{
  body {{ padding: 0 .6em; }}
  table {{ font-size: .8em; }}
  th, td {{ padding: .2em .3em; }}
  th {{ white-space: normal; }}
  /* Rows stacked: each a few lines, every value after its column's name. */
  div.stack thead {{ display: none; }}
  div.stack table, div.stack tbody {{ display: block; }}
  div.stack tr {{ display: flex; flex-wrap: wrap; align-items: baseline; gap: .1em .9em; padding: .45em 0;
    border-bottom: 1px solid #e5e5e5; }}
  div.stack td {{ border: 0; padding: 0; text-align: left; }}
  div.stack td:empty {{ display: none; }}
  div.stack td[data-label]::before {{ content: attr(data-label) " "; color: #666; }}
  div.stack td.name {{ font-weight: 600; }}
  div.stack td.name[data-label], div.stack td.name:nth-child(8) {{ flex-basis: 100%; font-weight: 400; }}
}}
ul.verdicts li {{ margin: .2em 0; }}
td.sure {{ font-weight: 600; }}
.warn {{ color: #a40000; }}
"""

GAPS_NOTE = ("Each bot's difference from the leader (bot − leader, chips per 100 hands) over the boards "
             "both played, with its 95% interval: the paired head-to-head, where the common deals cancel, "
             "so it is far narrower than either bot's own interval and says directly whether the leader is "
             "really better. Chosen over each bot's own interval because a bot far from the rest would "
             "squeeze all the others into overlapping dots; where a gap no bot sits in would still take "
             "most of the width, the axis is broken (the ≈ mark) and each part keeps its own ticks.")


RUN_PAGE = "report"  # the page's default name, so a page built alone finds its hands as `write_report` puts them


def hands_folder(out: Path) -> Path:
    """Where a written page's hand files go: beside it, named after it."""
    return out.with_name(out.stem + "-hands")


def write_report(run_dir: str | Path | Run, out: str | Path) -> tuple[int, int]:
    """Write the page for `run_dir` to `out` and its hands into the folder beside it
    (`hands_folder`); return the sizes in bytes of the page and of the hand files.

    All or nothing: both are written under hidden names beside their places and moved
    there at the end, so an interruption (Ctrl-C) or a full disk leaves no partial page or
    folder, and a report already there as it was."""
    out = Path(out)
    run = open_run(run_dir, sound=False)
    catalogue = viewer.Catalogue(run.dir)
    hands = hands_folder(out)
    data = page(run, catalogue, hands.name + "/").encode()
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    partial_hands = hands.with_name(f".{hands.name}.partial-{os.getpid()}")
    old_hands = hands.with_name(f".{hands.name}.old-{os.getpid()}")
    moved = False
    try:
        partial.write_bytes(data)
        size = viewer.export(catalogue, partial_hands)
        if hands.is_dir():
            hands.rename(old_hands)
        partial_hands.rename(hands)
        moved = True
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        shutil.rmtree(partial_hands, ignore_errors=True)
        if moved:
            shutil.rmtree(hands, ignore_errors=True)
        if old_hands.is_dir():
            old_hands.rename(hands)  # the report that was there stays whole
        raise
    finally:
        shutil.rmtree(old_hands, ignore_errors=True)
    return len(data), size


def page(run_dir: str | Path | Run, catalogue: viewer.Catalogue | None = None, base: str | None = None) -> str:
    """The report; its hand viewer loads the hands from `base` (default: the folder `write_report` names)."""
    run = open_run(run_dir, sound=False)
    manifest = run.manifest
    result = run.standings()
    curves = bankrolls(run.dir) if "strength" not in result or len(manifest.bots) <= FEW_BOTS else {}
    hands = catalogue if catalogue is not None else viewer.Catalogue(run.dir)
    colours = {alias: PALETTE[i % len(PALETTE)] for i, alias in enumerate(manifest.bots)}
    colours[STAND_IN_ALIAS] = STAND_IN_COLOUR
    name = run.name
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>naparena: {escape(name)}</title>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<style>{CSS}{viewer.CSS}{viewer.asset('table.css')}</style></head><body>",
             f"<h1>naparena: {escape(name)}</h1>",
             f"<p class='meta'>{manifest.matches} matches, {manifest.hands:,} hands, "
             f"master seed {manifest.seed}, {len(manifest.bots)} bots; naparena {escape(manifest.naparena)}, "
             f"Python {escape(manifest.python)}. Built from the run's logs alone.</p>"]
    parts += _warnings(result)
    parts += verdicts_section(result)
    parts += ranking_section(result)
    strength = result.get("strength") or {}
    for variant, data in result["variants"].items():
        parts.append(f"<h2>{escape(variant)}</h2>")
        order = [r["bot"] for r in data["bots"]]
        if variant in strength:
            parts += strength_section(strength[variant])
        few = not strength or len(order) <= FEW_BOTS  # a league's pairs and curves are too many to read
        if data["pairs"] and few:
            parts.append("<h3>Head to head over the same deals</h3>"
                         "<p class='note'>A − B: A's chips minus B's per 100 hands over the boards both "
                         "played (line-ups as strata), A the better-ranked; p: t-test of that difference; "
                         "A won: the share of those boards A ended ahead (ties half). Bold: the 95% "
                         "interval excludes zero.</p>")
            marks = {bot: m for bot, m in _marks(result, data["bots"]).items() if bot != STAND_IN_ALIAS}
            parts.append(pairs_table(data["pairs"], order, marks,
                                     functools.partial(viewer.pair_links, hands, variant)))
            parts.append("<p class='note'>The same as a matrix: cell = row − column; green, the row "
                         "bot did better; bold with *, the interval excludes zero.</p>")
            parts.append(heatmap(order, data["pairs"]))
        if few:
            parts.append("<h3>Cumulative chips over the hands</h3>"
                         "<p class='note'>Each bot's running chip total over the hands it played, in "
                         "schedule order. Seats the stand-in played (after a disqualification, or from "
                         "the hand a bot's seat died) count for the stand-in.</p>")
            parts.append(bankroll(curves.get(variant, {}), colours))
        parts.append("<h3>Contracts made, as bidder</h3>"
                     "<p class='note'>Share of the contracts each bot played that it made (made / played); "
                     "blank: never played.</p>")
        parts.append(make_rates(data["bots"]))
    parts.append(viewer.section(hands, base if base is not None else f"{RUN_PAGE}-hands/"))
    parts.append("</body></html>\n")
    return "".join(parts)


# --- ratings of many-player tables ----------------------------------------------------

FEW_BOTS = 12  # above this, a league's page leaves out the head-to-head tables and curves
STRENGTH_NOTES = {
    "margins": ("Rating: the chips per 100 hands a bot would win at a table of average bots of this list, "
                "fitted over every seat of every board with the strength of its line-up taken out (least "
                "squares on chip margins), with its 95% interval (a sandwich over boards, widened by the "
                "line-ups' own effect: how a bot fares with particular opponents beyond their strengths, "
                "as the league could have drawn other tables). Boards: the boards behind the rating."),
    "places": ("Rating: a log-strength, Bradley–Terry on board places (each pair at a table, the better "
               "placed wins; a weak normal prior, sd 2; the list sums to zero): of two bots rated a and b, "
               "the first places above the other with odds e<sup>a − b</sup>. With its 95% interval (a "
               "sandwich over boards). Boards: the boards behind the rating."),
}


def strength_section(rated: dict[str, Any], title: str = "Ratings, line-ups adjusted") -> list[str]:
    """A rating list (`stats.strength.rate`): its table and a chart of the intervals."""
    if not rated["connected"]:
        return [f"<h3>{escape(title)}</h3><p class='warn'>The bots do not form one field (some never met "
                "the others through any table): no ratings.</p>"]
    rows = rated["bots"]
    head = "".join(f"<th{' class=name' if h == 'bot' else ''}>{h}</th>"
                   for h in ("rank", "bot", "boards", "rating", "95% CI"))
    body = "".join("<tr>" + _labelled([f"<td>{r['rank']}</td>", f"<td class='name'>{escape(r['bot'])}</td>",
                                        f"<td>{r['boards']:,}</td>", f"<td>{r['rating']:+.2f}</td>",
                                        f"<td class='ci'>{_ci(r['ci95'])}</td>"],
                                       ["", "", "boards", "rating", "95% CI"]) + "</tr>" for r in rows)
    return [f"<h3>{escape(title)}</h3><p class='note'>{STRENGTH_NOTES[rated['model']]}</p>", intervals_chart(rows),
            f"<div class='wide stack'><table class='strength'><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            "</table></div>"]


def intervals_chart(rows: list[dict[str, Any]]) -> str:
    """Each bot's rating as a dot on its 95% interval, best at the top."""
    shown = [r for r in rows if r["ci95"] is not None]
    if not shown:
        return ""
    lo, hi = min(r["ci95"][0] for r in shown), max(r["ci95"][1] for r in shown)
    ticks = _ticks(lo, hi)
    left = max(text_width(r["bot"]) for r in shown) + 8
    width, line = left + 480, FONT_PX + 6
    top, height = 8, 8 + line * len(shown) + 24
    span = (ticks[-1] - ticks[0]) or 1.0

    def x(v: float) -> float:
        return left + 470 * (v - ticks[0]) / span

    body = [f"<line class='grid' x1='{x(t):.1f}' x2='{x(t):.1f}' y1='{top}' y2='{height - 22}'/>"
            f"<text x='{x(t):.1f}' y='{height - 8}' text-anchor='middle'>{_num(t)}</text>" for t in ticks]
    if ticks[0] < 0 < ticks[-1]:
        body.append(f"<line class='zero' x1='{x(0):.1f}' x2='{x(0):.1f}' y1='{top}' y2='{height - 22}'/>")
    for n, r in enumerate(shown):
        y = top + line * n + line / 2
        body.append(f"<text x='{left - 6:.1f}' y='{y + 4:.1f}' text-anchor='end'>{escape(r['bot'])}</text>"
                    f"<line class='axis' x1='{x(r['ci95'][0]):.1f}' x2='{x(r['ci95'][1]):.1f}' "
                    f"y1='{y:.1f}' y2='{y:.1f}'/><circle cx='{x(r['rating']):.1f}' cy='{y:.1f}' r='3'/>")
    return _svg(width, height, body, "ratings with 95% intervals")


def ratings_page(lists: dict[str, Any]) -> str:
    """The page of `naparena ratings --html`: one rating list per variant (or the pooled one)."""
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>naparena ratings</title>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'><style>{CSS}</style></head><body>",
             "<h1>naparena ratings</h1>",
             f"<p class='meta'>{len(lists['runs'])} runs: "
             + ", ".join(escape(r["name"]) for r in lists["runs"]) + ".</p>"]
    for entry in lists["lists"]:
        parts += strength_section(entry, f"{entry['variant']}, tables of {entry['table']}")
    parts.append("</body></html>\n")
    return "".join(parts)


def _warnings(result: dict[str, Any]) -> list[str]:
    out = []
    for alias, d in result["disqualified"].items():
        out.append(f"<p class='warn'>{escape(alias)} was disqualified after match {d['after_match']}: "
                   f"{d['faults']} faults in {d['decisions']} decisions.</p>")
    if result["skipped"]:
        out.append(f"<p class='warn'>{len(result['skipped'])} matches were not played "
                   f"({escape(result['skipped'][0]['reason'])}…).</p>")
    return out


# --- the verdicts, in words -------------------------------------------------------------

def verdicts_section(result: dict[str, Any]) -> list[str]:
    """One sentence per clear head-to-head difference, one for the rest: the page opens
    with what a reader can quote."""
    said = every_verdict(result)
    if not said:
        return []
    items = "".join(f"<li>{escape(line)}</li>" for line in said)
    return ["<h2 id='verdicts'>Verdicts</h2><p class='note'>Chips per 100 hands, A − B over the boards "
            "both bots played, with its 95% interval; a difference is clear when the interval excludes "
            f"zero.</p><ul class='verdicts'>{items}</ul>"]


# --- the ranking ----------------------------------------------------------------------

def _marks(result: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, str]:
    """bot → the words after its name: disqualified, or the stand-in."""
    marks = {r["bot"]: "disqualified" for r in rows if r.get("disqualified")}
    marks.update(dict.fromkeys(result["disqualified"], "disqualified"))
    marks[STAND_IN_ALIAS] = "in the seats of disqualified or dead bots"
    return marks


def _leader(rows: list[dict[str, Any]], marks: dict[str, str]) -> str | None:
    """The best bot that competed: not disqualified, not the stand-in, with an interval."""
    return next((r["bot"] for r in rows if r["bot"] not in marks and r["ci95"] is not None), None)


def ranking_section(result: dict[str, Any]) -> list[str]:
    """The ranking over all variants (when more than one), then each variant's."""
    parts = ["<h2 id='ranking'>Ranking</h2>"]
    variants = result["variants"]
    if len(variants) > 1 and result.get("ranking"):
        boards: dict[str, int] = {}
        for data in variants.values():
            for r in data["bots"]:
                boards[r["bot"]] = boards.get(r["bot"], 0) + r["units"]
        rows = [{**r, "boards": boards.get(r["bot"], 0)} for r in result["ranking"]]
        marks = _marks(result, [])
        leader = _leader(rows, marks)
        gaps = gaps_to(leader, [d["pairs"] for d in variants.values()]) if leader else {}
        parts.append(f"<h3>Over all {len(variants)} variants</h3><p class='note'>Mean of each bot's chips "
                     "per 100 hands in the variants it played, every variant weighing the same; 95% "
                     "intervals over boards (a board: one hand of a deal, in all its rotations), the "
                     "variants' variances added. Gap: bot − leader, the head-to-heads averaged the same "
                     "way.</p>")
        parts.append(ranking_table(rows, gaps, leader, marks, overall=True))
        parts.append(gaps_chart(rows, gaps, leader, marks))
    for variant, data in variants.items():
        marks = _marks(result, data["bots"])
        leader = _leader(data["bots"], marks)
        gaps = gaps_to(leader, [data["pairs"]]) if leader else {}
        rows = [{**r, "rank": i, "boards": r["units"]} for i, r in enumerate(data["bots"], 1)]
        adjusted = (" Luck-adjusted: each hand's chips less the luck of random's answers (unbiased; the "
                    "JSON has the plain figures too)." if data.get("estimator") == "adjusted" else "")
        parts.append(f"<h3>{escape(variant)}</h3><p class='note'>Chips per 100 hands with 95% intervals over "
                     "boards (line-ups as strata); gap: bot − leader on the boards both played, with its "
                     f"interval and p.{adjusted}</p>")
        parts.append(ranking_table(rows, gaps, leader, marks))
        parts.append(gaps_chart(rows, gaps, leader, marks))
    parts.append(f"<p class='note'>{GAPS_NOTE}</p>")
    return parts


def _name_cell(bot: str, marks: dict[str, str]) -> str:
    kind = "stand" if bot == STAND_IN_ALIAS else "dq"
    mark = f" <span class='{kind}'>({escape(marks[bot])})</span>" if bot in marks else ""
    return f"<td class='name'>{bot_name(bot)}{mark}</td>"


def bot_name(bot: str) -> str:
    """A bot's name for a table cell: it may wrap only after one of its separators (a
    browser breaks after "-" already; "<wbr>" allows it after "_", "." and "+"), never
    inside a word, as `overflow-wrap: anywhere` did."""
    text = escape(bot)
    for mark in "_.+":
        text = text.replace(mark, mark + "<wbr>")
    return f"<span class='bot'>{text}</span>"


def _ci(ci: list[float] | None) -> str:
    return "—" if ci is None else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]"


def _p(p: float | None) -> str:
    return "—" if p is None else "&lt;1e-300" if p == 0 else f"{p:.3g}"


def _sure(ci: list[float] | None) -> bool:
    return ci is not None and (ci[0] > 0 or ci[1] < 0)


def ranking_table(rows: list[dict[str, Any]], gaps: dict[str, dict[str, Any]], leader: str | None,
                  marks: dict[str, str], overall: bool = False) -> str:
    """rank, bot, per 100, its interval, boards (variants), and the gap to the leader."""
    head = ["rank", "bot", "per 100", "95% CI", "boards"] + (["variants"] if overall else []) + \
        ["gap to leader", "95% CI", "p"]
    out = ["<div class='wide stack'><table class='ranking'><thead><tr>"
           + "".join(f"<th{' class=name' if h == 'bot' else ''}>{h}</th>" for h in head) + "</tr></thead><tbody>"]
    for r in rows:
        rate = "—" if r["per100"] is None else f"{r['per100']:+.2f}"
        cells = [f"<td>{r['rank']}</td>", _name_cell(r["bot"], marks), f"<td>{rate}</td>",
                 f"<td class='ci'>{_ci(r['ci95'])}</td>", f"<td>{r.get('boards') or 0:,}</td>"]
        if overall:
            cells.append(f"<td>{r['variants']}</td>")
        gap = gaps.get(r["bot"])
        if r["bot"] == leader:
            cells += ["<td>leader</td>", "<td></td>", "<td></td>"]
        elif gap is None:
            cells += ["<td>—</td>", "<td>—</td>", "<td>—</td>"]
        else:
            sure = " class='sure'" if _sure(gap["ci95"]) else ""
            ci = " class='ci sure'" if sure else " class='ci'"
            cells += [f"<td{sure}>{gap['diff']:+.2f}</td>", f"<td{ci}>{_ci(gap['ci95'])}</td>",
                      f"<td>{_p(gap['p_value'])}</td>"]
        labels = ["", "", "per 100", "95% CI", "boards"] + (["variants"] if overall else []) + \
            ["gap to leader", "gap's 95% CI", "p"]
        out.append("<tr>" + _labelled(cells, labels) + "</tr>")
    return "".join(out) + "</tbody></table></div>"


def _labelled(cells: list[str], labels: list[str]) -> str:
    """Table cells, each with its column's name (a phone shows the rows stacked, each value
    after its name); an empty name: a cell that reads without one (a rank, a bot)."""
    return "".join(cell.replace("<td", f"<td data-label='{escape(label)}'", 1) if label else cell
                   for cell, label in zip(cells, labels))


def _verdict_cell(pair: dict[str, Any]) -> str:
    """The verdict, its bot's name wrapping as in the name cells."""
    text = escape(pair_verdict(pair))
    for bot in sorted({pair["a"], pair["b"]}, key=len, reverse=True):
        name = escape(bot)
        if text.startswith(name + " "):
            return bot_name(bot) + text[len(name):]
    return text


def pairs_table(pairs: list[dict[str, Any]], order: list[str], marks: dict[str, str],
                links: Callable[[str, str], str] | None = None) -> str:
    """Every head-to-head, the better-ranked bot as A, in ranking order; with `links`, a
    last column linking the hands where the two differed most (A − B in chips)."""
    rank = {bot: i for i, bot in enumerate(order)}
    turned = [oriented(p, min(p["a"], p["b"], key=lambda b: rank.get(b, len(order)))) for p in pairs]
    turned.sort(key=lambda p: (rank.get(p["a"], len(order)), rank.get(p["b"], len(order))))
    head = "".join(f"<th{' class=name' if h in ('A', 'B', 'verdict') else ''}>{h}</th>"
                   for h in ("A", "B", "boards", "A − B", "95% CI", "p", "A won", "verdict")
                   + (("widest hands",) if links else ()))
    out = [f"<div class='wide stack'><table class='pairs'><thead><tr>{head}</tr></thead><tbody>"]
    labels = ["", "", "boards", "A − B", "95% CI", "p", "A won", "", "widest hands"]
    for p in turned:
        sure = " class='sure'" if _sure(p["ci95"]) else ""
        won = "—" if p.get("p_superior") is None else f"{p['p_superior']:.0%}"
        cells = [_name_cell(p["a"], marks), _name_cell(p["b"], marks), f"<td>{p['units']:,}</td>",
                 f"<td{sure}>{p['diff_per100']:+.2f}</td>", f"<td{sure}>{_ci(p['ci95'])}</td>",
                 f"<td>{_p(p.get('p_value'))}</td>", f"<td>{won}</td>", f"<td class='name'>{_verdict_cell(p)}</td>"]
        if links:
            cells.append(f"<td class='name'>{links(p['a'], p['b'])}</td>")
        out.append("<tr>" + _labelled(cells, labels) + "</tr>")
    return "".join(out) + "</tbody></table></div>"


# --- data from the logs ---------------------------------------------------------------

def bankrolls(run_dir: str | Path | RunDir) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """variant → bot → [(hands played, cumulative chips)], thinned to CURVE_POINTS.

    A seat the stand-in played is booked under the stand-in, as the standings book it:
    the seats a match's header lists in `stand_ins`, and a seat whose bot died, from the
    hand it died in (its summary's `crashed_at`) on."""
    full: dict[str, dict[str, list[int]]] = {}
    rd = RunDir(run_dir)
    for path in rd.match_files():
        logged = rd.read_match_file(path)
        if logged.skipped is not None:
            continue
        per_bot = full.setdefault(logged.spec.variant, {})
        for record in logged.hands:
            for alias, chips in zip(_players(logged, record["n"]), record["chips"]):
                series = per_bot.setdefault(alias, [])
                series.append((series[-1] if series else 0) + chips)
    return {v: {alias: _thin(series) for alias, series in bots.items()} for v, bots in full.items()}


def _players(logged: LoggedMatch, hand_no: int) -> list[str]:
    """Who played each seat in hand `hand_no` of a match log: its alias, or the stand-in."""
    died = [s.get("crashed_at", math.inf) for s in logged.summary["seats"]]
    return [STAND_IN_ALIAS if seat in logged.stand_ins or hand_no >= died[seat] else alias
            for seat, alias in enumerate(logged.spec.seats)]


def _thin(series: list[int]) -> list[tuple[int, int]]:
    step = max(1, math.ceil(len(series) / CURVE_POINTS))
    points = [(0, 0)] + [(i + 1, series[i]) for i in range(step - 1, len(series), step)]
    if points[-1][0] != len(series):
        points.append((len(series), series[-1]))
    return points


# --- charts ---------------------------------------------------------------------------

# Advance widths in ems, generous (DejaVu Sans, the widest common fallback for system-ui),
# so a label sized here is never wider than the browser draws it.
_NARROW, _WIDE = set("iljI.,:;'|!()[] "), set("mwMW@%—−")


def text_width(text: str, px: float = FONT_PX) -> float:
    """The width a label needs, from its characters; an estimate that errs wide."""
    ems = sum(0.36 if c in _NARROW else 1.0 if c in _WIDE else 0.76 if c.isupper() else 0.66 for c in text)
    return ems * px + 2


def _ticks(lo: float, hi: float, most: int = 8) -> list[float]:
    """Round tick values covering [lo, hi], overshooting it as little as possible, at most
    `most` of them."""
    if hi <= lo:
        hi = lo + 1
    found = []
    for count in range(1, max(most, 2)):
        raw = (hi - lo) / count
        power = 10 ** math.floor(math.log10(raw))
        step = min((m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw), default=10 * power)
        first = math.floor(lo / step) * step
        found.append([first + i * step for i in range(int(math.ceil((hi - first) / step - 1e-9)) + 1)])
    fitting = [t for t in found if len(t) <= most] or [min(found, key=len)]
    return min(fitting, key=lambda t: (t[-1] - t[0], -len(t)))


def _ticks_within(lo: float, hi: float, most: int) -> list[float]:
    """Round tick values inside [lo, hi], at most `most` of them (at least one)."""
    raw = (hi - lo) / most
    power = 10 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw), default=10 * power)
    first = math.ceil(lo / step) * step
    ticks = [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]
    return ticks or [(lo + hi) / 2]


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 or v == int(v) else f"{v:,.1f}"


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    width, height = math.ceil(width), math.ceil(height)
    return (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' width='100%' "
            f"style='max-width:{width}px' role='img' aria-label='{escape(label)}'>" + "".join(body) + "</svg>")


def axis_parts(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The value ranges an axis shows: the whole range, cut (at most MAX_BREAKS times) at
    each gap that no span covers and that would take more than a quarter of what is shown."""
    merged: list[list[float]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    gaps = sorted(((merged[i + 1][0] - merged[i][1], i) for i in range(len(merged) - 1)), reverse=True)
    shown, cuts = merged[-1][1] - merged[0][0], []
    for gap, i in gaps[:MAX_BREAKS]:
        if gap > (shown - gap) / 3:
            cuts.append(i)
            shown -= gap
    edges = [merged[0][0]] + [v for i in sorted(cuts) for v in (merged[i][1], merged[i + 1][0])] + [merged[-1][1]]
    parts = list(zip(edges[::2], edges[1::2]))
    pad = max(shown * 0.04, 1.0)  # room for a dot at an end
    return [(lo - pad, hi + pad) for lo, hi in parts]


class BrokenAxis:
    """A horizontal axis over `parts` side by side, a break between each two, each part
    with its own ticks."""

    BREAK = 28  # px between two parts

    def __init__(self, parts: list[tuple[float, float]], left: float, width: float):
        room = width - self.BREAK * (len(parts) - 1)
        self.ticks = []
        widths = [hi - lo for lo, hi in parts]
        # widths grow as the root of the span: a far, wide part does not starve the near ones
        px = [math.sqrt(w) for w in widths]
        px = [p * room / sum(px) for p in px]
        self.parts, x = [], left
        for (lo, hi), w in zip(parts, px):
            ticks = _ticks_within(lo, hi, max(2, int(w // 48)))
            self.parts.append((lo, hi, x, w))
            self.ticks.append(ticks)
            x += w + self.BREAK

    def x(self, v: float) -> float:
        for lo, hi, x0, w in self.parts:
            if v <= hi or (lo, hi, x0, w) == self.parts[-1]:
                return x0 + (max(v, lo) - lo) / (hi - lo) * w
        raise AssertionError("unreachable")

    def draw(self, top: float, bottom: float) -> list[str]:
        body = []
        for k, ((lo, hi, x0, w), ticks) in enumerate(zip(self.parts, self.ticks)):
            for t in ticks:
                tx = x0 + (t - lo) / (hi - lo) * w
                # at a break, labels lean away from it so neighbours never collide
                near = 0.1 * w
                anchor = ("end" if tx > x0 + w - near and k < len(self.parts) - 1 else
                          "start" if tx < x0 + near and k > 0 else "middle")
                body.append(f"<line class='grid' x1='{tx:.1f}' x2='{tx:.1f}' y1='{top:.1f}' y2='{bottom:.1f}'/>"
                            f"<text x='{tx:.1f}' y='{bottom + 16:.1f}' text-anchor='{anchor}'>{_num(t)}</text>")
            body.append(f"<line class='axis' x1='{x0:.1f}' x2='{x0 + w:.1f}' y1='{bottom:.1f}' y2='{bottom:.1f}'/>")
            if k:  # the break mark: two slashes in the gap
                gx = x0 - self.BREAK / 2
                body.append(f"<text x='{gx:.1f}' y='{bottom + 4:.1f}' text-anchor='middle'>≈</text>")
        return body

    def span(self) -> tuple[float, float]:
        first, last = self.parts[0], self.parts[-1]
        return first[2], last[2] + last[3]


def gaps_chart(rows: list[dict[str, Any]], gaps: dict[str, dict[str, Any]], leader: str | None,
               marks: dict[str, str]) -> str:
    """One line per bot: its difference from the leader with the 95% interval of it.

    The leader sits on the dashed zero line. A bot with no head-to-head with the leader
    shows its own rate minus the leader's as a hollow dot, without an interval."""
    if leader is None:
        return "<p class='note'>No bot has an interval yet: no chart of gaps.</p>"
    base = next(r["per100"] for r in rows if r["bot"] == leader)
    # (bot, value, interval or None, right label, hollow)
    lines: list[tuple[str, float, tuple[float, float] | None, str, bool]] = []
    for r in rows:
        gap = gaps.get(r["bot"])
        if r["bot"] == leader:
            lines.append((r["bot"], 0.0, None, f"leader, {base:+.1f} per 100", False))
        elif gap is not None and gap["ci95"] is not None:
            a, b = gap["ci95"]
            lines.append((r["bot"], gap["diff"], (a, b), f"{gap['diff']:+.1f} [{a:+.1f}, {b:+.1f}]", False))
        elif r["per100"] is None and gap is None:
            continue  # no hands of its own: nothing to place (the table says why)
        else:
            value = r["per100"] - base if gap is None else gap["diff"]
            why = "its own hands only" if r.get("basis") == "hands" else "too few boards"
            lines.append((r["bot"], value, None, f"{value:+.1f} (no interval: {why})", True))
    names = [bot + (f" ({marks[bot]})" if bot in marks else "") for bot, *_ in lines]
    left = max(text_width(n) for n in names) + 16
    right = max(text_width(line[3]) for line in lines) + 16
    plot = max(420.0, 960 - left - right)
    top, row_h = 12, 24
    bottom = top + row_h * len(lines)
    spans = [(0.0, 0.0)] + [ci if ci else (v, v) for _, v, ci, _, _ in lines]
    axis = BrokenAxis(axis_parts(spans), left, plot)
    body = axis.draw(top, bottom)
    body.append(f"<line class='zero' x1='{axis.x(0):.1f}' x2='{axis.x(0):.1f}' y1='{top:.1f}' y2='{bottom:.1f}'/>")
    end = axis.span()[1]
    for i, ((bot, value, ci, label, hollow), name) in enumerate(zip(lines, names)):
        y = top + i * row_h + row_h / 2
        cls = "" if bot not in marks else " class='stand'" if bot == STAND_IN_ALIAS else " class='dq'"
        body.append(f"<text x='{left - 10:.1f}' y='{y + 4:.1f}' text-anchor='end'{cls}>{escape(name)}</text>")
        if ci:
            body.append(f"<line x1='{axis.x(ci[0]):.1f}' x2='{axis.x(ci[1]):.1f}' y1='{y:.1f}' y2='{y:.1f}' "
                        f"stroke='#1f77b4' stroke-width='3'/>")
        if bot == leader:
            body.append(f"<path d='M{axis.x(0):.1f},{y - 6:.1f} l6,6 l-6,6 l-6,-6 z' fill='#222'/>")
        else:
            fill = "fill='#fff' stroke='#1f77b4' stroke-width='1.5'" if hollow else "fill='#1f77b4'"
            body.append(f"<circle cx='{axis.x(value):.1f}' cy='{y:.1f}' r='4.5' {fill}/>")
        body.append(f"<text x='{end + 10:.1f}' y='{y + 4:.1f}'>{escape(label)}</text>")
    body.append(f"<text x='{(left + end) / 2:.1f}' y='{bottom + 34:.1f}' text-anchor='middle'>"
                "bot − leader, chips per 100 hands</text>")
    return _svg(end + right, bottom + 42, body, "difference from the leader with 95% intervals")


def bankroll(curves: dict[str, list[tuple[int, int]]], colours: dict[str, str]) -> str:
    """Every bot's cumulative chips against the hands it has played."""
    if not curves:
        return "<p class='note'>No hands were played.</p>"
    legend = {alias: f"{alias} {c[-1][1]:+,}" for alias, c in curves.items()}
    xs = max(p[0] for c in curves.values() for p in c) or 1
    ys = [p[1] for c in curves.values() for p in c]
    yt = _ticks(min(ys + [0]), max(ys + [0]))
    xt = _ticks(0, xs)
    left = max(text_width(_num(t)) for t in yt) + 12
    right = max(text_width(text) for text in legend.values()) + 44
    top, bottom, plot_h = 15, 40, 285
    plot_w = max(480.0, 960 - left - right)
    height = top + plot_h + bottom

    def x(v: float) -> float:
        return left + v / xt[-1] * plot_w

    def y(v: float) -> float:
        return top + (yt[-1] - v) / (yt[-1] - yt[0]) * plot_h

    body = []
    for t in yt:
        body.append(f"<line class='grid' x1='{left:.1f}' x2='{left + plot_w:.1f}' y1='{y(t):.1f}' y2='{y(t):.1f}'/>"
                    f"<text x='{left - 6:.1f}' y='{y(t) + 4:.1f}' text-anchor='end'>{_num(t)}</text>")
    for t in xt:
        anchor = "end" if t == xt[-1] else "middle"
        body.append(f"<text x='{x(t):.1f}' y='{height - bottom + 18}' text-anchor='{anchor}'>{_num(t)}</text>")
    body.append(f"<line class='zero' x1='{left:.1f}' x2='{left + plot_w:.1f}' y1='{y(0):.1f}' y2='{y(0):.1f}'/>")
    body.append(f"<text x='{left + plot_w / 2:.0f}' y='{height - 4}' text-anchor='middle'>hands played</text>")
    ends = sorted(curves, key=lambda a: -curves[a][-1][1])
    for i, alias in enumerate(ends):
        points = " ".join(f"{x(h):.1f},{y(c):.1f}" for h, c in curves[alias])
        colour = colours.get(alias, "#333")
        body.append(f"<polyline fill='none' stroke='{colour}' stroke-width='1.6' points='{points}'/>")
        body.append(f"<rect x='{left + plot_w + 14:.1f}' y='{top + i * 20}' width='12' height='12' fill='{colour}'/>"
                    f"<text x='{left + plot_w + 32:.1f}' y='{top + i * 20 + 11}'>{escape(legend[alias])}</text>")
    height = max(height, top + 20 * len(ends) + 4)
    return _svg(left + plot_w + right, height, body, "cumulative chips over the hands")


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


def heatmap(bots: list[str], pairs: list[dict[str, Any]]) -> str:
    """The head-to-head matrix: cell (row, column) is row − column per 100 hands."""
    cell, slant = 78, math.radians(35)
    n = len(bots)
    left = max(text_width(b) for b in bots) + 16
    top = max(text_width(b) for b in bots) * math.sin(slant) + 20  # the slanted column names
    diff: dict[tuple[str, str], tuple[float, bool]] = {}
    for p in pairs:
        ci = p["ci95"]
        clear = bool(ci) and (ci[0] > 0 or ci[1] < 0)
        diff[(p["a"], p["b"])] = (p["diff_per100"], clear)
        diff[(p["b"], p["a"])] = (-p["diff_per100"], clear)
    scale = max((abs(v) for v, _ in diff.values()), default=1.0)
    width = max([left + cell * n + 20] + [left + (j + .5) * cell + text_width(b) * math.cos(slant) + 10
                                          for j, b in enumerate(bots)])
    height = top + cell * n + 10
    body = []
    for j, col in enumerate(bots):
        cx = left + j * cell + cell / 2
        body.append(f"<text transform='translate({cx:.0f},{top - 8:.0f}) rotate(-35)'>{escape(col)}</text>")
    for i, row in enumerate(bots):
        cy = round(top + i * cell, 1)
        body.append(f"<text x='{left - 8:.1f}' y='{cy + cell / 2 + 4:.0f}' text-anchor='end'>{escape(row)}</text>")
        for j, col in enumerate(bots):
            cx = round(left + j * cell, 1)
            if row == col or (row, col) not in diff:
                body.append(f"<rect x='{cx}' y='{cy}' width='{cell}' height='{cell}' fill='#f0f0f0' stroke='#fff'/>")
                continue
            value, clear = diff[(row, col)]
            weight = "bold" if clear else "normal"
            body.append(f"<rect x='{cx}' y='{cy}' width='{cell}' height='{cell}' fill='{_diverging(value, scale)}' "
                        f"stroke='#fff'><title>{escape(row)} − {escape(col)}: {value:+.2f}</title></rect>"
                        f"<text x='{cx + cell / 2:.0f}' y='{cy + cell / 2 + 4:.0f}' text-anchor='middle' "
                        f"font-weight='{weight}'>{signed(value, 0)}{'*' if clear else ''}</text>")
    return _svg(width, height, body, "head to head heat map")


def make_rates(rows: list[dict[str, Any]]) -> str:
    """Bots by contracts: the share made, shaded from white (none) to blue (all)."""
    contracts = sorted({c for r in rows for c in r["contracts"]}, key=_ladder_order)
    if not contracts:
        return "<p class='note'>No contract was played.</p>"
    shares = [f"100% ({got['made']}/{got['bid']})" for r in rows for got in r["contracts"].values()]
    cell_w = math.ceil(max([132.0] + [text_width(t) + 12 for t in shares + contracts]))
    cell_h, top = 34, 30
    left = max(text_width(r["bot"]) for r in rows) + 16
    width, height = left + cell_w * len(contracts) + 20, top + cell_h * len(rows) + 10
    body = [f"<text x='{left + j * cell_w + cell_w / 2:.0f}' y='{top - 10}' text-anchor='middle'>{escape(c)}</text>"
            for j, c in enumerate(contracts)]
    for i, r in enumerate(rows):
        cy = top + i * cell_h
        body.append(f"<text x='{left - 8:.1f}' y='{cy + cell_h / 2 + 4:.0f}' text-anchor='end'>"
                    f"{escape(r['bot'])}</text>")
        for j, c in enumerate(contracts):
            cx = round(left + j * cell_w, 1)
            got = r["contracts"].get(c)
            if got is None:
                body.append(f"<rect x='{cx}' y='{cy}' width='{cell_w}' height='{cell_h}' fill='#fafafa' "
                            "stroke='#fff'/>")
                continue
            share = got["made"] / got["bid"] if got["bid"] else 0.0
            shade = f"rgb({round(255 - 190 * share)},{round(255 - 120 * share)},{round(255 - 40 * share)})"
            ink = "#fff" if share > 0.65 else "#222"
            body.append(f"<rect x='{cx}' y='{cy}' width='{cell_w}' height='{cell_h}' fill='{shade}' stroke='#fff'/>"
                        f"<text x='{cx + cell_w / 2:.0f}' y='{cy + cell_h / 2 + 4:.0f}' text-anchor='middle' "
                        f"style='fill:{ink}'>{share:.0%} ({got['made']}/{got['bid']})</text>")
    return _svg(width, height, body, "contract make rates")
