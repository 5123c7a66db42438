"""The HTML report answers "which bot is best, and how sure": the ranking first, with
intervals and gaps to the leader; head-to-head tables with intervals, p and verdicts; a
chart of gaps that stays readable when one bot is far from the rest; stand-in chips kept
off the bots whose seats it played; no label cut off and nothing wider than the window,
checked in headless Chromium at 1,280, 1,000 and 390 px; Ctrl-C while the page is written."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest
import tomli_w
from typer.testing import CliRunner

from naparena.arena.records.ledger import standings_from_logs
from naparena.arena.records.rundir import MATCHES
from naparena.cli import app
from naparena.report.html import axis_parts, bankrolls, gaps_chart, page, ranking_table, text_width
from naparena.stats.ratings import gaps_to, oriented, pair_verdict
from naparena.stats.standings import STAND_IN_ALIAS
from tests.helpers import WAIT, child_env, flat, wait_for

BOTS_DIR = Path(__file__).resolve().parent / "bots_misbehaving"
LONG = "cautious-with-a-rather-long-alias-name-that-goes-on"
GAPS_LABEL = "difference from the leader with 95% intervals"


@pytest.fixture(scope="module")
def field(tmp_path_factory):
    """A real run: `random` far below the others, a bot with a long alias, `bad`
    disqualified after its first match (the stand-in plays its later seats) and `dies`,
    whose seat dies in hand 5 of every match it plays."""
    folder = tmp_path_factory.mktemp("field")
    data = {"tournament": {"name": "field", "seed": 5, "seeds": 2, "hands": 12, "table": 4, "timeout": 5.0,
                           "bots_dir": str(BOTS_DIR)},
            "bots": [{"name": "heuristic"}, {"name": "cautious", "alias": LONG}, {"name": "random"},
                     {"name": "misbehave", "alias": "bad", "params": {"mode": "raise", "every": 1}},
                     {"name": "misbehave", "alias": "dies",
                      "params": {"mode": "exit", "every": 1, "hand": 5, "times": 1}}],
            "variants": [{"name": "classic"}, {"name": "pagat"}]}
    (folder / "field.toml").write_text(tomli_w.dumps(data))
    done = CliRunner().invoke(app, ["run", str(folder / "field.toml"), "--workers", "2", "--log-dir",
                                    str(folder / "logs"), "--json"])
    assert done.exit_code == 0, done.output
    [run_dir] = [p for p in (folder / "logs").iterdir() if p.is_dir()]
    out = folder / "report.html"
    made = CliRunner().invoke(app, ["report", str(run_dir), "--html", str(out)])
    assert made.exit_code == 0, made.output
    result = standings_from_logs(run_dir)
    assert list(result["disqualified"]) == ["bad"]
    return run_dir, result, out


def _logs(run_dir: Path) -> list[dict]:
    return [orjson.loads(p.read_bytes()) for p in sorted((run_dir / MATCHES).glob("*.json"))]


class Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts, with its class."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append((dict(attrs).get("class", ""), []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][1][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def _rows(table: list[list[str]]) -> dict[str, list[str]]:
    """Body rows keyed by the bot (second cell), its marks cut off."""
    return {row[1].split(" (")[0]: row for row in table[1:]}


# --- the bankroll curves --------------------------------------------------------------

def test_the_stand_in_chips_go_to_the_stand_in_not_to_the_bot_whose_seat_it_played(field):
    run_dir, result, out = field
    own: dict[tuple[str, str], int] = {}
    everything: dict[tuple[str, str], int] = {}  # what the chart used to add up: every seat of the alias
    for log in _logs(run_dir):
        if "skipped" in log:
            continue
        variant, stand_ins = log["match"]["variant"], set(log["match"].get("stand_ins", ()))
        died = [s.get("crashed_at") for s in log["summary"]["seats"]]
        for record in log["hands"]:
            for seat, (alias, chips) in enumerate(zip(log["match"]["seats"], record["chips"])):
                everything[variant, alias] = everything.get((variant, alias), 0) + chips
                stand_in = seat in stand_ins or (died[seat] is not None and record["n"] >= died[seat])
                key = (variant, STAND_IN_ALIAS if stand_in else alias)
                own[key] = own.get(key, 0) + chips
    curves = bankrolls(run_dir)
    text = out.read_text()
    for variant, per_bot in curves.items():
        ends = {alias: points[-1][1] for alias, points in per_bot.items()}
        assert ends == {alias: chips for (v, alias), chips in own.items() if v == variant}
        # chips are conserved: the curves and the kitty add up to zero
        assert sum(ends.values()) + result["variants"][variant]["kitty"] == 0
        section = text.split(f"<h2>{variant}</h2>")[1].split("<h2>")[0]
        for alias, chips in ends.items():
            assert f">{alias} {chips:+,}</text>" in section
    # the run must give the old way a chance to be wrong
    assert any(everything[v, "bad"] != own.get((v, "bad"), 0) for v in curves)
    assert any(everything[v, "dies"] != own.get((v, "dies"), 0) for v in curves)
    classic = {r["bot"]: r for r in result["variants"]["classic"]["bots"]}
    assert curves["classic"]["bad"][-1][1] == classic["bad"]["chips"]  # as the standings book it


# --- the tables -----------------------------------------------------------------------

def test_the_page_opens_with_the_overall_ranking_with_intervals_gaps_and_p(field):
    _, result, out = field
    text = out.read_text()
    assert text.index("<table class='ranking'>") < text.index("<svg")
    tables = Tables(text).tables
    kind, first = tables[0]
    assert kind == "ranking" and first[0][:5] == ["rank", "bot", "per 100", "95% CI", "boards"]
    assert {"gap to leader", "p"} <= set(first[0])
    rows = _rows(first)
    leader = result["ranking"][0]["bot"]
    gaps = gaps_to(leader, [d["pairs"] for d in result["variants"].values()])
    for r in result["ranking"]:
        row = rows[r["bot"]]
        assert row[0] == str(r["rank"]) and row[2] == f"{r['per100']:+.2f}"
        assert row[3] == ("—" if r["ci95"] is None else f"[{r['ci95'][0]:+.1f}, {r['ci95'][1]:+.1f}]")
        if r["bot"] == leader:
            assert row[6] == "leader"
        elif r["bot"] in gaps:
            gap = gaps[r["bot"]]
            shown_p = "<1e-300" if gap["p_value"] == 0 else f"{gap['p_value']:.3g}"  # an underflow, said so
            assert row[6:9] == [f"{gap['diff']:+.2f}", f"[{gap['ci95'][0]:+.1f}, {gap['ci95'][1]:+.1f}]", shown_p]
    # then each variant's ranking, before any variant's own section
    variant_rankings = [t for kind, t in tables if kind == "ranking"][1:]
    assert len(variant_rankings) == len(result["variants"])
    for table, data in zip(variant_rankings, result["variants"].values()):
        assert list(_rows(table)) == [r["bot"] for r in data["bots"]]


def test_a_disqualified_bot_is_marked_and_has_no_interval(field):
    _, result, out = field
    rankings = [t for kind, t in Tables(out.read_text()).tables if kind == "ranking"]
    shown = [row for t in rankings for row in t[1:] if row[1].startswith("bad")]
    assert len(shown) == 2  # over all variants, and classic: it never played pagat
    for row in shown:
        assert row[1] == "bad (disqualified)"
        assert row[3] == "—"  # no interval: its boards were left out
    bad = next(r for r in result["variants"]["classic"]["bots"] if r["bot"] == "bad")
    assert bad["ci95"] is None and bad["disqualified"]


def test_head_to_head_tables_carry_difference_interval_p_and_the_shared_verdict(field):
    _, result, out = field
    pair_tables = [t for kind, t in Tables(out.read_text()).tables if kind == "pairs"]
    assert len(pair_tables) == len(result["variants"])
    for table, data in zip(pair_tables, result["variants"].values()):
        assert table[0] == ["A", "B", "boards", "A − B", "95% CI", "p", "A won", "verdict", "widest hands"]
        order = [r["bot"] for r in data["bots"]]
        shown = {(row[0].split(" (")[0], row[1].split(" (")[0]): row for row in table[1:]}
        assert len(shown) == len(data["pairs"])
        for p in data["pairs"]:
            a = min(p["a"], p["b"], key=order.index)  # the better-ranked bot is A
            turned = oriented(p, a)
            row = shown[turned["a"], turned["b"]]
            assert row[3] == f"{turned['diff_per100']:+.2f}"
            assert row[4] == f"[{turned['ci95'][0]:+.1f}, {turned['ci95'][1]:+.1f}]"
            assert row[5] == f"{p['p_value']:.3g}" and row[7] == pair_verdict(turned)
            assert turned["diff_per100"] >= 0 or order.index(turned["a"]) < order.index(turned["b"])


def test_a_table_without_an_interval_shows_a_dash_and_the_chart_no_bar():
    rows = [{"bot": "a", "rank": 1, "per100": 30.0, "ci95": [20.0, 40.0], "boards": 50},
            {"bot": "gone", "rank": 2, "per100": -12.5, "ci95": None, "boards": 0, "disqualified": True}]
    gaps = {"gone": {"diff": -40.0, "ci95": None, "p_value": None, "variants": 1, "boards": 3}}
    marks = {"gone": "disqualified"}
    table = Tables(ranking_table(rows, gaps, "a", marks)).tables[0][1]
    assert table[2] == ["2", "gone (disqualified)", "-12.50", "—", "0", "-40.00", "—", "—"]
    chart = gaps_chart(rows, gaps, "a", marks)
    assert "stroke-width='3'" not in chart  # no interval bar anywhere
    assert "fill='#fff'" in chart and "-40.0 (no interval: too few boards)" in chart


# --- the chart of gaps ----------------------------------------------------------------

def _bars(svg: str) -> list[float]:
    bar = r"<line x1='([\d.]+)' x2='([\d.]+)'[^>]*stroke-width='3'"
    return [abs(float(b) - float(a)) for a, b in re.findall(bar, svg)]


def test_a_bot_far_below_does_not_squeeze_the_others_gaps():
    rows = [{"bot": b, "rank": i, "per100": v, "ci95": [v - 9, v + 9]}
            for i, (b, v) in enumerate((("a", 40.0), ("b", 25.0), ("c", 18.0), ("random", -800.0)), 1)]
    gaps = {"b": {"diff": -15.0, "ci95": [-30.0, 0.0], "p_value": 0.05},
            "c": {"diff": -22.0, "ci95": [-38.0, -6.0], "p_value": 0.01},
            "random": {"diff": -840.0, "ci95": [-900.0, -780.0], "p_value": 1e-40}}
    assert len(axis_parts([(0.0, 0.0)] + [tuple(g["ci95"]) for g in gaps.values()])) == 2
    chart = gaps_chart(rows, gaps, "a", {})
    b, c, far = _bars(chart)
    width = float(re.search(r"viewBox='0 0 (\d+)", chart).group(1))
    # on one linear scale b's interval would take 30/900 of the plot: under 25 px
    assert b > 0.1 * width and c > 0.1 * width and far > 0.1 * width
    assert "≈" in chart
    # a field without a far bot keeps one unbroken scale
    near = {k: v for k, v in gaps.items() if k != "random"}
    assert "≈" not in gaps_chart(rows[:3], near, "a", {})


def test_gap_chart_margins_grow_with_long_names_and_labels():
    name = "a-bot-whose-alias-is-far-longer-than-anyone-would-type-twice"
    rows = [{"bot": "a", "rank": 1, "per100": 1.0, "ci95": [0.0, 2.0]},
            {"bot": name, "rank": 2, "per100": -1.0, "ci95": None}]
    chart = gaps_chart(rows, {}, "a", {name: "disqualified"})
    x = float(re.search(r"<text x='([\d.]+)'[^>]*text-anchor='end' class='dq'>", chart).group(1))
    assert x >= text_width(f"{name} (disqualified)")


# --- in a real browser ----------------------------------------------------------------

OVERFLOW = """() => {
  const page = document.documentElement.clientWidth, out = [];
  for (const t of document.querySelectorAll('svg text')) {
    const box = t.getBoundingClientRect(), svg = t.ownerSVGElement.getBoundingClientRect();
    if (box.left < svg.left - 0.5 || box.right > svg.right + 0.5 || box.top < svg.top - 0.5 ||
        box.bottom > svg.bottom + 0.5) out.push('svg: ' + t.textContent);
  }
  for (const e of document.querySelectorAll('body *')) {
    const box = e.getBoundingClientRect();
    if (box.width && (box.left < -0.5 || box.right > page + 0.5))
      out.push(e.tagName + ': ' + e.textContent.slice(0, 60));
  }
  if (document.documentElement.scrollWidth > page) out.push('the page scrolls sideways');
  return out;
}"""


def _browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    return sync_api, chromium


@pytest.mark.parametrize("width", [1280, 1000, 390])
def test_in_chromium_no_label_is_cut_the_ranking_comes_first_and_gaps_are_charted(field, width):
    """At 390 px (a phone) the page was 901 px wide: the ranking table. Its rows now stack."""
    sync_api, chromium = _browser()
    _, _, out = field
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            view = browser.new_page(viewport={"width": width, "height": 900})
            view.goto(out.resolve().as_uri())
            assert view.evaluate(OVERFLOW) == []
            first = view.evaluate("""() => {
              const t = document.querySelector('table');
              const top = t.getBoundingClientRect().top;
              const svgs = [...document.querySelectorAll('svg')];
              return [t.className, svgs.every(s => s.getBoundingClientRect().top > top)];
            }""")
            assert first == ["ranking", True]
            charts = view.locator(f"svg[aria-label='{GAPS_LABEL}']")
            assert charts.count() == 3  # over all variants, then one per variant
            assert view.locator(f"svg[aria-label='{GAPS_LABEL}'] circle").count() > 0
        finally:
            browser.close()


def test_the_page_is_the_same_for_the_same_logs(field):
    run_dir, _, out = field
    assert page(run_dir) == out.read_text()


# --- the verdicts in words, and names that wrap only between words --------------------------------

def test_the_page_and_the_terminal_open_with_the_verdicts_in_words(field):
    from naparena.stats.verdicts import every_verdict
    run_dir, result, out = field
    said = every_verdict(result)
    assert any(" is ahead of " in line for line in said) and any("No clear difference" in line for line in said)
    text = out.read_text()
    assert text.index("<h2 id='verdicts'>") < text.index("<h2 id='ranking'>")
    section = text[text.index("<ul class='verdicts'>"):text.index("</ul>")]
    assert section.count("<li>") == len(said)
    printed = CliRunner().invoke(app, ["report", str(run_dir)], env={"COLUMNS": "200"})
    assert printed.exit_code == 0, printed.output
    lines = printed.stdout.splitlines()
    assert lines[0].startswith("Verdicts")
    assert [line.removeprefix("- ") for line in lines[1:1 + len(said)]] == said


WRAPPED_NAMES = """() => [...document.querySelectorAll('table.pairs span.bot')].map(e => {
  const range = document.createRange(), lines = [];
  let top = null, line = '';
  const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) for (let i = 0; i < n.length; i++) {
    range.setStart(n, i); range.setEnd(n, i + 1);
    const y = range.getBoundingClientRect().top;
    if (top !== null && Math.abs(y - top) > 2) { lines.push(line); line = ''; }
    top = y; line += n.data[i];
  }
  lines.push(line);
  return lines;
})"""


def _mid_word_breaks(view) -> list[list[str]]:
    """Every name in a head-to-head table split across lines other than after a separator."""
    return [lines for lines in view.evaluate(WRAPPED_NAMES)
            if any(not piece.endswith(("-", "_", ".", "+")) for piece in lines[:-1])]


@pytest.mark.parametrize("width", [1280, 1000, 700])
def test_in_chromium_a_bot_name_never_wraps_inside_a_word(field, width):
    sync_api, chromium = _browser()
    _, _, out = field
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            view = browser.new_page(viewport={"width": width, "height": 900})
            view.goto(out.resolve().as_uri())
            names = view.evaluate(WRAPPED_NAMES)
            assert any(lines == [LONG] or len(lines) > 1 for lines in names) and len(names) > 10
            assert _mid_word_breaks(view) == []
            # The control: the rule this replaced (break anywhere) does break names mid-word here.
            view.add_style_tag(content="td.name { overflow-wrap: anywhere !important; } "
                                       "table.pairs td.name { max-width: 4em; }")
            assert _mid_word_breaks(view), "the check sees a name broken inside a word"
        finally:
            browser.close()


# --- Ctrl-C while the page is written ------------------------------------------------------------

# `naparena ARGS` whose page export stands still at its third data file, once it has written
# the first two, and says so by making the file MARKER: the test's Ctrl-C then comes in the
# middle of the writing, whatever the machine's speed.
STALLED_EXPORT = """
import sys, time
from pathlib import Path
import naparena.report.viewer as viewer
marker, args = Path(sys.argv[1]), sys.argv[2:]
written, real = [], viewer.data_script
def stalled(name, data):
    written.append(name)
    if len(written) == 3:
        marker.touch()
        while True:
            time.sleep(1)
    return real(name, data)
