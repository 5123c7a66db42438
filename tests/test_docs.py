"""The docs that are generated from code must be current, and must describe what bots
really receive."""

import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from naparena import Bot, hookimpl
from naparena.game.rules import VARIANTS, make_rules
from naparena.game.view import _Fields
from naparena.tools import docs
from naparena.tools.docs import bots_markdown, readme_block, variants_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_variants_doc_is_generated_from_the_code():
    assert (ROOT / "docs" / "VARIANTS.md").read_text() == variants_markdown()


def test_bots_doc_and_the_bot_interface_tables_are_generated_from_the_code():
    assert (ROOT / "docs" / "BOTS.md").read_text() == bots_markdown()
    assert readme_block() in (ROOT / docs.BLOCK_PAGE).read_text()


def test_every_named_variant_is_documented_with_every_option():
    text = variants_markdown()
    for name, variant in VARIANTS.items():
        section = text.split(f"## `{name}`")[1].split("\n## ")[0]
        for option in variant.options:
            assert f"| `{option}` |" in section, (name, option)


def test_the_site_names_every_variant_and_command():
    overview = (ROOT / "docs" / "explanation" / "variants-overview.md").read_text()
    for name in VARIANTS:
        assert f"| `{name}` |" in overview, name
    commands = (ROOT / "docs" / "reference" / "commands.md").read_text()
    for command in ("run", "resume", "report", "compare", "replay", "verify", "variants", "bots", "check", "init",
                    "bench", "play", "view", "ratings", "serve"):
        assert f"## `naparena {command}`" in commands, command


def test_rules_doc_is_generated_from_the_code():
    from naparena.tools.docs import rules_markdown
    assert (ROOT / "docs" / "RULES.md").read_text() == rules_markdown()


def test_rules_doc_lists_every_option_and_every_interpretation_of_the_variant_table():
    from naparena.game.rules import OPTION_NAMES
    from naparena.tools.docs import INTERPRETATIONS
    text = (ROOT / "docs" / "RULES.md").read_text()
    interpretations = text.split("## 10. Interpretations")[1].split("\n## ")[0]
    for option in OPTION_NAMES:
        assert f"| `{option}` |" in text, option
    for line in INTERPRETATIONS:
        assert line in interpretations
    for name, variant in VARIANTS.items():
        for option, source in variant.sources.items():
            if "interpretation" in source:
                assert f"`{name}`, `{option}`: {source}" in interpretations, (name, option)
    for topic in ("revoking bidder pays into the kitty", "\"auto\"` at 6 and 7", "at 2 players",
                  "floater's pack", "Écarté Nap is allowed with five to seven players", "Sedan"):
        assert topic in interpretations, topic


def test_readme_points_only_at_the_projects_own_rules_document():
    readme = (ROOT / "README.md").read_text()
    assert "docs/RULES.md" in readme
    assert readme.count("RULES.md") == readme.count("docs/RULES.md")


def test_every_bid_of_every_variant_is_in_the_bot_interface_with_its_tricks():
    readme = (ROOT / docs.BLOCK_PAGE).read_text()
    block = readme.split(docs.README_START)[1].split(docs.README_END)[0]
    for name in VARIANTS:
        rules = make_rules(name)
        [row] = [line for line in block.splitlines() if line.startswith(f"| `{name}` | ")]
        for bid in rules.bids:
            assert f"`{bid}` " in row, (name, bid)
    for bid in ("four-with", "bonaparte-without", "sedan", "six", "seven", "blucher"):
        assert f"`{bid}` " in readme


def test_every_view_field_and_property_is_documented_with_its_type():
    assert set(docs.VIEW_FIELDS) == set(_Fields._fields)
    text = "\n".join(docs.view_table())
    for field in (*_Fields._fields, "led", "pack", "peep_card"):
        assert f"| `{field}`" in text, field


