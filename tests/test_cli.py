"""The command line: every command's exit code and the output a person relies on."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from naparena.arena.records.logs import FORMAT
from naparena.bots import plugins
from naparena.game.rules import VARIANTS
from tests.drop_ins import GOOD_DROP_IN
from tests.helpers import REPO, flat, invoke, run_dir_in, write_tournament

REFERENCE_BOTS = ("random", "heuristic", "cautious", "bold")
BUILT_IN = "built-in module 'naparena.bots.builtin'"

COMMANDS = ("run", "resume", "report", "replay", "verify", "variants", "bots", "check", "init", "bench", "play",
            "view")


def assert_clean_error(result, code: int, *phrases: str) -> None:
    """Exit `code`, one message on stderr containing every phrase, no traceback."""
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    message = flat(result.stderr)
    assert message.startswith("error:"), message
    for phrase in phrases:
        assert phrase in message, (phrase, message)


def table_rows(output: str) -> list[list[str]]:
    """The body rows of the rich tables in `output`, wrapped cells joined back up."""
    rows: list[list[str]] = []
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if rows and not cells[0] and len(cells) == len(rows[-1]):
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells)]
        else:
            rows.append(cells)
    return rows


def reference_bots_available() -> bool:
    return set(REFERENCE_BOTS) <= set(plugins.load_registry(None).bots)


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A tournament `t.toml` in a fresh current directory."""
    monkeypatch.chdir(tmp_path)
    write_tournament(tmp_path)
    return tmp_path


def files_of(run_dir: Path) -> dict[str, bytes]:
    """The manifest, standings and match logs of a run directory, by relative path."""
    return {p.relative_to(run_dir).as_posix(): p.read_bytes() for p in sorted(run_dir.rglob("*.json"))}


@pytest.fixture
def finished(here):
    """A finished run of `t.toml`: (run dir, its --json standings)."""
    result = invoke("run", "t.toml", "--workers", 1, "--log-dir", "logs", "--json")
    assert result.exit_code == 0, result.output
    return run_dir_in(here / "logs"), result.stdout


# --- the app ----------------------------------------------------------------------------

