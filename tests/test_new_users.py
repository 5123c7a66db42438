"""What a new user met in their first hour, round 2 (issue 25, items 12-19 but 15): each
where they met it — the command line as a child process, real files, the README's own
commands and figures."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from naparena.cli import app
from naparena.errors import RulesError
from naparena.game.rules import VARIANTS, make_rules
from naparena.report.numbers import signed
from tests.helpers import REPO, child_env, invoke, naparena, run_dir_in, wait_for, write_tournament

README = (REPO / "README.md").read_text()
FIRST_BOT = (REPO / "docs" / "tutorials" / "first-bot.md").read_text()  # the tutorial that writes and tests a bot


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of three bots at a table of three, in a folder of its own."""
    folder = tmp_path_factory.mktemp("finished")
    path = write_tournament(folder, name="tournament", bots=("random", "heuristic", "cautious"), seeds=1,
                            hands=10, table=3, example=False)
    done = naparena("run", path, "--workers", 1, "--log-dir", folder / "logs", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder, path, run_dir_in(folder / "logs"), done


def one_message(done: subprocess.CompletedProcess[str]) -> str:
    """The single line a failed command printed on stderr (and nothing on stdout)."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and done.stdout == "", (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


# --- 12: one message and exit 2, never a traceback ------------------------------------------

def test_replay_of_a_manifest_or_the_standings_says_it_is_not_a_match_log(finished):
    folder, _, run_dir, _ = finished
    for name in ("manifest.json", "standings.json"):
        said = one_message(naparena("replay", run_dir / name, cwd=folder))
        assert "not a match log" in said and "matches/NNNNNN.json" in said


def test_report_html_to_a_missing_folder_or_onto_a_folder_refuses_before_the_tables(finished):
    folder, _, run_dir, _ = finished
    said = one_message(naparena("report", run_dir, "--html", folder / "missing" / "r.html", cwd=folder))
    assert "does not exist" in said
    said = one_message(naparena("report", run_dir, "--html", folder / "logs", cwd=folder))
    assert "is a folder" in said
    assert naparena("report", run_dir, "--html", folder / "r.html", cwd=folder).returncode == 0
    assert (folder / "r.html").read_text().startswith("<!DOCTYPE html>")


def test_every_path_a_command_takes_fails_with_one_message_when_missing_or_a_folder(tmp_path):
    """Walks every command's path arguments and options: none may end in a traceback."""
    path = write_tournament(tmp_path, bots=("random", "heuristic"), seeds=1, hands=2, table=2, example=False)
    assert invoke("run", path, "--workers", 1, "--log-dir", tmp_path / "logs").exit_code == 0
    run_dir = run_dir_in(tmp_path / "logs")
    valid = {"run": [path], "resume": [run_dir], "report": [run_dir], "compare": [run_dir, run_dir],
             "replay": [run_dir / "matches" / "000000.json"], "verify": [run_dir], "bots": [], "check": ["random"],
             "init": [tmp_path / "new.toml"], "serve": None, "variants": None, "bench": None,
             # a file without a human seat, so play refuses it rather than seat the test
             "play": [path], "view": [run_dir], "ratings": [run_dir],
             # it would write a key at the missing path: its bad paths are in test_forgery
             "keygen": None}
    walked = []
    for name, command in typer_command().commands.items():
        for param in command.params:
            if param.name not in PATH_PARAMS or valid[name] is None:
                continue
            for bad in (tmp_path / "nowhere" / "x.json", tmp_path / "nowhere", tmp_path):
                args = _with(valid[name], command, param, bad)
                if args is None:
                    continue
                result = invoke(name, *args, "--hands", 1) if name == "check" else invoke(name, *args)
                walked.append((name, param.name))
                assert result.exception is None or isinstance(result.exception, SystemExit), \
                    (name, args, result.output, result.exception)
                assert result.exit_code in (0, 1, 2) and "Traceback" not in result.output, (name, args)
    assert {n for n, _ in walked} >= {"run", "resume", "report", "compare", "replay", "verify", "bots", "check",
                                      "init"}


PATH_PARAMS = {"file", "run_dir", "run_a", "run_b", "logfile", "log_dir", "bots_dir", "tournament", "html", "path",
               "out_file"}


def typer_command():
    import typer.main
    return typer.main.get_command(app)


def _with(valid: list, command, param, bad: Path) -> list | None:
    """The command's valid arguments with `param` set to `bad` (None: nothing to try)."""
    if param.param_type_name == "argument":
        position = [p for p in command.params if p.param_type_name == "argument"].index(param)
        if position >= len(valid):
            return None
        args = list(valid)
        args[position] = bad
        return args
    return [*valid, param.opts[0], bad]


# --- 13: --workers 0, and usage errors in one line ------------------------------------------

def test_workers_0_on_the_command_line_means_one_per_core_as_in_the_file(finished):
    folder, path, _, _ = finished
    done = naparena("run", path, "--workers", 0, "--log-dir", folder / "cores", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert f"{os.cpu_count()} worker(s)" in done.stderr


@pytest.mark.parametrize("args", [("run", "t.toml", "--workers", "-1"), ("run", "t.toml", "--bogus"),
                                  ("variants", "classic", "pagat"), ("check", "random", "--hands", "0"),
                                  # a missing argument (typer before 0.18 passed None on with click 8.5: a traceback)
                                  ("resume",), ("report",), ("verify",), ("replay",), ("compare", "x")])
def test_a_usage_error_is_one_line_when_stderr_is_no_terminal(tmp_path, args):
    said = one_message(naparena(*args, cwd=tmp_path))
    assert "╭" not in said and "--help" in said


# --- 14: the README's report command, on the second run too ---------------------------------

def test_the_readmes_report_command_works_after_a_second_run(tmp_path):
    path = write_tournament(tmp_path, name="tournament", bots=("random", "heuristic"), seeds=1, hands=2, table=2,
                            example=False)
    for _ in range(2):  # the README's run, twice, into ./logs
        done = naparena("run", path, "--workers", 1, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    [command] = re.findall(r"`(naparena report [^`]*--html report\.html)`", README)
    bin_dir = str(Path(sys.executable).parent)
    done = subprocess.run(["sh", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=child_env({"PATH": bin_dir + os.pathsep + os.environ["PATH"]}))
    assert done.returncode == 0, done.stderr
    # Two run folders: a bare glob would have handed `report` both ("unexpected extra argument").
    runs = [p.name for p in (tmp_path / "logs").iterdir()]
    assert len(runs) == 2 and any(name.endswith("-2") for name in runs), runs
    assert "wrote report.html" in done.stderr and (tmp_path / "report.html").is_file()


# --- 15: verify knows its total, and Ctrl-C stops it in one line ----------------------------

def test_verify_interrupted_exits_130_with_one_line(finished, tmp_path):
    _, _, run_dir, _ = finished
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(run_dir), str(copy)], check=True)
    # A match file that never arrives: verify waits on it until the user gives up.
    last = sorted((copy / "matches").glob("*.json"))[-1]
    last.unlink()
    os.mkfifo(last)
    log = tmp_path / "verify.err"
    with open(log, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "naparena", "verify", str(copy)], stdout=subprocess.PIPE,
                                stderr=stderr, text=True, env=child_env(), start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    try:
        total = len(list((copy / "matches").iterdir()))
        wait_for(lambda: f"verify: matches {total - 1}/{total}" in log.read_text(), "verify to reach the last match",
                 proc=proc)
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    lines = [line for line in log.read_text().splitlines() if not line.startswith("verify: matches")]
    assert lines == [f"interrupted: verify stopped after {total - 1} of {total} matches; nothing was changed"]
    assert out == ""


# --- 16: naparena.testing --------------------------------------------------------------------

def test_testing_refuses_a_duplicated_card_and_names_an_unknown_variant():
    from naparena.testing import deal, play_hand, view
    with pytest.raises(ValueError, match="AS dealt twice"):
        view("AS AS QS 8H 9C")
    with pytest.raises(ValueError, match="AS dealt twice"):
        deal({0: "AS AS QS 8H 9C"})
    with pytest.raises(ValueError, match="AS dealt twice"):
        deal({0: "AS KS QS 8H 9C", 1: "AS 8C 9C 9D 10D"})
    for call in (lambda: view("AS KS QS 8H 9C", variant="nosuch"), lambda: play_hand(["random"] * 4, variant="nosuch")):
        with pytest.raises(RulesError) as refused:  # one error for every entry point (the env's too)
            call()
        assert "'nosuch'" in str(refused.value) and "base" not in str(refused.value)


def test_the_tutorials_bot_test_runs_against_the_tutorials_drop_in_file(tmp_path):
    """The reader's own test file, beside `bots/`, run as the tutorial says: not `tests/`,
    which in a clone of naparena is the project's own suite."""
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "highcard.py").write_text(_python_block("class HighCard(Bot)"))
    (tmp_path / "test_highcard.py").write_text(_python_block("from naparena.testing import"))
    assert "bots/highcard.py" in FIRST_BOT and "`test_highcard.py`" in FIRST_BOT
    [command] = [line for line in re.findall(r"```sh\n(.*?)```", FIRST_BOT, re.S)[0].splitlines() if "pytest" in line
                 and "install" not in line]
    assert command == "python -m pytest test_highcard.py" and "tests" not in command
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_highcard.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=child_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout


def _python_block(marker: str) -> str:
    [block] = [b for b in re.findall(r"```python\n(.*?)```", FIRST_BOT, re.S) if marker in b]
    return block


# --- 17: the README's figures plain; the benchmark's sentence, with its conditions, on the ------
# --- performance page ----------------------------------------------------------------------

PERFORMANCE = (REPO / "docs" / "explanation" / "performance.md").read_text()


def test_the_readmes_quickstart_figure_has_the_benchmarks_form_and_its_conditions(finished):
    _, _, _, done = finished
    spec = importlib.util.spec_from_file_location("quickstart_time", REPO / "benchmarks" / "quickstart_time.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.DONE.search(done.stderr), "the benchmark reads the time a run prints"
    printed = bench.sentence([4.66, 4.9], 2, [1.04, 2.6])
    assert printed == "its play took 4.7–4.9 s on two cores at a load of 1.0–2.6"
    form = re.escape(printed)
    for number in ("4.7", "4.9", "1.0", "2.6"):
        form = form.replace(re.escape(number), r"\d+\.\d", 1)
    form = form.replace("two", r"\w+")
    perf = " ".join(PERFORMANCE.split())
    assert re.search(form, perf), "the performance page quotes the benchmark's sentence as printed"
    # The test command's figures there: wall times, tests, cores and load.
    assert re.search(r"`pytest -n auto` \d+ s \([\d,]+ tests\)", perf)
    assert re.search(r"two cores at a load of [\d.–]+, in `\.ci/run`", perf)
    # The README states them plainly and links the page with the conditions (issue 43, item 7).
    readme = " ".join(README.split())
    assert "at a load of" not in readme and "load average" not in readme, "conditions belong on the performance page"
    assert "57,600 hands" in readme and "1,820 tests" in readme
    assert readme.count("docs/explanation/performance.md#at-a-glance") >= 2


# --- 18: cosmetics ------------------------------------------------------------------------------

def test_no_minus_zero_in_a_signed_figure():
    assert [signed(v, 1) for v in (-0.04, 0.04, -0.05001, 2.25)] == ["0.0", "0.0", "-0.1", "+2.2"]
    assert [signed(v, 0) for v in (-0.4, 0.6, -12.0)] == ["0", "+1", "-12"]


def test_crosstable_and_heat_map_write_no_minus_zero(finished):
    from naparena.report.html import heatmap
    _, _, run_dir, _ = finished
    pairs = [{"a": "x", "b": "y", "diff_per100": -0.3, "ci95": [-5.0, 4.0]}]
    svg = heatmap(["x", "y"], pairs)
    assert ">-0<" not in svg and ">0<" in svg
    text = invoke("report", run_dir, env={"COLUMNS": "120"}).stdout
    assert not re.search(r"(?<![\d.])-0\.0(?!\d)", text)


def test_one_match_is_singular(tmp_path):
    path = write_tournament(tmp_path, bots=("random", "heuristic"), seeds=1, hands=3, table=2, example=False)
    done = naparena("run", path, "--workers", 1, "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_dir = run_dir_in(tmp_path / "logs")
    assert ": 2 matches, 6 hands" in done.stderr
    # Keep the first match only, as an interrupted run would have.
    (run_dir / "matches" / "000001.json").unlink()
    (run_dir / "standings.json").unlink()
    resumed = naparena("resume", run_dir, "--workers", 1, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "(1 match already done)" in resumed.stderr, resumed.stderr


def test_resume_of_done_matches_shows_no_rate(finished):
    folder, _, run_dir, _ = finished
    done = naparena("resume", run_dir, "--workers", 1, cwd=folder)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("matches ")]
    assert lines and not any("hands/s" in line for line in lines), lines


def test_table_titles_do_not_wrap_at_120_columns(finished):
    _, _, run_dir, _ = finished
    text = invoke("report", run_dir, env={"COLUMNS": "120"}).stdout
    for title in ("crosstable, row − column chips per 100 hands (* = 95% CI excludes 0)",
                  "chips per 100 hands by position (0 = eldest hand, left of the dealer)"):
        assert f"classic: {title}" in text.splitlines() or any(title in line for line in text.splitlines()), title


def test_help_has_no_hard_line_breaks_and_no_bool_on_flags():
    for command in ("run", "check", "bench", "report"):
        text = naparena(command, "--help", cwd=REPO, env={"COLUMNS": "100"}).stdout
        assert "<bool>" not in text and "╭" not in text
        assert re.search(r"^  --json +print", text, re.M) or command in ("check", "bench"), text
        # The description fills the width: no line of it ends early but its last.
        lines = text.split("\n\n")[1].splitlines()
        assert all(len(line) > 70 for line in lines[:-1]), lines


def test_init_says_what_eight_seeds_are_for(tmp_path):
    assert naparena("init", "t.toml", cwd=tmp_path).returncode == 0
    text = (tmp_path / "t.toml").read_text()
    assert "for confidence intervals" not in text and "seeds = 8" in text
    assert "eight deal sets narrow the intervals" in text


# --- 19: RULES.md names the duplicate-boards interpretation ------------------------------------

def test_rules_md_lists_duplicate_boards_for_exactly_the_shuffle_after_nap_variants():
    rules = (REPO / "docs" / "RULES.md").read_text()
    interpretations = rules[rules.index("## 10. Interpretations"):]
    [item] = [line for line in interpretations.splitlines() if "board by board" in line]
    named = set(re.findall(r"`([a-z-]+)`", item[item.index("variants ("):].split(")")[0]))
    after_nap = {name for name in VARIANTS if make_rules(name).shuffle == "after_nap"}
    assert named == after_nap
    assert "Why:" in item and "duplicate" in item


def test_json_of_a_finished_run_is_unchanged_by_these_messages(finished):
    folder, _, run_dir, _ = finished
    done = naparena("report", run_dir, "--json", cwd=folder)
    assert json.loads(done.stdout) == json.loads((run_dir / "standings.json").read_text())
