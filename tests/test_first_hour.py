"""A newcomer's first hour, through the command line only: version, starter file, tables
that fit any width without cutting a number, progress in a CI log, where bots are found."""

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from naparena._version import __version__
from naparena.arena.setup.settings import SETTINGS
from tests.drop_ins import GOOD_DROP_IN
from tests.helpers import REPO, flat, invoke, run_dir_in, write_tournament

WIDTHS = (60, 80, 100, 120)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """A finished run of three bots over two variants with eight seed streams."""
    folder = tmp_path_factory.mktemp("quick")
    path = write_tournament(folder, bots=("heuristic", "random", "cautious"), variants=("classic", "pagat"),
                            hands=20, seeds=8, table=3)
    result = invoke("run", path, "--workers", 1, "--log-dir", folder / "logs", "--bots-dir", folder / "bots",
                    "--json")
    assert result.exit_code == 0, result.output
    return run_dir_in(folder / "logs"), json.loads(result.stdout)


# --- version and packaging ------------------------------------------------------------

def test_version_option_prints_the_one_version():
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"naparena {__version__}"
    done = subprocess.run([sys.executable, "-m", "naparena", "--version"], capture_output=True, text=True,
                          timeout=60, cwd=REPO)
    assert done.stdout.strip() == f"naparena {__version__}", done.stderr


def test_the_version_is_written_in_one_place_only():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and __version__ not in pyproject