def test_python_m_naparena_help_lists_every_command():
    done = subprocess.run([sys.executable, "-m", "naparena", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    for command in COMMANDS:
        assert command in done.stdout


def test_no_arguments_shows_help_not_a_traceback():
    result = invoke()
    assert "Traceback" not in result.output
    assert "run" in result.output and "verify" in result.output


# --- run ----------------------------------------------------------------------------

def test_run_prints_the_standings_and_where_the_logs_are(here):
    result = invoke("run", "t.toml", "--workers", 1, "--log-dir", "logs")
    assert result.exit_code == 0, result.output
    assert "classic: chips per 100 hands" in result.stdout
    assert "head to head" in result.stdout
    bots = {row[0] for row in table_rows(result.stdout)}
    assert {"random", "example"} <= bots
    run_dir = run_dir_in(here / "logs")
    assert f"logs in {run_dir.relative_to(here)}" in flat(result.stderr)
    # seeds x the 6 distinct seatings of (random, example, random, example)
    assert len(list((run_dir / "matches").glob("*.json"))) == 4 * 6


def test_run_json_is_the_standings_file(finished):
    run_dir, out = finished
    standings = json.loads(out)
    assert standings == json.loads((run_dir / "standings.json").read_bytes())
    assert standings["matches"] == 24
    assert {row["bot"] for row in standings["variants"]["classic"]["bots"]} == {"random", "example"}


BAD_FILES = [
    # (id, file text, phrases the message must contain)
    ("missing name", '[tournament]\nhands = 5\n[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n',
     ["tournament.name", "missing"]),
    ("misspelt key", '[tournament]\nname = "x"\nhand = 5\n[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n',
     ["tournament.hand", "did you mean 'hands'"]),
    ("hands zero", '[tournament]\nname = "x"\nhands = 0\n[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n',
     ["tournament.hands", "from 1 to 1000000"]),
    ("hands as text", '[tournament]\nname = "x"\nhands = "ten"\n[[bots]]\nname = "random"\n'
                      '[[variants]]\nname = "classic"\n',
     ["tournament.hands", "whole number"]),
    ("unknown bot", '[tournament]\nname = "x"\n[[bots]]\nname = "randmo"\n[[variants]]\nname = "classic"\n',
     ["bots[1].name", "unknown bot 'randmo'", "did you mean 'random'"]),
    ("unknown bot param", '[tournament]\nname = "x"\n[[bots]]\nname = "random"\nparams = { depth = 3 }\n'
                          '[[variants]]\nname = "classic"\n',
     ["bots[1].params.depth", "unknown parameter"]),
    ("unknown variant", '[tournament]\nname = "x"\n[[bots]]\nname = "random"\n[[variants]]\nname = "clasic"\n',
     ["variants[1].name", "unknown variant 'clasic'"]),
    ("bad rules override", '[tournament]\nname = "x"\n[[bots]]\nname = "random"\n'
                           '[[variants]]\nname = "mine"\nbase = "classic"\ndeal = "4-1"\n',
     ["variants[1].deal", "'4-1' is not allowed"]),
    ("bots as a table", '[tournament]\nname = "x"\n[bots]\nname = "random"\n[[variants]]\nname = "classic"\n',
     ["bots", "array of tables"]),
    ("sprt names a stranger", '[tournament]\nname = "x"\n[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n'
                              '[sprt]\na = "random"\nb = "nobody"\ndelta = 10.0\n',
     ["sprt.b", "'nobody' is not a bot of this tournament"]),
    ("toml syntax", '[tournament]\nname = "x\n', ["TOML syntax error at line 2"]),
]


@pytest.mark.parametrize("args", [["check", "heuristc"], ["variants", "classc"]], ids=lambda a: a[0])
def test_a_misspelt_name_gets_the_hint_run_gives(tmp_path, monkeypatch, args):
    """`check` and `variants` say "did you mean", as `run` does for a file's bot (and `serve`
    in its protocol error: the registry gives the hint)."""
    monkeypatch.chdir(tmp_path)
    result = invoke(*args)
    right = "heuristic" if args[1] == "heuristc" else "classic"
    assert_clean_error(result, 2, f"unknown {'variant' if right == 'classic' else 'bot'} '{args[1]}' "
                       f"(did you mean '{right}'?)")
    # Control: a name like no other gets no guess.
    assert "did you mean" not in flat(invoke(args[0], "zzzzqqqq").stderr)


@pytest.mark.parametrize("text, phrases", [(t, p) for _, t, p in BAD_FILES], ids=[i for i, _, _ in BAD_FILES])
def test_run_a_bad_file_exits_2_naming_the_file_and_key(tmp_path, monkeypatch, text, phrases):
    monkeypatch.chdir(tmp_path)
    Path("bad.toml").write_text(text)
    result = invoke("run", "bad.toml", "--log-dir", "logs")
    assert_clean_error(result, 2, "bad.toml:", *phrases)
    assert not Path("logs").exists(), "nothing may be written for a bad file"


def test_run_a_missing_file_or_bots_folder_exits_2(here):
    assert_clean_error(invoke("run", "nowhere.toml"), 2, "nowhere.toml", "no such tournament file")
    assert_clean_error(invoke("run", "t.toml", "--bots-dir", "no-such-folder"), 2,
                       "--bots-dir", "bot folder no-such-folder does not exist")


# --- resume and report ------------------------------------------------------------------

def test_resume_plays_only_the_missing_matches_and_ends_as_an_uninterrupted_run(finished):
    run_dir, out = finished
    expected = files_of(run_dir)
    for f in sorted((run_dir / "matches").glob("*.json"))[3:]:
        f.unlink()
    (run_dir / "standings.json").unlink()
    result = invoke("resume", run_dir, "--workers", 1, "--json")
    assert result.exit_code == 0, result.output
    assert "3 matches already done" in flat(result.stderr)
    assert result.stdout == out
    assert files_of(run_dir) == expected


def test_run_resume_continues_the_newest_run_of_the_file(finished, here):
    run_dir, out = finished
    for f in sorted((run_dir / "matches").glob("*.json"))[5:]:
        f.unlink()
    result = invoke("run", "t.toml", "--resume", "--workers", 1, "--log-dir", "logs", "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout == out
    assert [run_dir] == list((here / "logs").iterdir())


def test_resume_refuses_a_changed_file_and_a_folder_that_is_no_run(finished, here):
    run_dir, _ = finished
    assert_clean_error(invoke("resume", here), 2, "not a run directory")
    write_tournament(here, hands=11)
    assert_clean_error(invoke("resume", run_dir), 2, "has changed since")
    assert_clean_error(invoke("run", "t.toml", "--resume", "--log-dir", "logs"), 2, "no earlier run")


def test_a_run_or_log_of_another_format_is_refused_not_misread(finished, tmp_path):
    run_dir = shutil.copytree(finished[0], tmp_path / "old")
    log = run_dir / "matches" / "000000.json"
    data = json.loads(log.read_bytes())
    data["format"] = 1
    log.write_text(json.dumps(data))
    assert_clean_error(invoke("replay", log), 2, "written in log format 1 by an older naparena",
                       f"this one reads format {FORMAT} only")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["format"] = 1
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    (run_dir / "matches" / "000007.json").unlink()
    assert_clean_error(invoke("resume", run_dir), 2, "log format 1", "resume it with the version that started it")


def test_resume_works_from_another_directory(finished, monkeypatch, tmp_path_factory):
    run_dir, out = finished
    for f in sorted((run_dir / "matches").glob("*.json"))[3:]:
        f.unlink()
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    result = invoke("resume", run_dir.resolve(), "--workers", 1, "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout == out


def test_resume_finds_the_bots_of_a_run_started_with_bots_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_tournament(tmp_path)
    shutil.move("bots", "mybots")
    started = invoke("run", "t.toml", "--bots-dir", "mybots", "--workers", 1, "--log-dir", "logs", "--json")
    assert started.exit_code == 0, started.output
    run_dir = run_dir_in(tmp_path / "logs")
    for f in sorted((run_dir / "matches").glob("*.json"))[3:]:
        f.unlink()
    result = invoke("resume", run_dir, "--workers", 1, "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout == started.stdout


def test_report_rebuilds_the_standings_from_the_logs(finished):
    run_dir, out = finished
    result = invoke("report", run_dir, "--json")
    assert result.exit_code == 0, result.output
    assert result.stdout == out
    assert "unfinished" not in result.stderr
    table = invoke("report", run_dir)
    assert table.exit_code == 0
    assert "classic: chips per 100 hands" in table.stdout


def test_report_of_an_unfinished_run_warns_and_of_no_run_fails(finished, here):
    run_dir, _ = finished
    # An unfinished run: its last match and the standings, written only at the end, are not there.
    sorted((run_dir / "matches").glob("*.json"))[-1].unlink()
    (run_dir / "standings.json").unlink()
    result = invoke("report", run_dir, "--json")
    assert result.exit_code == 0
    assert "unfinished" in result.stderr
    assert json.loads(result.stdout)["matches"] == 23
    assert_clean_error(invoke("report", here / "nothing"), 2, "not a run directory")


def test_compare_sets_two_runs_side_by_side(finished, here):
    run_dir, _ = finished
    result = invoke("compare", run_dir, run_dir, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["variants"]["classic"]["bots"]
    assert {r["bot"] for r in rows} == {"random", "example"}
    assert all(r["diff"] == 0 for r in rows)
    assert invoke("compare", run_dir, here / "nothing").exit_code != 0


# --- replay and verify ----------------------------------------------------------------

def test_replay_shows_every_hand_trick_by_trick(finished):
    run_dir, _ = finished
    result = invoke("replay", run_dir / "matches" / "000000.json")
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    for n in range(10):
        assert f"hand {n} · classic" in text
    assert "trick 1:" in text and "result:" in text and "bids:" in text


def test_replay_one_hand(finished):
    run_dir, _ = finished
    result = invoke("replay", run_dir / "matches" / "000001.json", "--hand", 3)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert "match 1 · hand 3 ·" in text
    assert "· hand 2 ·" not in text and "· hand 4 ·" not in text


def test_replay_a_hand_out_of_range_or_a_missing_log_is_a_clean_error(finished):
    run_dir, _ = finished
    result = invoke("replay", run_dir / "matches" / "000000.json", "--hand", 10)
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert "has hands 0–9; there is no hand 10" in flat(result.stderr)
    assert invoke("replay", run_dir / "matches" / "000000.json", "--hand", -1).exit_code == 2
    missing = invoke("replay", run_dir / "matches" / "999999.json")
    assert missing.exit_code != 0 and "no such match log" in flat(missing.stderr)


def test_replay_a_hand_out_of_range_exits_2(finished):
    run_dir, _ = finished
    assert invoke("replay", run_dir / "matches" / "000000.json", "--hand", 10).exit_code == 2


def test_verify_passes_an_untouched_run_and_fails_a_broken_log(finished):
    run_dir, _ = finished
    ok = invoke("verify", run_dir)
    assert ok.exit_code == 0, ok.output
    assert "verify ok: 24 matches, 240 hands replayed, 0 problems" in flat(ok.stdout)

    log = run_dir / "matches" / "000002.json"
    data = json.loads(log.read_bytes())
    data["hands"][4]["chips"][0] += 5
    log.write_text(json.dumps(data))
    (run_dir / "matches" / "000005.json").write_text('{"format": 1, "match"')  # cut short
    bad = invoke("verify", run_dir)
    assert bad.exit_code == 1
    problems = flat(bad.stderr)
    assert "000002.json: hand 4: differs in chips" in problems
    assert "000005.json" in problems and "not valid JSON" in problems
    assert "verify FAILED" in bad.stdout


def test_verify_counts_matches_not_played_yet(finished):
    run_dir, _ = finished
    # An unfinished run: its last match and the standings, written only at the end, are not there.
    sorted((run_dir / "matches").glob("*.json"))[-1].unlink()
    (run_dir / "standings.json").unlink()
    result = invoke("verify", run_dir)
    assert result.exit_code == 0
    assert "1 matches not played yet" in flat(result.stdout)


# --- variants, bots, check ----------------------------------------------------------------

def test_variants_lists_every_named_variant():
    result = invoke("variants")
    assert result.exit_code == 0
    rows = {row[0]: row[1] for row in table_rows(result.stdout)}
    assert list(rows) == list(VARIANTS)
    for name, v in VARIANTS.items():
        assert rows[name] == v.description


def shown(value) -> str:
    if isinstance(value, tuple):
        return ", ".join(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variants_name_lists_every_option_with_its_value_and_source(name):
    result = invoke("variants", name)
    assert result.exit_code == 0, result.output
    rows = {row[0]: row[1:] for row in table_rows(result.stdout)}
    v = VARIANTS[name]
    assert list(rows) == list(v.options)
    for option, value in v.options.items():
        cell, source = rows[option]
        assert cell.strip("'") == shown(value), option
        assert source == flat(v.sources[option]), option


def test_variants_unknown_name_is_a_clean_error_listing_the_known_ones():
    result = invoke("variants", "nosuch")
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    message = flat(result.stderr)
    assert "unknown variant 'nosuch'" in message
    assert all(name in message for name in VARIANTS)


def test_variants_unknown_name_exits_2():
    assert invoke("variants", "nosuch").exit_code == 2


def test_bots_lists_the_reference_bots_and_the_drop_in_example_with_sources(monkeypatch):
    monkeypatch.chdir(REPO)  # the default drop-in folder is ./bots
    result = invoke("bots")
    assert result.exit_code == 0, result.output
    rows = {row[0]: row[1:] for row in table_rows(result.stdout)}
    assert rows["random"][0] == BUILT_IN
    if reference_bots_available():
        for name in REFERENCE_BOTS:
            assert rows[name][0] == BUILT_IN, name
    assert rows["example"][0] == "drop-in file bots/example_bot.py"
    assert "failed" not in result.stdout


def test_bots_lists_a_broken_drop_in_and_still_the_good_ones(bots_dir):
    folder = bots_dir(good=GOOD_DROP_IN, broken="raise RuntimeError('unfinished bot')\n")
    result = invoke("bots", "--bots-dir", folder)
    assert result.exit_code == 1, result.output  # a plug-in failed: a script must notice
    names = {row[0] for row in table_rows(result.stdout)}
    assert {"random", "good", "clumsy"} <= names
    text = flat(result.stderr)
    assert "plug-in failed broken (drop-in file" in text
    assert "RuntimeError: unfinished bot" in text
    assert "Traceback" not in text
    verbose = invoke("bots", "--bots-dir", folder, "-v")
    assert "Traceback" in verbose.stderr and "raise RuntimeError('unfinished bot')" in verbose.stderr


def test_bots_with_a_missing_folder_exits_2(tmp_path):
    assert_clean_error(invoke("bots", "--bots-dir", tmp_path / "nowhere"), 2, "does not exist")


def test_check_passes_random_in_every_variant():
    result = invoke("check", "random", "--hands", 3)
    assert result.exit_code == 0, result.output
    assert f"random: every decision legal in {len(VARIANTS)} variants" in flat(result.stdout)
    rows = {row[0]: row for row in table_rows(result.stdout.split("decisions asked, by kind")[0])}
    assert list(rows) == list(VARIANTS)
    # every table size from 2 to 7 seats a variant can deal (floater needs three), 3 hands each
    assert rows["classic"][1:3] == ["2–7", "18"]
    assert rows["floater"][1:3] == ["3–7", "15"]


def test_check_fails_a_bot_that_raises_and_names_an_unknown_one(bots_dir):
    result = invoke("check", "clumsy", "--bots-dir", bots_dir(good=GOOD_DROP_IN), "--hands", 5)
    assert result.exit_code == 1
    assert f"clumsy failed in {len(VARIANTS)} variant(s)" in flat(result.stderr)
    rows = table_rows(result.stdout.split("decisions asked, by kind")[0])  # the coverage table follows
    assert [row[0] for row in rows] == list(VARIANTS)
    errors = [line for line in result.stdout.splitlines() if line.startswith("first error in")]
    assert len(errors) == len(VARIANTS)
    assert all("seats, hand" in line and "RuntimeError: butterfingers" in line for line in errors)
    assert_clean_error(invoke("check", "nosuch"), 2, "unknown bot 'nosuch'")


# --- init and bench -----------------------------------------------------------------

def test_init_writes_a_file_that_run_accepts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("init", "starter.toml")
    assert result.exit_code == 0, result.output
    assert "wrote starter.toml; run it with: naparena run starter.toml" in flat(result.stdout)
    text = Path("starter.toml").read_text()
    assert "[tournament]" in text and "[[bots]]" in text and "[[variants]]" in text
    Path("starter.toml").write_text(text.replace("hands = 35", "hands = 5"))
    played = invoke("run", "starter.toml", "--workers", 1, "--log-dir", "logs", "--json")
    assert played.exit_code == 0, played.output
    assert json.loads(played.stdout)["matches"] > 0


def test_init_refuses_to_overwrite_without_force(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("mine.toml").write_text("# my own tournament\n")
    refused = invoke("init", "mine.toml")
    assert refused.exit_code != 0
    assert "Traceback" not in refused.output
    assert "mine.toml exists; use --force" in flat(refused.stderr)
    assert Path("mine.toml").read_text() == "# my own tournament\n"
    forced = invoke("init", "mine.toml", "--force")
    assert forced.exit_code == 0, forced.output
    assert "[tournament]" in Path("mine.toml").read_text()


def test_init_lists_the_drop_in_bots_found_here(tmp_path, monkeypatch, bots_dir):
    monkeypatch.chdir(tmp_path)
    bots_dir(good=GOOD_DROP_IN)
    assert invoke("init", "t.toml").exit_code == 0
    available = next(line for line in Path("t.toml").read_text().splitlines() if "Available bots:" in line)
    assert "good" in available


def test_bench_prints_each_measure_once_with_its_spread_and_progress():
    result = invoke("bench", "--hands", 200, "--classic", "--repeat", 2)
    assert result.exit_code == 0, result.output
    rows = {row[0]: row[1:] for row in table_rows(result.stdout)}
    assert list(rows) == ["engine, classic, 4 players", "engine, classic, 4 players, JSON hand log",
                          "engine, classic, 4 players, every trick played",
                          "match of random bots, bot interface and JSON log",
                          "match of random bots, inline, wall clock",
                          "match of random bots, each in a seat process, wall clock"]
    for measure, (best, median, spread) in rows.items():
        assert float(best.replace(",", "")) >= float(median.replace(",", "")) > 0, measure
        assert spread.endswith("%"), measure
    assert "match / engine:" in flat(result.stdout)
    assert "seat processes / inline:" in flat(result.stdout)
    progress = [line.split(":")[0] for line in result.stderr.splitlines() if line.startswith("bench ")]
    assert progress == [f"bench {n}/6" for n in range(1, 7)]


def test_bench_every_variant_lists_classic_at_four_players_once():
    from naparena.tools.bench import measures
    names = [name for name, _ in measures(100, every_variant=True)]
    assert len(names) == len(set(names))
    assert sum("classic, 4 players" in n and "," not in n.split("players")[1] for n in names) == 1
    assert {n.split(",")[1].strip() for n in names if n.startswith("engine,")} == set(VARIANTS)


# --- in-process use -------------------------------------------------------------------

WORKER_LOG_BOT = '''
import naparena
from naparena import Bot


class Fumbler(Bot):
    name = "fumbler"
    description = "raises on its first card of every hand, so every match logs a fault"

    def bid(self, view):
        return "pass"

    def play(self, view):
        raise ValueError("fumbled")


@naparena.hookimpl
def register_bots(register):
    register(Fumbler)
'''


def test_a_second_run_in_the_same_process_logs_only_to_its_own_run_log(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("first", "second"):
        path = write_tournament(tmp_path, name=name, bots=("random", "fumbler"), seeds=1, hands=5,
                                max_fault_share=1.0, drop_ins={"fumbler": WORKER_LOG_BOT})
        # An absolute path, so each run's drop-in folder is its own (see test_runner's
        # test_a_second_run_in_the_same_process_sees_its_own_drop_in_bots).
        result = invoke("run", path.resolve(), "--workers", 2, "--log-dir", "logs")
        assert result.exit_code == 0, result.output
    first = (run_dir_in_named(tmp_path / "logs", "first") / "run.log").read_text()
    second = (run_dir_in_named(tmp_path / "logs", "second") / "run.log").read_text()
    assert "(fumbler): exception" in second
    assert first.count("(fumbler): exception") == second.count("(fumbler): exception")


def run_dir_in_named(log_dir: Path, name: str) -> Path:
    [run_dir] = [p for p in log_dir.iterdir() if p.name.startswith(name + "-")]
    return run_dir
