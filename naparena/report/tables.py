"""Rich tables for the CLI: standings, head-to-head, variants, bots, checks and replays.

Presentation only: everything here takes plain data the core modules produced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from rich.console import Console
from rich.markup import escape

from naparena.bots.plugins import Registry
from naparena.game import cards
from naparena.game.rules import VARIANTS
from naparena.report.fit import Col, print_table, titled
from naparena.report.numbers import signed
from naparena.stats.ratings import pair_verdict
from naparena.stats.verdicts import every_verdict

SUIT_SYMBOLS = {0: "♣", 1: "♦", 2: "♥", 3: "♠"}

#: Standings, rows and match logs as `--json` and the run's files hold them: the plain JSON
#: data the stats and the arena produce. Any: this is the JSON boundary; each table reads
#: the keys it shows.
Json = dict[str, Any]


class VariantChecked(Protocol):
    """What the check tables read of one variant's report (`naparena check`)."""

    variant: str
    players: tuple[int, ...]
    hands: int
    decisions: int
    faults: dict[str, int]
    first_error: str
    not_played: str | None

    @property
    def asked(self) -> Mapping[int, Mapping[str, int]]: ...
    @property
    def ok(self) -> bool: ...
    @property
    def kinds(self) -> tuple[str, ...]: ...
    def percentile(self, q: float) -> float: ...


def _p(p: float | None) -> str:
    """A p-value; one too small for a float is below the smallest one, not zero."""
    return "—" if p is None else "<1e-300" if p == 0 else f"{p:.3g}"


def _ci(ci: Sequence[float] | None) -> str:
    return "—" if ci is None else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]"


def sprt_line(s: Json) -> str:
    """The sequential test's outcome in words; a test that never reached its warm-up says so,
    since its LLR is then 0 by definition and "undecided" would suggest the bots are close."""
    head = f"sequential test {s['a']} vs {s['b']} (delta {s['delta']:+g}): "
    if s["verdict"] is None and s["boards"] < s["warmup"]:
        return (head + f"not judged: {s['boards']} boards, fewer than the {s['warmup']} it takes before "
                "its first verdict (more tournament.seeds or tournament.hands)")
    return head + f"{s['verdict'] or 'undecided'} after {s['boards']} boards (LLR {s['llr']:+.2f})"


def standings(console: Console, result: Json, wide: bool = False) -> None:
    """Per variant: the standings, make rates per contract, and the head-to-head table.

    The main table fits 100 columns; `wide` adds the seed-stream spread, chips as bidder
    and as defender, and the faults by kind."""
    strength = result.get("strength") or {}
    said = every_verdict(result)
    if said:  # the verdicts first, in words a reader can quote
        console.print("[bold]Verdicts[/] (chips per 100 hands, A − B, 95% interval over boards)", highlight=False)
        for line in said:
            console.print(f"- {escape(line)}", highlight=False)
        console.print()
    for variant, data in result["variants"].items():
        _bot_table(console, variant, data["bots"], wide, data.get("estimator"))
        _contract_table(console, variant, data["bots"])
        # A league's pairs are thousands of rows, most of them a few boards: --json has them.
        few = not strength or len(data["bots"]) <= FEW_BOTS
        if data["pairs"] and few:
            _pairs_table(console, variant, data["pairs"], data.get("estimator"))
        board_tables(console, variant, data, crosstable=few)
        if variant in strength:
            strength_table(console, variant, strength[variant])
        if data["kitty"]:
            console.print(f"{variant}: {data['kitty']} chips were left in kitties at the ends of matches "
                          "(no player's: chips + kitty sum to zero)")
    if result["skipped"]:
        console.print(f"[yellow]{len(result['skipped'])} matches skipped[/] "
                      f"({escape(result['skipped'][0]['reason'])}{', …' if len(result['skipped']) > 1 else ''})")
    if result.get("sprt"):
        console.print(sprt_line(result["sprt"]), highlight=False)
    for alias, d in result["disqualified"].items():
        console.print(f"[red]{alias} disqualified[/] after match {d['after_match']}: "
                      f"{d['faults']} faults in {d['decisions']} decisions")
    ranking_table(console, result)