class Listener(Bot):
    name = "listener"
    description = "records what it is told"
    heard: list = []

    def bid(self, view):
        return view.legal[-1] if self.seat == 0 else "pass"

    def play(self, view):
        return view.legal[0]

    def peep(self, view):
        return True

    def floater_peep(self, view):
        return True

    def garnet(self, view):
        return True

    def exchange(self, view):
        return view.legal[-1]

    def start_match(self, info):
        Listener.heard.append(("start_match", info))

    def observe(self, event):
        Listener.heard.append(("observe", event))

    def end_hand(self, record):
        Listener.heard.append(("end_hand", record))


class ListenerPlugin:
    @hookimpl
    def register_bots(self, register):
        register(Listener)


def test_the_documented_payloads_are_what_a_bot_receives():
    from naparena.arena.match.job import Job, seat_record
    from naparena.arena.match.play import play_job
    from naparena.bots.plugins import load_registry
    registry = load_registry(None, extra_plugins=[ListenerPlugin()])
    Listener.heard = []
    seats = tuple(seat_record(f"l{i}", "listener", {}, i) for i in range(4))
    for variant in ("classic", "floater", "purchase", "sir-garnet", "peep"):
        job = Job(index=0, seed=random.Random(variant).randrange(1 << 30), variant=variant,
                  rules=make_rules(variant), seats=seats, hands=20)
        play_job(job, registry)
    kinds = {kind for kind, _ in Listener.heard}
    assert kinds == {"start_match", "observe", "end_hand"}
    assert {p["type"] for kind, p in Listener.heard if kind == "observe"} == set(docs.EVENTS)
    for kind, payload in Listener.heard:
        if kind == "start_match":
            assert set(payload) == set(docs.MATCH_INFO)
        elif kind == "end_hand":
            assert set(payload) <= set(docs.RECORD_KEYS), set(payload) - set(docs.RECORD_KEYS)
        elif payload["type"] == "settle":
            assert set(payload) - {"type"} <= set(docs.RECORD_KEYS)
        else:
            keys, _ = docs.EVENTS[payload["type"]]
            assert set(payload) - {"type"} == set(keys), payload


def test_the_hook_payload_types_hold_the_documented_keys():
    """The TypedDicts a type checker reads name the keys the reference page lists (and the
    test above holds the page to what a bot receives)."""
    from typing import NotRequired, Required, get_args, get_origin, get_type_hints

    from naparena.bots.bot import Event, HandRecord, MatchInfo

    def keys(cls, wrapper=None):
        hints = get_type_hints(cls, include_extras=True)
        return {k for k, t in hints.items() if wrapper is None or get_origin(t) is wrapper}

    assert keys(MatchInfo) == set(docs.MATCH_INFO)
    assert keys(HandRecord) == set(docs.RECORD_KEYS)
    assert keys(HandRecord, NotRequired) == {"trick", "revoke", "faults"}  # "only if" on the page
    event_keys = {k for fields, _ in docs.EVENTS.values() for k in fields if k != "…"}
    assert keys(Event) == {"type"} | event_keys | set(docs.RECORD_KEYS)  # a settle event holds the record
    assert keys(Event, Required) == {"type"}
    (kinds,) = get_args(get_type_hints(Event, include_extras=True)["type"])
    assert set(get_args(kinds)) == set(docs.EVENTS)


# --- the site's generated reference pages ---------------------------------------------------

def _click_app():
    import typer

    from naparena.cli import app
    return typer.main.get_command(app)


def test_the_generated_reference_pages_are_current():
    from naparena.cli import api_modules
    from naparena.tools import reference
    written = reference.pages(_click_app(), api_modules())
    assert "reference/api.md" in written, "the Python API page is committed, so links to it work on a code host"
    for name, text in written.items():
        assert (ROOT / "docs" / name).read_text() == text, f"docs/{name} is stale: run `naparena docs`"