viewer.data_script = stalled
from naparena.cli import main
sys.argv = ["naparena", *args]
main()
"""


def _ctrl_c_in_the_export(run_dir: Path, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    marker = folder.parent / f"{folder.name}.stalled"
    marker.unlink(missing_ok=True)
    previous = signal.getsignal(signal.SIGINT)  # a background pytest ignores SIGINT; the child must not
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-c", STALLED_EXPORT, str(marker), *args], cwd=folder,
                                env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        wait_for(marker.exists, "the export to stand still", proc=proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("command", ["report", "view"])
def test_ctrl_c_while_the_page_is_written_says_so_and_leaves_no_part_of_it(field, tmp_path, command):
    """`naparena report RUN --html r.html`, Ctrl-C: it printed nothing and left a page whose
    hands folder was half written."""
    run_dir, _, _ = field
    folder = tmp_path / "out"
    folder.mkdir()
    flag = "--html" if command == "report" else "--out"
    stopped = _ctrl_c_in_the_export(run_dir, folder, command, str(run_dir), flag, "r.html")
    assert stopped.returncode == 130, stopped.stderr
    assert "interrupted: r.html was not written, and no part of it was left" in flat(stopped.stderr)
    assert "Traceback" not in stopped.stderr
    assert sorted(p.name for p in folder.iterdir()) == []
    # A report already there is left whole: the page and every one of its hand files.
    made = subprocess.run([sys.executable, "-m", "naparena", command, str(run_dir), flag, "r.html"], cwd=folder,
                          env=child_env(), capture_output=True, text=True, timeout=WAIT)
    assert made.returncode == 0, made.stderr
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert len(before) > 3
    stopped = _ctrl_c_in_the_export(run_dir, folder, command, str(run_dir), flag, "r.html")
    assert stopped.returncode == 130, stopped.stderr
    assert "interrupted: r.html was not written again; the one there is as it was" in flat(stopped.stderr)
    assert {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