BOT_LEGEND = ("per 100 = chips per 100 hands; 95% CI of it over boards (a board = one hand of a deal "
              "set, in all its rotations; line-ups are strata); hands = hands its own bot played (from "
              "the hand a seat dies in, the stand-in plays it and is booked for it); made = contracts "
              "made / contracts played as bidder; faults = every fault: illegal answers (in play a "
              "revoke), exceptions, time-outs, hangs, crashes and protocol faults")


def _estimator_note(estimator: str | None) -> str:
    """The caption's words for a luck-adjusted table (`table.luck`); plain needs none."""
    if estimator != "adjusted":
        return ""
    return ("; luck-adjusted: per 100 and its CI are chips less the luck of random's answers (each "
            "answer's value less the mean value of its legal answers: unbiased), --json has the plain figures too")


def _bot_table(console: Console, variant: str, rows: list[Json], wide: bool = False,
               estimator: str | None = None) -> None:
    cols = [Col("bot", "left"), Col("hands"), Col("chips"), Col("per 100"), Col("95% CI"),
            Col("made"), Col("faults")]
    if wide:
        cols += [Col("seed streams"), Col("as bidder"), Col("as defender"), Col("revokes"),
                 Col("faults by kind", "left", True)]
    cells = []
    for row in rows:
        errors = sum(row["faults"].values())  # crashes are faults too (kind crash or hang)
        name = row["bot"] + (" [red](disqualified)[/]" if row["disqualified"] else "")
        line = [name, str(row["hands"]), f"{row['chips']:+d}", _rate(row), _ci(row["ci95"]),
                f"{row['bids_won']}/{row['bid_attempts']}", str(errors)]
        if wide:
            spread = "—" if row["streams"] is None else f"{row['streams'][0]:+.1f} to {row['streams'][1]:+.1f}"
            line += [spread, f"{row['bidder_chips']:+d}", f"{row['defender_chips']:+d}", str(row["revokes"]),
                     ", ".join(f"{k} {v}" for k, v in row["faults"].items()) or "none"]
        cells.append(line)
    legend = BOT_LEGEND + ("; seed streams = the lowest and highest per 100 of any seed stream; as "
                           "bidder, as defender = chips won in each role" if wide else "; --wide shows more")
    print_table(console, f"{variant}: chips per 100 hands", cols, cells,
                caption=legend + _estimator_note(estimator))
    _no_interval_notes(console, variant, rows)
    _duplicate_notes(console, variant, rows)


#: A design effect from which a table says duplicate widened a bot's interval: below it the
#: difference from 1 is within what a run of a few hundred boards estimates it to.
WIDENED = 1.05


def _duplicate_notes(console: Console, variant: str, rows: list[Json]) -> None:
    """Say where replaying the deals widened a bot's interval, measured on this run
    (`duplicate_effect`): what duplicate costs such a bot is its boards' spread."""
    wide = [f"{row['bot']} ({row['duplicate_effect']:.2f})" for row in rows
            if (row.get("duplicate_effect") or 0) >= WIDENED]
    if wide:
        console.print(f"[yellow]{variant}: duplicate widened the interval of {escape(', '.join(wide))}: a "
                      "board of such a bot varies that many times as much as as many independent hands of its "
                      "own, as its replays of a deal go together (a bot that seldom bids pays as defender for "
                      "what the deal holds, in whichever seat); see docs/explanation/statistics.md[/]",
                      highlight=False)


def _rate(row: Json) -> str:
    """A row's per 100: '—' with no hands of its own, marked * when not over boards."""
    per100 = row.get("per100")
    if per100 is None:
        return "—"
    return f"{per100:+.2f}" + ("*" if row.get("basis", "boards") != "boards" else "")