def test_a_stale_python_api_page_is_caught(monkeypatch):
    """The check above can fail: a public function whose docstring changed makes the
    committed API page stale."""
    import naparena.api
    from naparena.cli import api_modules
    from naparena.tools import reference
    monkeypatch.setattr(naparena.api.open_run, "__doc__", "A docstring the page does not hold.")
    page = reference.pages(_click_app(), api_modules())["reference/api.md"]
    assert (ROOT / "docs" / "reference" / "api.md").read_text() != page


def test_every_command_and_option_is_in_the_command_reference():
    from naparena.tools.reference import cli_markdown
    group = _click_app()
    page = cli_markdown(group)
    shown = 0
    for name, command in group.commands.items():
        if command.hidden:
            assert f"## `naparena {name}`" not in page
            continue
        section = page.split(f"## `naparena {name}`")[1].split("\n## ")[0]
        for param in command.params:
            if param.param_type_name == "argument":
                assert f"`{param.name.upper()}`" in section, (name, param.name)
            else:
                assert all(f"`{o}`" in section for o in param.opts), (name, param.opts)
                if param.help:
                    assert " ".join(param.help.split())[:40].replace("|", "\\|") in section, (name, param.opts)
            shown += 1
    assert shown > 60, "every command's options were looked at"


def test_the_command_reference_catches_an_option_it_misses(monkeypatch):
    """The check above can fail: an option added to the app and not to the page is caught."""
    from naparena.tools import reference
    group = _click_app()
    stale = reference.cli_markdown(group)
    run = group.commands["run"]
    clone = copy.copy(run.params[1])  # an option of the same kind, under a new name
    clone.opts, clone.help = ["--brand-new-option"], "new"
    monkeypatch.setattr(run, "params", [*run.params, clone])
    assert reference.cli_markdown(group) != stale
    assert "`--brand-new-option`" in reference.cli_markdown(group)


def test_every_key_of_a_tournament_file_is_in_its_reference():
    from naparena.arena.setup.settings import BOT_KEYS, FORMAT_KEYS, SEAT_KEYS, SETTINGS, SPRT_KEYS
    from naparena.game.rules import OPTION_NAMES
    page = (ROOT / "docs" / "reference" / "tournament-file.md").read_text()
    tables = {t: page.split(f"## `{t}`")[1].split("\n## ")[0]
              for t in ("[tournament]", "[[bots]]", "[[variants]]", "[seats]", "[sprt]")}
    for key, setting in SETTINGS.items():
        row = next(line for line in tables["[tournament]"].splitlines() if line.startswith(f"| `{key}` |"))
        if key != "name":
            shown = str(setting.default).lower() if isinstance(setting.default, bool) else str(setting.default)
            assert f"`{shown}`" in row or f'`"{shown}"`' in row, (key, row)
    for table, keys in (("[tournament]", FORMAT_KEYS), ("[[bots]]", BOT_KEYS), ("[[variants]]", OPTION_NAMES),
                        ("[seats]", (*SEAT_KEYS, "sandbox", "cores")), ("[sprt]", SPRT_KEYS)):
        for key in keys:
            assert f"| `{key}` |" in tables[table], (table, key)


def test_every_schema_field_is_in_the_formats_reference():
    from naparena.tools.reference import SCHEMAS, schema_rows
    page = (ROOT / "docs" / "reference" / "formats.md").read_text()
    for name in ("manifest", "match", "standings"):
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        rows = list(schema_rows(schema))
        assert len(rows) > 10, name
        for path, _, _ in rows:
            assert f"| `{path}` |" in page, (name, path)
    match = json.loads((SCHEMAS / "match.schema.json").read_text())
    paths = {p for p, _, _ in schema_rows(match)}
    assert {"match.index", "hands[].tricks", "summary"} <= paths, "refs and alternatives are followed"