def test_importing_main_does_not_run_the_command_line():
    done = subprocess.run([sys.executable, "-c", "import naparena.__main__; print('imported')"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.stdout.strip() == "imported", done.stderr


def test_packaging_ships_types_licence_and_a_typer_range():
    import tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"
    assert all((REPO / f).is_file() for f in project["project"]["license-files"])
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["naparena"]
    assert (REPO / "naparena" / "py.typed").is_file()
    [typer] = [d for d in project["project"]["dependencies"] if d.startswith("typer")]
    assert ">=" in typer and "<" in typer.replace("<=", "")


def test_shell_completion_is_offered():
    result = invoke("--help")
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


# --- the starter file and the documented defaults ---------------------------------------

def test_init_starter_gives_intervals_on_its_first_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert invoke("init", "first.toml").exit_code == 0
    text = Path("first.toml").read_text()
    assert "seeds = 8" in text
    Path("first.toml").write_text(text.replace("hands = 100", "hands = 10"))
    played = invoke("run", "first.toml", "--workers", 1, "--json")
    assert played.exit_code == 0, played.output
    for variant in json.loads(played.stdout)["variants"].values():
        assert all(row["ci95"] is not None for row in variant["bots"])
        assert all(pair["ci95"] is not None for pair in variant["pairs"])


def test_the_annotated_tournament_file_shows_the_real_defaults_of_every_tournament_key():
    page = (REPO / "docs" / "reference" / "tournament-annotated.md").read_text()
    block = page.split("```toml")[1].split("[[bots]]")[0]
    for key, setting in SETTINGS.items():
        if key == "name":
            continue
        found = re.search(rf"^{key}\s*=\s*(\S+)", block, re.M)
        assert found, key
        shown = found[1].strip('"')
        expected = str(setting.default).lower() if isinstance(setting.default, bool) else str(setting.default)
        assert shown == expected, (key, shown, expected)


# --- tables at any width ----------------------------------------------------------------

def _numbers(result: dict) -> list[str]:
    """Every number the standings tables print, formatted as they print it."""
    out = []
    for variant in result["variants"].values():
        for row in variant["bots"]:
            out += [f"{row['per100']:+.2f}", f"{row['chips']:+d}", f"{row['bids_won']}/{row['bid_attempts']}"]
            if row["ci95"]:
                out.append(f"[{row['ci95'][0]:+.1f}, {row['ci95'][1]:+.1f}]")
        for pair in variant["pairs"]:
            out += [f"{pair['diff_per100']:+.2f}", f"[{pair['ci95'][0]:+.1f}, {pair['ci95'][1]:+.1f}]"]
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("wide", [False, True])
def test_report_never_cuts_a_number_at_any_width(quick_run, width, wide):
    run_dir, result = quick_run
    shown = invoke("report", run_dir, *(["--wide"] if wide else []), env={"COLUMNS": str(width)})
    assert shown.exit_code == 0, shown.output
    text = shown.stdout
    assert "…" not in text
    lines = text.splitlines()
    for number in _numbers(result):
        assert any(number in line for line in lines), (width, number)
    # the tables are split, not squeezed: no line is wider than the console
    assert max(len(line) for line in lines) <= width


def test_long_names_at_80_columns_cut_neither_a_name_nor_a_number(tmp_path):
    """Two long aliases as the key columns of a head-to-head table leave less than a number's
    width at 80 columns: the line grows past the console (the terminal wraps it) rather than
    cutting a name or a number. The control: Rich alone caps a table at the console's width."""
    long_a, long_b = "a-very-long-heuristic-alias-name-here", "another_remarkably_long_random_alias"
    file = tmp_path / "long.toml"
    file.write_text(f"""[tournament]\nname = "long"\nseed = 5\nseeds = 2\nhands = 6\ntable = 3\nworkers = 1
[[bots]]\nname = "heuristic"\nalias = "{long_a}"\n[[bots]]\nname = "random"\nalias = "{long_b}"
[[bots]]\nname = "bold"\n[[variants]]\nname = "classic"\n""")
    ran = invoke("run", file, "--json", "--log-dir", tmp_path / "logs")
    assert ran.exit_code == 0, ran.output
    result = json.loads(ran.stdout[ran.stdout.index("{"):])
    shown = invoke("report", run_dir_in(tmp_path / "logs"), env={"COLUMNS": "80"}).stdout
    lines = shown.splitlines()
    assert any(f"│ {long_a} │ {long_b} │" in line for line in lines), "a head-to-head row names both in full"
    for number in _numbers(result):
        assert any(number in line for line in lines), number
    from rich.console import Console
    from rich.table import Table
    capped = Console(width=80, record=True, file=io.StringIO())
    table = Table()
    for header in ("A", "B", "A - B"):
        table.add_column(header, no_wrap=True)
    table.add_row(long_a, long_b, "+740.00")
    capped.print(table, width=120)
    assert "…" in capped.export_text(), "Rich caps print(width=...) at the console's width"


def test_the_main_table_fits_100_columns_in_one_piece(quick_run):
    run_dir, _ = quick_run
    shown = invoke("report", run_dir, env={"COLUMNS": "100"})
    assert "classic: chips per 100 hands" in shown.stdout
    assert "chips per 100 hands (1/" not in shown.stdout


def test_piped_output_honours_columns_and_defaults_to_100(quick_run):
    run_dir, _ = quick_run
    piped = subprocess.run([sys.executable, "-m", "naparena", "report", str(run_dir)], capture_output=True,
                           text=True, timeout=120, cwd=REPO, env={**_env(), "COLUMNS": "60"})
    assert piped.returncode == 0, piped.stderr
    assert max(map(len, piped.stdout.splitlines())) <= 60
    env = _env()
    env.pop("COLUMNS", None)
    default = subprocess.run([sys.executable, "-m", "naparena", "report", str(run_dir)], capture_output=True,
                             text=True, timeout=120, cwd=REPO, env=env)
    assert 80 < max(map(len, default.stdout.splitlines())) <= 100


def _env() -> dict:
    import os
    return {**os.environ, "NAPARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_columns_say_what_they_count(quick_run):
    run_dir, _ = quick_run
    text = flat(invoke("report", run_dir).stdout)
    assert "bids won" not in text and "P(A>B)" not in text
    assert "made = contracts made / contracts played as bidder" in text
    assert "A won = the share of those boards on which A ended ahead of B" in text


# --- progress in a log ------------------------------------------------------------------

def test_run_and_verify_print_plain_progress_lines_when_stderr_is_no_terminal(tmp_path):
    path = write_tournament(tmp_path, hands=5, seeds=10)
    result = invoke("run", path, "--workers", 1, "--log-dir", tmp_path / "logs", "--bots-dir", tmp_path / "bots")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("matches ")]
    assert len(lines) >= 2 and lines[-1].startswith("matches 60/60, 300 hands")
    checked = invoke("verify", run_dir_in(tmp_path / "logs"))
    assert checked.exit_code == 0
    lines = [line for line in checked.stderr.splitlines() if line.startswith("verify: matches")]
    assert len(lines) >= 2 and lines[-1].startswith("verify: matches 60/60")


# --- where bots are found ---------------------------------------------------------------

def test_bots_check_and_a_tournament_file_in_a_subfolder_find_the_same_drop_ins(tmp_path, monkeypatch, bots_dir):
    monkeypatch.chdir(tmp_path)
    bots_dir(good=GOOD_DROP_IN)
    Path("tournaments").mkdir()
    Path("tournaments/t.toml").write_text('[tournament]\nname = "t"\nhands = 3\n[[bots]]\nname = "good"\n'
                                         '[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n')
    assert "good" in invoke("bots").stdout
    assert invoke("check", "good", "--hands", 1).exit_code == 0
    played = invoke("run", "tournaments/t.toml", "--workers", 1)
    assert played.exit_code == 0, played.output


def test_unknown_bot_says_which_folders_were_searched(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_tournament(tmp_path, bots=("random", "nosuch"))
    result = invoke("run", "t.toml")
    assert result.exit_code == 2
    message = flat(result.stderr)
    assert "unknown bot 'nosuch'" in message
    assert f"drop-in folder {(tmp_path / 'bots').resolve()}" in message
    assert "naparena's own bots" in message
    checked = flat(invoke("check", "nosuch", "--bots-dir", tmp_path / "nowhere-else").stderr)
    assert "does not exist" in checked


def test_bots_json_lists_bots_and_failures_and_exits_1_on_a_failure(bots_dir):
    folder = bots_dir(good=GOOD_DROP_IN)
    clean = invoke("bots", "--bots-dir", folder, "--json")
    assert clean.exit_code == 0, clean.output
    data = json.loads(clean.stdout)
    assert {"good", "clumsy", "random"} <= {b["name"] for b in data["bots"]}
    assert data["failures"] == []
    bots_dir(broken="import nosuchmodule\n")
    broken = invoke("bots", "--bots-dir", folder, "--json")
    assert broken.exit_code == 1
    [failure] = json.loads(broken.stdout)["failures"]
    assert failure["name"] == "broken" and "ModuleNotFoundError" in failure["error"]
    assert "Traceback" in failure["traceback"]


def test_check_shows_why_a_drop_in_did_not_load(tmp_path):
    (tmp_path / "mine.py").write_text("import nosuchmodule\n")
    result = invoke("check", "mine", "--bots-dir", tmp_path)
    assert result.exit_code == 2
    assert "plug-in failed mine" in flat(result.stderr) and "nosuchmodule" in flat(result.stderr)
    verbose = invoke("check", "mine", "--bots-dir", tmp_path, "-v")
    assert "Traceback" in verbose.stderr


# --- the HTML page ----------------------------------------------------------------------

def test_report_html_writes_one_self_contained_page_from_the_logs(quick_run, tmp_path):
    run_dir, result = quick_run
    out = tmp_path / "report.html"
    made = invoke("report", run_dir, "--html", out)
    assert made.exit_code == 0, made.output
    assert f"wrote {out}" in flat(made.stderr)
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # nothing from the network: the scripts and styles are inline, its links stay in the page, and
    # the hand viewer's data files are in the folder written beside it
    for outside in ("src=", "url(", "@import", "<link", "fetch("):
        assert outside not in page, outside
    assert "href=" in page and not re.search(r"""href=["'](?!#hand-\d+-\d+["']|#hands\?)""", page)
    assert '"base": "report-hands/"' in page and (tmp_path / "report-hands" / "index.js").is_file()
    for variant, data in result["variants"].items():
        section = page.split(f"<h2>{variant}</h2>")[1].split("<h2>")[0]
        assert section.count("<svg") == 3  # heat map, bankroll, make rates
        ranking = page.split(f"<h3>{variant}</h3>")[1].split("<h3>")[0]  # the variant's ranking, at the top
        for row in data["bots"]:
            # the ranking's rate and interval and the bankroll curve's end are the standings' own numbers
            # each cell carries its column's name for the narrow layout: matched apart from its attributes
            cells = re.sub(r"<td[^>]*>", "<td>", ranking)
            assert f"<td>{row['per100']:+.2f}</td><td>[{row['ci95'][0]:+.1f}, {row['ci95'][1]:+.1f}]</td>" in cells
            assert f"{row['bot']} {row['chips']:+,}</text>" in section
            for got in row["contracts"].values():
                assert f"({got['made']}/{got['bid']})</text>" in section
        for pair in data["pairs"]:
            assert f"{pair['a']} − {pair['b']}: {pair['diff_per100']:+.2f}" in section


def test_report_html_of_a_folder_that_is_no_run_is_a_clean_error(tmp_path):
    result = invoke("report", tmp_path, "--html", tmp_path / "x.html")
    assert result.exit_code == 2 and "not a run directory" in flat(result.stderr)
    assert not (tmp_path / "x.html").exists()


# --- disqualification ---------------------------------------------------------------------

MISBEHAVING = Path(__file__).resolve().parent / "bots_misbehaving"


def _five_bots(tmp_path: Path, table: int) -> Path:
    import tomli_w
    data = {"tournament": {"name": "five", "seed": 3, "hands": 10, "table": table, "timeout": 5.0,
                           "bots_dir": str(MISBEHAVING)},
            "bots": [{"name": "misbehave", "alias": "bad1", "params": {"mode": "raise", "every": 1}},
                     {"name": "misbehave", "alias": "bad2", "params": {"mode": "raise", "every": 1}},
                     {"name": "random", "alias": "r1"}, {"name": "random", "alias": "r2"},
                     {"name": "steady"}],
            "variants": [{"name": "classic"}]}
    path = tmp_path / "five.toml"
    path.write_text(tomli_w.dumps(data))
    return path


def test_two_disqualified_bots_in_five_do_not_stop_the_others_playing(tmp_path):
    path = _five_bots(tmp_path, table=4)
    result = invoke("run", path, "--workers", 1, "--log-dir", tmp_path / "logs", "--json")
    assert result.exit_code == 0, result.output
    standings = json.loads(result.stdout)
    assert set(standings["disqualified"]) == {"bad1", "bad2"}
    assert standings["skipped"] == []
    rows = {r["bot"]: r for r in standings["variants"]["classic"]["bots"]}
    # every combination of four from five: each well-behaved bot sits at four of the five
    # tables, each with the 24 duplicate seatings of 10 hands
    for healthy in ("r1", "r2", "steady"):
        assert rows[healthy]["hands"] == 4 * 24 * 10, healthy
    assert rows["stand-in"]["hands"] > 0
    assert sum(r["chips"] for r in rows.values()) + standings["variants"]["classic"]["kitty"] == 0
    loud = flat(result.stderr)
    assert "DISQUALIFIED bad1 after match" in loud and "DISQUALIFIED bad2 after match" in loud
    assert "played by the stand-in (the random bot)" in loud


def test_a_line_up_left_with_one_bot_is_skipped_loudly_and_the_run_exits_3(tmp_path):
    path = _five_bots(tmp_path, table=3)  # tables of three: some hold both bad bots
    result = invoke("run", path, "--workers", 1, "--log-dir", tmp_path / "logs", "--json")
    assert result.exit_code == 3, result.output
    standings = json.loads(result.stdout)
    skipped = standings["skipped"]
    assert skipped and all(s["reason"].startswith("disqualified: ") for s in skipped)
    assert "matches were not played" in flat(result.stderr) and "exit code 3" in flat(result.stderr)
    report = invoke("report", run_dir_in(tmp_path / "logs"), "--json")
    assert json.loads(report.stdout) == standings  # the stand-in's bookings rebuild from the logs


def test_stand_in_is_not_an_alias_a_file_may_use(tmp_path):
    (tmp_path / "t.toml").write_text('[tournament]\nname = "t"\n[[bots]]\nname = "random"\n[[bots]]\n'
                                     'name = "random"\nalias = "stand-in"\n[[variants]]\nname = "classic"\n')
    result = invoke("run", tmp_path / "t.toml", "--log-dir", tmp_path / "logs")
    assert result.exit_code == 2 and "bots[2].alias" in flat(result.stderr)


def test_a_run_with_stand_ins_resumes_to_the_same_files(tmp_path):
    path = _five_bots(tmp_path, table=4)
    assert invoke("run", path, "--workers", 2, "--log-dir", tmp_path / "logs").exit_code == 0
    run_dir = run_dir_in(tmp_path / "logs")
    before = {p.name: p.read_bytes() for p in sorted((run_dir / "matches").glob("*.json"))}
    assert any(b'"stand_ins"' in data for data in before.values())
    for name in list(before)[len(before) // 2:]:
        (run_dir / "matches" / name).unlink()  # as if interrupted half way
    (run_dir / "standings.json").unlink()
    assert invoke("resume", run_dir, "--workers", 1).exit_code == 0
    after = {p.name: p.read_bytes() for p in sorted((run_dir / "matches").glob("*.json"))}
    assert after == before


# --- workers' log records and the fork ----------------------------------------------------

TALKER = '''
import logging

import naparena
from naparena import Bot


class Talker(Bot):
    name = "talker"
    description = "logs a line from its worker at the start of every match"

    def start_match(self, info):
        logging.getLogger("naparena.talker").warning("talker says hello from match %d", info["match"])

    def bid(self, view):
        return "pass"

    def play(self, view):
        return view.legal[0]


@naparena.hookimpl
def register_bots(register):
    register(Talker)
'''


def test_records_logged_in_workers_reach_run_log_and_stderr(tmp_path):
    write_tournament(tmp_path, bots=("random", "talker"), hands=3, seeds=2)
    (tmp_path / "bots" / "talker.py").write_text(TALKER)
    result = invoke("run", tmp_path / "t.toml", "--workers", 2, "--log-dir", tmp_path / "logs",
                    "--bots-dir", tmp_path / "bots")
    assert result.exit_code == 0, result.output
    run_log = (run_dir_in(tmp_path / "logs") / "run.log").read_text()
    matches = json.loads((run_dir_in(tmp_path / "logs") / "manifest.json").read_text())["matches"]
    for i in range(matches):  # the talker holds two of the four seats: two lines a match
        assert run_log.count(f"WARNING talker says hello from match {i}\n") == 2
    assert result.stderr.count("talker says hello from match") == 2 * matches


def test_the_pool_forks_before_any_thread_starts(tmp_path):
    """Python 3.12+ warns when a process with threads forks: check the thread count at
    every fork of a two-worker run, on any Python."""
    code = f'''
import os, sys, threading
counts = []
os.register_at_fork(before=lambda: counts.append(threading.active_count()))
from naparena.cli import main
sys.argv = ["naparena", "run", {str(tmp_path / "t.toml")!r}, "--workers", "2", "--log-dir", {str(tmp_path / "logs")!r}]
try:
    main()
except SystemExit:
    pass
print("threads at each fork:", counts)
'''
    write_tournament(tmp_path, hands=3, seeds=2)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env=_env())
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("threads at each fork:"))
    counts = eval(line.split(":", 1)[1])
    assert counts and set(counts) == {1}, counts