def _no_interval_notes(console: Console, variant: str, rows: list[Json]) -> None:
    """Say why a bot has no rate over boards, and which bots had boards left out (their
    seat died, or the stand-in held it after a disqualification)."""
    for row in rows:
        if row.get("basis", "boards") != "boards":
            console.print(f"[yellow]{variant}: {escape(row['bot'])}: *{escape(row['no_interval'] or '')}; "
                          "ranked below every bot rated over boards[/]", highlight=False)
    bare = [row for row in rows if row.get("basis", "boards") == "boards" and row["ci95"] is None]
    if bare:
        who = "every bot" if len(bare) == len(rows) else ", ".join(row["bot"] for row in bare)
        console.print(f"[yellow]{variant}: no 95% interval for {escape(who)}: "
                      f"{escape(bare[0].get('no_interval') or 'too few boards')}[/]", highlight=False)
    left = [f"{row['bot']} {row['boards_left_out']}" for row in rows if row.get("boards_left_out")]
    if left:
        console.print(f"[yellow]{variant}: boards left out of a bot's own intervals (a seat of it died, or "
                      f"the stand-in held it): {escape(', '.join(left))}; the other bots at its tables keep "
                      "them[/]", highlight=False)


def _contract_table(console: Console, variant: str, rows: list[Json]) -> None:
    contracts = sorted({k for row in rows for k in row["contracts"]}, key=_ladder_order)
    if not contracts:
        return
    cols = [Col("bot", "left")] + [Col(c) for c in contracts]
    cells = []
    for row in rows:
        line = [row["bot"]]
        for c in contracts:
            got = row["contracts"].get(c)
            line.append("—" if got is None else f"{got['made']}/{got['bid']} ({got['rate']:.0%})")
        cells.append(line)
    print_table(console, f"{variant}: contracts made / played, per contract", cols, cells)


def _ladder_order(contract: str) -> tuple[int, str]:
    from naparena.game.rules import FLOATER_LADDER, SEVEN_LADDER, STANDARD_LADDER
    for ladder in (STANDARD_LADDER, SEVEN_LADDER, FLOATER_LADDER):
        if contract in ladder:
            return ladder.index(contract), contract
    return 99, contract


PAIRS_LEGEND = ("A − B = A's chips minus B's per 100 hands over the boards both played (line-ups as "
                "strata); p = t-test of that difference; A won = the share of those boards on which A "
                "ended ahead of B (ties count half)")


def _pairs_table(console: Console, variant: str, pairs: list[Json], estimator: str | None = None) -> None:
    cols = [Col("A", "left"), Col("B", "left"), Col("boards"), Col("A − B"), Col("95% CI"), Col("p"),
            Col("A won"), Col("verdict", "left", True)]
    cells = []
    for p in pairs:
        pv = _p(p.get("p_value"))
        sup = "—" if p.get("p_superior") is None else f"{p['p_superior']:.0%}"
        cells.append([p["a"], p["b"], str(p["units"]), f"{p['diff_per100']:+.2f}", _ci(p["ci95"]), pv, sup,
                      pair_verdict(p)])
    print_table(console, f"{variant}: head to head over the same deals", cols, cells, keys=2,
                caption=PAIRS_LEGEND + _estimator_note(estimator))
    few = [p for p in pairs if p.get("no_interval")]
    if few:
        console.print(f"[yellow]{variant}: {len(few)} pairs have no interval: {escape(few[0]['no_interval'])}[/]",
                      highlight=False)


def comparison(console: Console, name_a: str, name_b: str, result: Json) -> None:
    for variant, data in result["variants"].items():
        cols = [Col("bot", "left"), Col("A"), Col("B"), Col("A − B"), Col("95% CI"), Col("p"),
                Col("verdict", "left", True)]
        cells = []
        for r in data["bots"]:
            p = _p(r["p_value"])
            cells.append([r["bot"], f"{r['a_per100']:+.2f}", f"{r['b_per100']:+.2f}", f"{r['diff']:+.2f}",
                          _ci(r["ci95"]), p, r["verdict"]])
        estimators = f"A {data.get('a_estimator', 'plain')}, B {data.get('b_estimator', 'plain')}"
        print_table(console, f"{variant}: chips per 100 hands; Welch 95% CI", cols, cells,
                    caption=f"A = {name_a}, B = {name_b}; estimators: {estimators} (luck-adjusted figures take "
                            "the luck of random's answers out; both estimate the same expected chips)")
        if data["pairs"]:
            cols = [Col("A", "left"), Col("B", "left"), Col("sd in run A"), Col("sd in run B"),
                    Col("variance B / A"), Col("95% CI")]
            cells = [[p["a"], p["b"], f"{p['a_sd_per_hand']:.2f}", f"{p['b_sd_per_hand']:.2f}",
                      f"{p['variance_ratio_b_over_a']:.2f}", "[{:.2f}, {:.2f}]".format(*p["ratio_ci95"])]
                     for p in data["pairs"]]
            print_table(console, f"{variant}: noise of each head-to-head (sd of the paired difference "
                        "per hand)", cols, cells, keys=2)