def test_every_public_name_is_in_the_api_reference():
    import naparena
    from naparena import cards, testing
    from naparena.tools.reference import api_markdown
    page = api_markdown((("naparena", naparena), ("naparena.cards", cards), ("naparena.testing", testing)))
    for name in naparena.__all__:
        assert f"### `naparena.{name}" in page, name
    for name in ("view", "deal", "play_hand"):
        assert f"### `naparena.testing.{name}`" in page and f"{name}(" in page, name
    for method in ("bid", "play", "peep", "exchange", "start_match", "observe", "end_hand"):
        assert f"- `{method}(" in page, method
    assert testing.view.__doc__ and testing.view.__doc__.split()[0] in page


def test_every_page_of_the_site_is_in_its_navigation():
    config = (ROOT / "mkdocs.yml").read_text()
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert pages, "the site has pages"
    for page in pages:
        assert f": {page}\n" in config, page


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install '.[docs]'")
    pytest.importorskip("material", reason="the docs extra is not installed: pip install '.[docs]'")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "search" / "search_index.json").is_file(), "the site is searchable"
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").is_file()
    assert "naparena.testing.play_hand" in (tmp_path / "site" / "reference" / "api" / "index.html").read_text()


# --- the protocol page: whole examples, checked against the schemas ---------------------------

PROTOCOL_SCHEMAS = ROOT / "naparena" / "schemas" / "protocol"


def _protocol_examples() -> list[dict]:
    import re
    text = (ROOT / "docs" / "PROTOCOL.md").read_text()
    blocks = re.findall(r"^```json\n(.*?)^```", text, re.M | re.S)
    return [json.loads(line) for block in blocks for line in block.splitlines() if line.strip()]


def _schema_for(message: dict) -> str:
    """The schema a message is checked against: the bot's hello has a name."""
    if message["type"] == "hello":
        return "bot_hello" if "name" in message else "hello"
    return message["type"]


def test_every_protocol_message_has_a_whole_example_that_its_schema_accepts():
    import jsonschema
    examples = _protocol_examples()
    covered = set()
    for message in examples:
        name = _schema_for(message)
        jsonschema.validate(message, json.loads((PROTOCOL_SCHEMAS / f"{name}.json").read_text()))
        covered.add(name)
    assert covered == {p.stem for p in PROTOCOL_SCHEMAS.glob("*.json")}, "an example of every message"
    kinds = {m["view"]["kind"] for m in examples if m["type"] == "decide"}
    assert {"bid", "play", "peep", "peep_exchange"} <= kinds
    assert any(m["type"] == "decide" and m["view"]["peep_card"] is not None for m in examples)


def test_a_protocol_example_with_a_field_left_out_is_refused():
    """The check above can fail: the match example without its contracts breaks the schema."""
    import jsonschema
    [match] = [m for m in _protocol_examples() if m["type"] == "match"]
    del match["contracts"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(match, json.loads((PROTOCOL_SCHEMAS / "match.json").read_text()))


def test_the_match_message_gives_every_bid_its_tricks_and_stakes_and_legal_follows_their_order():
    from naparena.bots.protocol import contracts
    from naparena.game.engine import base_bid, legal_bids
    from naparena.game.rules import TRICKS_NEEDED, stakes
    for name in VARIANTS:
        rules = make_rules(name)
        listed = contracts(rules)
        names = [c["bid"] for c in listed]
        assert set(rules.bids) <= set(names), name
        for c in listed:
            base = base_bid(c["bid"])
            assert (c["tricks"], c["win"], c["loss"]) == (TRICKS_NEEDED[base], *stakes(rules, base))
        # After a Nap, Wellington opens (by a seat that is nobody in particular).
        opened = legal_bids(rules, ((9, "nap"),)) if {"nap", "wellington"} <= set(rules.bids) else ()
        for legal in (legal_bids(rules, ()), opened):
            if legal:
                assert legal[0] == "pass"
                assert list(legal[1:]) == [b for b in names if b in legal[1:]], (name, legal)


# --- the README's taste: its bot and file print the table it shows ------------------------------

def test_the_readmes_taste_prints_the_numbers_it_shows(tmp_path, monkeypatch):
    import re

    from typer.testing import CliRunner

    from naparena.cli import app
    readme = (ROOT / "README.md").read_text()
    # The taste's bot (the README's other Python block runs a tournament from Python).
    blocks = {kind: body for kind, body in re.findall(r"^```(python|toml)\n(.*?)^```", readme, re.M | re.S)
              if kind == "toml" or "register_bots" in body}
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "highcard.py").write_text(blocks["python"])
    (tmp_path / "taste.toml").write_text(blocks["toml"])
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, ["run", "taste.toml", "--workers", "1", "--json"])
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout[done.stdout.index("{"):])
    assert result["matches"] == 24
    shown = readme[readme.index("Verdicts (chips per 100 hands"):]
    for row in result["variants"]["classic"]["bots"]:
        lo, hi = row["ci95"]
        cells = [row["bot"], str(row["hands"]), f"{row['chips']:+d}", f"{row['per100']:+.2f}",
                 f"[{lo:+.1f}, {hi:+.1f}]"]
        assert re.search(r"│\s*" + r"\s*│\s*".join(map(re.escape, cells)) + r"\s*│", shown), row["bot"]
    from naparena.stats.verdicts import every_verdict
    for line in every_verdict(result):
        assert line in " ".join(shown.split()), line


