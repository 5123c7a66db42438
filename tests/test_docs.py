"""The docs that are generated from code must be current, and must describe what bots
really receive."""

import random
from pathlib import Path

from naparena import Bot, hookimpl
from naparena.game.rules import VARIANTS, make_rules
from naparena.game.view import _Fields
from naparena.tools import docs
from naparena.tools.docs import bots_markdown, readme_block, variants_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_variants_doc_is_generated_from_the_code():
    assert (ROOT / "docs" / "VARIANTS.md").read_text() == variants_markdown()


def test_bots_doc_and_the_readme_tables_are_generated_from_the_code():
    assert (ROOT / "docs" / "BOTS.md").read_text() == bots_markdown()
    assert readme_block() in (ROOT / "README.md").read_text()


def test_every_named_variant_is_documented_with_every_option():
    text = variants_markdown()
    for name, variant in VARIANTS.items():
        section = text.split(f"## `{name}`")[1].split("\n## ")[0]
        for option in variant.options:
            assert f"| `{option}` |" in section, (name, option)


def test_readme_names_every_variant_and_command():
    readme = (ROOT / "README.md").read_text()
    for name in VARIANTS:
        assert f"`{name}`" in readme, name
    for command in ("run", "resume", "report", "compare", "replay", "verify", "variants", "bots", "check", "init",
                    "bench", "play", "view"):
        assert f"naparena {command}" in readme, command


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
def test_every_bid_of_every_variant_is_in_the_readme_with_its_tricks():
    readme = (ROOT / "README.md").read_text()
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
    for field in (*_Fields._fields, "led", "pack"):
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
    from naparena.arena.match.play import Job, play_job
    from naparena.bots.plugins import load_registry
    registry = load_registry(None, extra_plugins=[ListenerPlugin()])
    Listener.heard = []
    seats = [{"alias": f"l{i}", "name": "listener", "params": {}, "seed": i} for i in range(4)]
    for variant in ("classic", "floater", "purchase", "sir-garnet", "peep"):
        job = Job(index=0, seed=random.Random(variant).randrange(1 << 30), variant=variant,
                  rules=make_rules(variant).as_dict(), seats=seats, hands=20)
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