def board_tables(console: Console, variant: str, data: Json, crosstable: bool = True) -> None:
    """Duplicate identity, boards left out, the crosstable and the position effects."""
    ident = data.get("identity")
    if ident is not None:
        style = "" if ident["identical"] == ident["boards"] else "[red]"
        console.print(f"{style}{variant}: {ident['identical']} of {ident['boards']} boards "
                      f"({ident['share']:.1%}) dealt identically in every rotation ({ident['dealing']})")
    if data.get("left_out"):
        console.print(f"[yellow]{variant}: {data['left_out']} boards of deal sets missing a rotation "
                      "(a match not played) left out of every interval")
    if len(data["bots"]) > 2 and data["pairs"] and crosstable:
        crosstable_table(console, variant, data)
    if data.get("positions"):
        title = f"{variant}: chips per 100 hands by position (0 = eldest hand, left of the dealer)"
        table = titled(title, console.width)
        for col in ("position", "boards", "per 100", "95% CI"):
            table.add_column(col, justify="right")
        for p in data["positions"]:
            table.add_row(str(p["position"]), str(p["units"]), f"{p['per100']:+.2f}", _ci(p["ci95"]))
        console.print(table)


def crosstable_table(console: Console, variant: str, data: Json) -> None:
    """Row − column chips per 100 hands on shared boards; * where the interval excludes 0."""
    from naparena.stats.ratings import crosstable

    bots = [r["bot"] for r in data["bots"]]
    cells = crosstable(data["pairs"], bots)
    table = titled(f"{variant}: crosstable, row − column chips per 100 hands (* = 95% CI excludes 0)", console.width)
    table.add_column("bot")
    for b in bots:
        table.add_column(b, justify="right")
    for a in bots:
        row = []
        for b in bots:
            c = cells[a].get(b)
            sure = c is not None and c["ci95"] is not None and (c["ci95"][0] > 0 or c["ci95"][1] < 0)
            row.append("" if c is None else f"{signed(c['diff'], 1)}{'*' if sure else ''}")
        table.add_row(a, *row)
    console.print(table)


# Above this many bots a league's head-to-head table and crosstable are left to --json.
FEW_BOTS = 12

STRENGTH_LEGENDS = {
    "margins": ("rating = chips per 100 hands the bot would win at a table of average bots of this "
                "list, fitted over every seat of every board with its line-up's strength taken out "
                "(least squares on chip margins); 95% CI from a sandwich over boards, widened by the "
                "line-ups' own effect (the league could have drawn other tables); boards = boards behind "
                "the rating"),
    "places": ("rating = log-strength (Bradley-Terry on board places: each pair at a table, the better "
               "placed wins; a weak prior, sd 2; the list sums to zero): bots rated a and b, the first "
               "places above the other with odds e^(a − b); 95% CI from a sandwich over boards; boards = boards behind "
               "the rating"),
}


def strength_table(console: Console, title: str, rated: Json) -> None:
    """A rating list: rank, bot, boards, rating with its 95% interval (`stats.strength.rate`)."""
    if not rated["connected"]:
        console.print(f"[yellow]{escape(title)}: the bots do not form one field (some never met the others "
                      "through any table): no ratings[/]", highlight=False)
        return
    if not rated["bots"]:  # `stats.strength.rate` rates a list of two bots or more
        console.print(f"[yellow]{escape(title)}: one bot only (aliases of a bot with the same name, version "
                      "and settings are one bot here): a rating needs at least two different bots[/]",
                      highlight=False)
        return
    cols = [Col("rank"), Col("bot", "left", True), Col("boards"), Col("rating"), Col("95% CI")]
    cells = [[str(r["rank"]), escape(r["bot"]), str(r["boards"]), f"{r['rating']:+.2f}", _ci(r["ci95"])]
             for r in rated["bots"]]
    print_table(console, f"{title}: ratings, line-ups adjusted", cols, cells,
                caption=STRENGTH_LEGENDS[rated["model"]] + _estimator_note(rated.get("estimator")))
    if rated.get("no_interval"):
        console.print(f"[yellow]{escape(title)}: no rating has an interval: {escape(rated['no_interval'])}[/]",
                      highlight=False)
    else:
        for r in rated["bots"]:
            if r.get("no_interval"):
                console.print(f"[yellow]{escape(title)}: {escape(r['bot'])} has no interval: "
                              f"{escape(r['no_interval'])}[/]", highlight=False)