def test_the_learning_tutorials_first_hand_runs_as_written():
    import re
    pytest.importorskip("gymnasium", reason="the envs extra is not installed: pip install '.[envs]'")
    text = (ROOT / "docs" / "tutorials" / "learning-agent.md").read_text()
    first_hand, batched = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    done = subprocess.run([sys.executable, "-c", first_hand], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    float(done.stdout.strip())  # the hand's chips, printed
    done = subprocess.run([sys.executable, "-c", batched], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "(16, 755) (16, 363) (16,)"  # the batch's arrays, one row a table


def test_legal_is_never_empty_and_in_the_order_the_protocol_states():
    """PROTOCOL.md's table of `legal`'s order, checked on every decision of seeded hands of
    every variant at every table size it allows."""
    from itertools import combinations

    from naparena.bots.protocol import contracts
    from naparena.game.engine import Match
    from naparena.tools.check import table_sizes
    seen = set()
    for name in VARIANTS:
        rules = make_rules(name)
        ladder = [c["bid"] for c in contracts(rules)]
        for players in table_sizes(name):
            match, rng = Match(rules, players, 11), random.Random(name)
            for _ in range(30):
                hand = match.next_hand()
                while not hand.over:
                    view, legal = hand.view(), hand.legal()
                    kind = view.kind
                    assert legal, (name, kind)
                    hand_cards = sorted(view.hand)
                    if kind == "bid":
                        assert legal[0] == "pass" and list(legal[1:]) == [b for b in ladder if b in legal[1:]]
                    elif kind in ("play", "floater_discard"):
                        assert list(legal) == sorted(legal) and set(legal) <= set(hand_cards)
                    elif kind in ("peep", "floater_peep", "garnet"):
                        assert legal == (False, True)
                    elif kind == "exchange":
                        sizes = range(len(legal[-1]) + 1)
                        assert list(legal) == [c for k in sizes for c in combinations(hand_cards, k)]
                    elif kind == "garnet_discard":
                        assert list(legal) == list(combinations(hand_cards, 5))
                    elif kind == "peep_exchange":
                        assert legal[0] is None and list(legal[1:]) == hand_cards
                    elif kind == "trumps":
                        assert list(legal) == sorted(legal) and set(legal) <= {0, 1, 2, 3}
                    seen.add(kind)
                    hand.apply(rng.choice(legal))
                match.finish(hand)
    assert seen == {"bid", "play", "peep", "floater_peep", "exchange", "garnet", "garnet_discard",
                    "peep_exchange", "floater_discard", "trumps"}


# --- the user journeys: every page's blocks run in CI, or the page says why (.ci/journeys.py) ----

def _journeys():
    """The CI runner of the docs' journeys, imported from its file (CI runs it as a script)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("journeys", ROOT / ".ci" / "journeys.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["journeys"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_tutorial_and_how_to_runs_its_blocks_or_says_why():
    journeys = _journeys()
    plans = {j.page.name: j for j in journeys.journeys(journeys.select([]))}  # a page it cannot read raises
    pages = {str(p.relative_to(ROOT)) for pattern in ("docs/tutorials/*.md", "docs/how-to/*.md")
             for p in ROOT.glob(pattern)} | {"README.md", "docs/reference/tournament-annotated.md"}
    assert pages <= set(plans)
    for name in ("README.md", "docs/tutorials/first-tournament.md", "docs/tutorials/first-bot.md",
                 "docs/tutorials/protocol-bot.md", "docs/reference/tournament-annotated.md", "docs/how-to/leagues.md"):
        assert plans[name].mode != "not run" and plans[name].steps, name
    # The first tutorial's pages share the README's venv: the same install recipe, one venv.
    assert plans["docs/tutorials/first-tournament.md"].mode == "shared"
    assert plans["docs/tutorials/first-tournament.md"].root.name == "README.md"
    # The first-bot tutorial installs pytest, so it gets a venv of its own.
    assert plans["docs/tutorials/first-bot.md"].mode == "private"


@pytest.mark.parametrize("page, problem", [
    ("```toml\n[tournament]\n```\n", "no journey marker"),
    ("<!-- journey: skip too long -->\n```sh\nsleep 1000\n```\n", "does not tell the reader"),
    ("```sh\necho 5 matches\n```\n<!-- journey: expect \"5 matches\" -->\n", "not in the page's text"),
    ("<!-- journey: frobnicate -->\n```sh\ntrue\n```\n", "unknown journey marker"),
])
def test_a_page_that_cannot_be_read_as_a_journey_is_refused(page, problem):
    journeys = _journeys()
    with pytest.raises(journeys.PageError, match=problem):
        journeys.plan(journeys.read_page("page.md", page))


def test_a_skipped_block_the_page_announces_is_not_run():
    journeys = _journeys()
    page = journeys.read_page("page.md", "<!-- journey: skip too long -->\n```sh\nsleep 1000\n```\n\n"
                                         "CI does not run this: it takes an hour.\n")
    planned = journeys.plan(page)
    assert planned.steps == [] and "too long" in planned.skipped[0]


def test_figures_are_compared_at_the_pages_precision():
    journeys = _journeys()
    found = journeys.figure_found
    assert found("+120.8", "│ napbot-jq │ 120 │ +145 │ +120.83 │")
    assert not found("+120.9", "│ napbot-jq │ 120 │ +145 │ +120.83 │")  # the control: another figure fails
    assert found("[+12.4, +229.3]", "[+12.4, +229.3]") and not found("[+12.5, +229.3]", "[+12.4, +229.3]")
    assert found("57,600 hands", "quickstart: 384 matches, 57600 hands") and not found("57,600 hands", "5760 hands")
    assert found("\u2212396.7", "-396.67") and not found("\u2212396.7", "+396.67")
    assert found("p = 1.5e-87", "p = 1.5e-87") and not found("p = 1.5e-87", "p = 1.5e-86")
    quoted = "│ heuristic │  1200 │\n│ random    │  1200 │\n"
    assert journeys.output_found(quoted, "header\n│ heuristic │ 1200 │\n│ random │ 1200 │\nfooter")
    assert not journeys.output_found(quoted, "│ heuristic │ 1200 │\n│ random │ 1201 │")


def test_a_journey_runs_in_one_shell_and_fails_on_a_wrong_figure_or_a_failed_command(tmp_path):
    """The runner itself, on small pages: blocks share a shell (a `cd` carries over), files
    are saved where the shell is, a figure is compared, and each kind of failure is caught."""
    import threading
    journeys = _journeys()
    good = ("<!-- journey: file sub/n.txt -->\n```\n```\n"  # a plain block may be saved too
            "<!-- journey: file sub/count.txt -->\n```text\n57600\n```\n\n"
            "```sh\ncd sub\n```\n\n```sh\necho \"$(cat count.txt) hands\"\n```\n"
            "<!-- journey: expect \"57,600 hands\" -->\n\nIt prints 57,600 hands.\n")
    wrong_figure = good.replace("It prints 57,600", "It prints 57,600 hands; the page said 57,601").replace(
        'expect "57,600 hands"', 'expect "57,601"')
    failing = "```sh\ntrue\nfalse\necho never\n```\n"
    outcome = {}
    for name, text in (("good", good), ("wrong", wrong_figure), ("failing", failing)):
        page = journeys.read_page(f"{name}.md", text)
        journey = journeys.Journey(page, page, "own", steps=journeys.plan(page).steps)
        journeys.run(journey, tmp_path / name, threading.Lock(), {})
        outcome[name] = journey.failed
    assert outcome["good"] is None
    assert "is not what it printed" in outcome["wrong"]
    assert "exit status 1" in outcome["failing"]


def test_pages_of_one_recipe_share_its_venv_and_a_page_not_run_is_left_out(tmp_path, capsys):
    """The scheduler: a page without an install waits for the README's venv and finds it
    linked in, activated by the README's new-shell block; a page that says it is not run
    is not started."""
    journeys = _journeys()
    root = journeys.read_page("README.md", (
        "<!-- journey: install -->\n```sh\nmkdir -p .venv/bin && printf '#!/bin/sh\\necho from the venv\\n'"
        " > .venv/bin/tool && chmod +x .venv/bin/tool\n```\n\n"
        "<!-- journey: new-shell -->\n```sh\nexport PATH=\"$PWD/.venv/bin:$PATH\"\n```\n"))
    follower = journeys.read_page("follower.md", "```sh\ntool\n```\n<!-- journey: expect \"from the venv\" -->\n\n"
                                                 "It says from the venv.\n")
    idle = journeys.read_page("idle.md", "<!-- journey: skip-page nothing here -->\nCI does not run this page.\n"
                                         "```sh\nfalse\n```\n")
    plans = journeys.journeys([root, follower, idle])
    assert [j.mode for j in plans] == ["own", "shared", "not run"]
    journeys.run_all(plans, tmp_path, jobs=2)
    assert [j.failed for j in plans] == [None, None, None], [j.failed for j in plans]
    assert plans[1].ran == 2 and plans[1].figures == 1  # the README's new shell, then its own block
    assert (tmp_path / "follower.md" / "naparena" / ".venv").is_symlink()
    assert not (tmp_path / "idle.md").exists()


def test_a_served_block_runs_until_its_address_answers_and_is_stopped(tmp_path):
    import socket
    import threading
    journeys = _journeys()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    page = journeys.read_page("serve.md", f"<!-- journey: serve http://127.0.0.1:{port}/ -->\n```sh\n"
                                          f"python3 -m http.server {port} --bind 127.0.0.1\n```\n")
    journey = journeys.Journey(page, page, "own", steps=journeys.plan(page).steps)
    journeys.run(journey, tmp_path, threading.Lock(), {})
    assert journey.failed is None and journey.ran == 1
    with socket.socket() as s:  # the server is gone with its step
        assert s.connect_ex(("127.0.0.1", port)) != 0
    dead = journeys.read_page("dead.md", "<!-- journey: serve http://127.0.0.1:9/ -->\n```sh\nexit 3\n```\n")
    journey = journeys.Journey(dead, dead, "own", steps=journeys.plan(dead).steps)
    journeys.run(journey, tmp_path / "dead", threading.Lock(), {})
    assert "never answered" in journey.failed  # a server that dies first fails its step
