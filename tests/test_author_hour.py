"""A bot author's hour (issue 25, items 1-11 and the time-out warning): each gap met by
an author writing a bot in another language, tested where it was met: the command line
in a child process, real seat processes, real files."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from naparena.arena.match.preflight import FLUSH_HINT
from naparena.bots.protocol import MAX_SAFE_INT
from naparena.game.cards import pack
from naparena.game.engine import DECISION_KINDS
from naparena.report.tables import BOT_LEGEND
from naparena.tools import docs
from tests.helpers import REPO, naparena, schema

HERE = Path(__file__).resolve().parent
TAP, PLAIN = HERE / "seat_programs" / "tap.py", HERE / "seat_programs" / "plain.py"
PROTOCOL_MD = (REPO / "docs" / "PROTOCOL.md").read_text()
README = (REPO / "README.md").read_text()
BOT_INTERFACE = (REPO / "docs" / "reference" / "bot-interface.md").read_text()

pytestmark = pytest.mark.slow


def protocol_schema(name: str) -> dict:
    return json.loads((REPO / "naparena" / "schemas" / "protocol" / f"{name}.json").read_text())


def plain(*options: str) -> list[str]:
    return [sys.executable, str(PLAIN), *options]


def tournament(folder: Path, bots: list[dict], *, variants=("classic",), hands: int = 2, table: int = 3,
               seats: str = "", timeout: float = 20.0) -> Path:
    """A tournament file: `bots` as TOML inline tables, each a dict of strings and lists."""
    lines = [f'[tournament]\nname = "t"\nseed = 3\nseeds = 1\nhands = {hands}\ntable = {table}\n'
             f'duplicate = false\nworkers = 1\ntimeout = {timeout}\nlog_dir = "logs"\n']
    for bot in bots:
        lines.append("[[bots]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in bot.items()
                                             if k != "params"))
        if "params" in bot:
            lines.append("params = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in bot["params"].items())
                         + " }\n")
    lines += [f'[[variants]]\nname = "{v}"\n' for v in variants]
    if seats:
        lines.append(f"[seats]\n{seats}\n")
    path = folder / "t.toml"
    path.write_text("".join(lines))
    return path


def integers(value):
    """Every int in a JSON value, at any depth (bools are not ints on the wire)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from integers(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from integers(v)


# --- 1, 4, 11: what goes over the wire ------------------------------------------------------

INFO_BOT = '''
import json
from naparena import Bot, hookimpl

class InfoBot(Bot):
    """Writes the keys of the start_match info it is given to the file `record` names."""
    name = "info"
    params = {"record": ""}

    def bid(self, view):
        return view.legal[0]

    def play(self, view):
        return view.legal[0]

    def start_match(self, info):
        with open(self.record, "a") as f:
            f.write(json.dumps(sorted(info)) + "\\n")


@hookimpl
def register_bots(register):
    register(InfoBot)
'''


def test_a_real_match_sends_pack_led_safe_integers_and_the_documented_info(tmp_path):
    """A tapped external bot and an isolated Python bot play three variants through
    `naparena run`: every integer of every message is within ±(2^53 − 1), every decide
    carries the view's `pack` and `led`, the match message's `seed` is the low 53 bits of
    `seed_text`, and the isolated bot's `start_match(info)` has the documented keys."""
    record, keys = tmp_path / "traffic.jsonl", tmp_path / "info.jsonl"
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "info_bot.py").write_text(INFO_BOT)
    path = tournament(tmp_path, [
        {"name": "plain", "command": [sys.executable, str(TAP), str(record), "--", *plain()]},
        {"name": "info", "isolation": "process", "params": {"record": str(keys)}},
        {"name": "random"}], variants=("classic", "floater", "purchase"),
        seats='sandbox = "off"')  # the tap writes its record outside any seat's own folder
    path.write_text(path.read_text().replace('log_dir = "logs"', 'log_dir = "logs"\nbots_dir = "bots"'))
    result = naparena("run", path, cwd=tmp_path)
    assert result.returncode == 0, result.stderr

    messages = [json.loads(json.loads(line)["line"]) for line in record.read_text().splitlines()]
    assert messages and all(abs(n) <= MAX_SAFE_INT for m in messages for n in integers(m))
    matches = [m for m in messages if m["type"] == "match"]
    assert matches and all(m["seed"] == int(m["seed_text"]) & MAX_SAFE_INT for m in matches)
    assert any(int(m["seed_text"]) > MAX_SAFE_INT for m in matches), "a 64-bit seed was sent"
    decides = [m["view"] for m in messages if m["type"] == "decide"]
    assert {v["kind"] for v in decides} >= {"bid", "play"}
    for v in decides:
        assert v["led"] == (v["trick"][0][1] // 13 if v["trick"] else None)
        assert v["pack"] == sorted(v["pack"]) and set(v["hand"]) <= set(v["pack"])
        assert len(v["pack"]) in (20, 24, 28, 32, 36, 40, 52) and tuple(v["pack"]) == pack(len(v["pack"]))

    told = {tuple(json.loads(line)) for line in keys.read_text().splitlines()}
    documented = tuple(sorted(docs.MATCH_INFO))
    assert told == {documented}
    listed = re.search(r"`start_match\(info\)` \(a dict: (.*?)\)", " ".join(BOT_INTERFACE.split()))
    assert listed is not None
    assert sorted(re.findall(r"`(\w+)`", listed.group(1))) == list(documented)


def test_the_schemas_say_integers_stay_within_two_to_the_53():
    match = protocol_schema("match")
    assert match["properties"]["seed"]["maximum"] == MAX_SAFE_INT
    assert "2^53" in match["description"] and "2^53" in PROTOCOL_MD
    view = protocol_schema("decide")["$defs"]["view"]
    assert {"pack", "led"} <= set(view["required"])


# --- 2: the decision kinds --------------------------------------------------------------------

def kinds_table() -> dict[str, list[str]]:
    start = PROTOCOL_MD.index("<!-- decision kinds")
    lines = PROTOCOL_MD[start:].splitlines()[3:]
    end = next((i for i, line in enumerate(lines) if line.strip() and not line.startswith("|")), len(lines))
    rows = [line for line in lines[:end] if line.startswith("| `")]  # this table's rows alone
    return {row.split("|")[1].strip(" `"): [c.strip() for c in row.split("|")[2:-1]] for row in rows}


def test_protocol_md_lists_every_decision_kind_with_an_answer_and_a_legal_example():
    table = kinds_table()
    assert list(table) == list(DECISION_KINDS)
    for kind, (when, how, example) in table.items():
        assert when and how, kind
        legal, answer = (json.loads(part.strip(" `").replace(", …", "")) for part in example.split("→"))
        assert answer in legal, f"{kind}: the example's answer is not among its legal answers"


# --- 3: one params rule ---------------------------------------------------------------------------

@pytest.mark.parametrize("hello", ["--no-params", "--empty-params"])
def test_a_hello_without_params_and_with_empty_params_are_refused_alike(tmp_path, hello):
    given = tournament(tmp_path, [{"name": "plain", "command": plain(hello), "params": {"depth": 2}},
                                  {"name": "random"}])
    refused = naparena("run", given, cwd=tmp_path)
    assert refused.returncode == 2
    assert "bots[1].params" in refused.stderr and "does not accept parameter 'depth'; it accepts: none" \
        in " ".join(refused.stderr.split())
    assert not (tmp_path / "logs").exists()
    fine = tournament(tmp_path, [{"name": "plain", "command": plain(hello)}, {"name": "random"}])
    assert naparena("run", fine, cwd=tmp_path).returncode == 0


# --- 5: exchanges in any order ------------------------------------------------------------------

def test_an_exchange_answered_in_any_order_is_accepted_as_documented(tmp_path):
    assert "an answer may list them in any order" in PROTOCOL_MD
    result = naparena("check", "--command", " ".join(plain("--reverse")), "--hands", 4, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    first_table = result.stdout.split("decisions asked, by kind")[0]  # not the coverage table after it
    rows = {cells[1].strip(): cells for cells in (line.split("│") for line in first_table.splitlines())
            if len(cells) > 5}
    assert rows["purchase"][5].strip() == "none" and rows["ecarte"][5].strip() == "none", "variants with exchanges"


# --- 6: links and the standings footnote -----------------------------------------------------------

def test_every_readme_section_the_docs_name_exists():
    headings = {h.strip() for h in re.findall(r"^#+ (.*)$", README, re.M)}
    for doc in [README, PROTOCOL_MD, *(p.read_text() for p in (REPO / "docs").rglob("*.md"))]:
        for named in re.findall(r"""README's "([^"]+)\"""", " ".join(doc.split())):
            assert named in headings, f'no README section "{named}"'


def test_the_standings_footnote_names_every_fault_kind_that_counts():
    kinds = schema("match")["$defs"]["fault_counts"]["propertyNames"]["enum"]
    words = {"illegal": "illegal answers", "exception": "exceptions", "time-out": "time-outs",
             "crash": "crashes", "hang": "hangs", "protocol": "protocol faults"}
    assert set(kinds) == set(words)
    assert all(words[k] in BOT_LEGEND for k in kinds)


# --- 7, 8, 9: check and run with a bot that will not start ----------------------------------------

def test_check_takes_a_command_without_a_bot_name(tmp_path):
    result = naparena("check", "--command", " ".join(plain()), "--hands", 1, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "naparena check plain.py" in result.stdout
    assert "plain.py: every decision legal" in " ".join(result.stdout.split())
    nothing = naparena("check", cwd=tmp_path)
    assert nothing.returncode == 2 and "name a bot to check (BOT), or give an external bot's --command" in \
        nothing.stderr


def test_a_bot_that_dies_at_start_shows_its_stderr_in_check_and_run(tmp_path):
    checked = naparena("check", "--command", " ".join(plain("--die-at-start")), "--hands", 1, cwd=tmp_path)
    assert checked.returncode == 1
    text = checked.stdout + checked.stderr
    assert "plain.py failed its handshake: seat process exited with code 1" in text
    assert "the bot's stderr ended with:" in text and "SyntaxError: deliberate, at start" in text
    path = tournament(tmp_path, [{"name": "plain", "command": plain("--die-at-start")}, {"name": "random"}])
    ran = naparena("run", path, cwd=tmp_path)
    assert ran.returncode == 2
    assert "bots[1].command" in ran.stderr and "SyntaxError: deliberate, at start" in ran.stderr


def test_a_crash_in_play_shows_the_bots_stderr_in_check(tmp_path):
    result = naparena("check", "--command", " ".join(plain("--die-at", "2")), "--hands", 2, cwd=tmp_path)
    assert result.returncode == 1
    first = [line for line in result.stdout.splitlines() if line.startswith("first error in classic")]
    assert len(first) == 1 and "crash: seat process exited with code 1" in first[0]
    variants = [line for line in result.stdout.splitlines() if line.startswith("first error in")]
    assert result.stdout.count("ValueError: deliberate") == len(variants) > 1, "every crash with its stderr"


def test_check_stops_after_the_first_failed_handshake_and_hints_at_flushing(tmp_path):
    """A bot that never says hello is started once, not once per variant and table size."""
    count = tmp_path / "started"
    path = tournament(tmp_path, [{"name": "plain", "command": plain("--silent", "--count", str(count))}],
                      seats='start_timeout = 0.5\nsandbox = "off"')  # it counts its starts in tmp_path
    result = naparena("check", "plain", "--tournament", path, "--hands", 1, cwd=tmp_path)
    assert result.returncode == 1
    assert count.read_text().splitlines() == ["started"], "one handshake attempted"
    text = result.stdout + result.stderr
    assert text.count("failed its handshake") == 1
    assert "no hello within 0.5 s" in text and FLUSH_HINT in " ".join(text.split())


# --- 10: each error once, named faults, cards by name -----------------------------------------------

WRONG_CARD = '''
from naparena import Bot, hookimpl

class WrongCard(Bot):
    """Plays a card that is never legal: the first of the pack not among the legal ones."""
    name = "wrongcard"

    def bid(self, view):
        return view.legal[-1]  # the highest bid: it will play

    def play(self, view):
        return next(c for c in range(52) if c not in view.legal)


@hookimpl
def register_bots(register):
    register(WrongCard)
'''


def test_check_prints_each_error_once_naming_its_cards(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "wrong_card.py").write_text(WRONG_CARD)
    result = naparena("check", "wrongcard", "--hands", 1, cwd=tmp_path)
    assert result.returncode == 1
    text = result.stdout + result.stderr
    classic = re.findall(r"^.*classic.*illegal answer.*$", text, re.M)
    assert len(classic) == 1, text
    card = r"(?:10|[2-9JQKA])[CDHS]=\d+"
    assert re.search(rf"illegal answer {card}: play wants a card \(int\), one of \({card}", classic[0])


@pytest.mark.parametrize("mode, said", [("stdout", "broke the protocol (stray stdout?)"), ("slow", "timed out")])
def test_run_names_a_time_out_and_stray_stdout_for_what_they_are(tmp_path, mode, said):
    rogue = [sys.executable, str(HERE / "seat_programs" / "rogue.py")]
    path = tournament(tmp_path, [{"name": "rogue", "command": rogue,
                                  "params": {"mode": mode, "every": 2, "sleep": 3.0}}, {"name": "random"}],
                      timeout=0.5)
    result = naparena("run", path, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    died = [line for line in result.stderr.splitlines() if "the stand-in plays it" in line]
    assert died and all(said in line and "crashed" not in line for line in died)


# --- 18 (part): the time-out warning ------------------------------------------------------------------

SLOW_ONCE = '''
import time
from naparena import Bot, hookimpl

SLEPT = []

class SlowOnce(Bot):
    """Takes 1.1 s over its first decision in this process, then answers at once."""
    name = "slowonce"

    def bid(self, view):
        if not SLEPT:
            SLEPT.append(time.sleep(1.1))
        return "pass"

    def play(self, view):
        return view.legal[0]


@hookimpl
def register_bots(register):
    register(SlowOnce)
'''


def test_check_warns_when_a_decision_comes_within_half_the_time_out(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "slow_once.py").write_text(SLOW_ONCE)
    result = naparena("check", "slowonce", "--hands", 1, "--timeout", 2, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "slowonce in classic" in warnings[0]
    assert "against a 2 s time-out" in warnings[0]
    calm = naparena("check", "random", "--hands", 1, "--timeout", 60, cwd=tmp_path)
    assert calm.returncode == 0 and "warning:" not in calm.stderr