def ranking_table(console: Console, result: Json) -> None:
    """The overall ranking: each bot's variants averaged, with a 95% interval."""
    rows = result.get("ranking") or []
    if len(result["variants"]) < 2 or not rows:
        return
    table = titled("ranking over all variants: mean chips per 100 hands, 95% CI", console.width)
    for col in ("rank", "bot", "variants", "per 100", "95% CI"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for r in rows:
        table.add_row(str(r["rank"]), r["bot"], str(r["variants"]), _rate(r), _ci(r["ci95"]))
    console.print(table)


def variants(console: Console) -> None:
    rows = [[v.name, v.description] for v in VARIANTS.values()]
    print_table(console, "Named variants (naparena variants NAME shows every option)",
                [Col("variant", "left"), Col("description", "left", True)], rows)


def _option_value(value: object) -> str:
    """A rules option as the tournament file writes it: a list bare, text quoted, true/false."""
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def variant(console: Console, name: str) -> None:
    v = VARIANTS[name]
    rows = []
    for option, value in v.options.items():
        rows.append([option, _option_value(value), v.sources.get(option, "")])
    print_table(console, f"{v.name}: {v.description}",
                [Col("option", "left"), Col("value", "left", True), Col("source", "left", True)], rows)


def bots(console: Console, registry: Registry) -> None:
    from naparena.bots.plugins import bot_version
    # Text from plug-ins is text, never markup (a description may hold brackets).
    rows = [[escape(str(x)) for x in (e.name, e.source, bot_version(e), e.description)]
            for e in sorted(registry.bots.values(), key=lambda e: e.name)]
    print_table(console, "Bots", [Col("bot", "left"), Col("source", "left", True),
                                  Col("version", "left", True), Col("description", "left", True)], rows)


def failures(console: Console, registry: Registry, verbose: bool = False) -> None:
    for f in registry.failures:
        console.print(f"[red]plug-in failed[/] {escape(str(f))}", highlight=False, soft_wrap=not console.is_terminal)
        if verbose and f.traceback:
            console.print(f.traceback.rstrip(), markup=False, highlight=False)


def check(console: Console, name: str, results: Sequence[VariantChecked]) -> None:
    cols = [Col("variant", "left"), Col("seats"), Col("hands"), Col("decisions"), Col("faults", "left", True),
            Col("median ms"), Col("p95 ms"), Col("max ms")]
    rows = []
    for r in results:
        faults = ", ".join(f"{k} {v}" for k, v in r.faults.items()) or ("not played" if r.not_played else "none")
        seats = f"{r.players[0]}–{r.players[-1]}" if len(r.players) > 1 else str(r.players[0])
        rows.append([r.variant, seats, str(r.hands), str(r.decisions), faults if r.ok else f"[red]{faults}[/]",
                     f"{r.percentile(0.5) * 1e3:.2f}", f"{r.percentile(0.95) * 1e3:.2f}",
                     f"{r.percentile(1.0) * 1e3:.2f}"])
    print_table(console, f"naparena check {name}", cols, rows)
    for r in results:
        if r.not_played:
            console.print(f"not played in {r.variant}: {r.not_played}", highlight=False, markup=False,
                          soft_wrap=True)
        if r.first_error:
            # In full, unwrapped: a protocol violation quotes the offending line.
            console.print(f"first error in {r.variant}: {r.first_error}", highlight=False, markup=False,
                          soft_wrap=True)


#: Column heads of the coverage table, one per decision kind, short enough for 100 columns.
KIND_HEADS = {"bid": "bid", "play": "play", "peep": "peep", "floater_peep": "fpeep", "exchange": "exch",
              "garnet": "garn", "garnet_discard": "gdisc", "peep_exchange": "pexch",
              "floater_discard": "fdisc", "trumps": "trump"}


def check_coverage(console: Console, name: str, results: Sequence[VariantChecked], at_least: int) -> None:
    """Per variant and table size, the decisions of each kind the bot was asked: "·" where
    the variant has no such decision, red where a kind it has was asked fewer than
    `at_least` times."""
    cols = [Col("variant", "left", True), Col("seats")] + [Col(head) for head in KIND_HEADS.values()]
    rows = []
    for r in results:
        for players in r.players:
            asked = r.asked.get(players, {})
            cells = []
            for kind in KIND_HEADS:
                n = asked.get(kind, 0)
                cells.append("·" if kind not in r.kinds else f"[red]{n}[/]" if n < at_least else str(n))
            rows.append([r.variant, str(players), *cells])
    heads = ", ".join(f"{head} = {kind}" for kind, head in KIND_HEADS.items() if head != kind)
    print_table(console, f"{name}: decisions asked, by kind", cols, rows,
                caption=f"{heads}; · = the variant has no such decision; red = asked fewer than {at_least} "
                        f"time{'s' if at_least != 1 else ''}")


def card(c: int, trumps: int | None = None) -> str:
    text = cards.RANK_NAMES[cards.RANK[c]] + SUIT_SYMBOLS[cards.SUIT[c]]
    color = "red" if cards.SUIT[c] in (1, 2) else "default"
    style = f"bold {color}" if trumps is not None and cards.SUIT[c] == trumps else color
    return f"[{style}]{text}[/]"


def hand_replay(console: Console, log: Json, record: Json) -> None:
    """One hand trick by trick: deal, decisions, bids, tricks, settlement."""
    aliases = [escape(f"{b['alias']}@{seat}") for seat, b in enumerate(log["bots"])]  # alias@seat: aliases may repeat
    trumps = record["trumps"]
    console.rule(f"match {log['match'].get('index', '?')} · hand {record['n']} · "
                 f"{log['variant']} · dealer {aliases[record['dealer']]}")
    for seat, held in enumerate(record["deal"]):
        shown = " ".join(card(c, trumps) for c in held) if held else "(sits out)"
        console.print(f"  {aliases[seat]:>12}: {shown}")
    for key in ("peep_card", "floater"):
        if key in record:
            console.print(f"  {key.replace('_', ' ')}: {card(record[key])}")
    for seat, kind, answer in record.get("pre", ()):
        shown = SUIT_SYMBOLS[answer] if kind == "trumps" else _answer(answer)
        console.print(f"  {aliases[seat]} {kind}: {shown}")
    console.print("  bids: " + ", ".join(f"{aliases[s]} {b}" for s, b in record["bids"]))
    if record["bidder"] is None:
        console.print("  all passed")
    else:
        suit = "no trumps" if trumps is None else f"trumps {SUIT_SYMBOLS[trumps]}"
        console.print(f"  contract: {aliases[record['bidder']]} {record['contract']}, {suit}")
    for i, (_, played, winner) in enumerate(record["tricks"], 1):
        plays = "  ".join(f"{aliases[s]} {card(c, trumps)}" for s, c in played)
        console.print(f"  trick {i}: {plays}  → {aliases[winner]}")
    if "revoke" in record:
        console.print(f"  [red]revoke by {aliases[record['revoke']]}[/]")
    for decision, seat, kind, reason in record.get("faults", ()):
        console.print(f"  [yellow]fault[/] {aliases[seat]} ({kind}, decision {decision}): {escape(str(reason))}")
    console.print(f"  result: {record['result']}; chips " +
                  ", ".join(f"{aliases[s]} {d:+d}" for s, d in enumerate(record["chips"])) +
                  f"; kitty {record['kitty']}")


def _answer(answer: Any) -> str:  # Any: a decision's answer as the JSON log holds it
    if isinstance(answer, list):
        return " ".join(card(c) for c in answer) or "nothing"
    if isinstance(answer, bool) or answer is None:
        return {True: "yes", False: "no", None: "keep"}[answer]
    if isinstance(answer, int):
        return card(answer)
    return str(answer)
