"""Runner: the same bytes for any number of workers and any global RNG, resume after
kill -9, SIGTERM and Ctrl-C, verify and report, the JSON schemas of every file a run
writes, and a parent whose memory grows with deal sets, not hands."""

import copy
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import tomllib
from pathlib import Path

import jsonschema
import pytest
import tomli_w

from naparena.arena.match.play import Job
from naparena.arena.records.ledger import standings_from_logs
from naparena.arena.records.rundir import MANIFEST, MATCHES, STANDINGS
from naparena.arena.session import Quiet, Session
from naparena.arena.setup.schedule import MatchSpec
from naparena.arena.setup.settings import BOT_KEYS, FORMAT_KEYS, SEAT_KEYS, SETTINGS, SPRT_KEYS
from naparena.arena.worker import run_job
from naparena.bots import plugins
from naparena.game.rules import (
    CHOICES,
    FLOATER_LADDER,
    OPTION_NAMES,
    SEVEN_LADDER,
    STANDARD_LADDER,
    VARIANTS,
)
from naparena.stats.boards import SEATINGS_MAX
from naparena.stats.standings import Standings
from tests.helpers import (
    REPO,
    SECOND,
    assert_same_files,
    errors,
    invoke,
    naparena,
    played_matches,
    run_dir_in,
    schema,
    snapshot,
    start_naparena,
    wait_for,
    wait_until_gone,
    write_testbots_tournament,
)


def run_in_process(path: Path, log_dir: Path, workers: int = 1) -> tuple[Path, dict]:
    """What `naparena run` does, minus the terminal: returns the run directory and standings."""
    session = Session.open(path, log_dir=log_dir, workers=workers)
    return session.run_dir.path, session.play()


def wait_for_first_match(proc: subprocess.Popen, log_dir: Path) -> None:
    wait_for(lambda: list(Path(log_dir).glob(f"*/{MATCHES}/*.json")), "the first match log", proc=proc)


# --- runs shared by several tests -----------------------------------------------------

PLAIN_BOTS = ("random", SECOND, "example", "grumpy")
PLAIN_VARIANTS = ("classic", "peep", "purchase", "floater")


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """One tournament run with 1, 2 and 3 workers: (folder, {workers: (run dir, --json stdout)})."""
    folder = tmp_path_factory.mktemp("plain")
    # 5 hands a match: the seating design plays 24 seatings of each deal at a table of four
    write_testbots_tournament(folder, bots=PLAIN_BOTS, variants=PLAIN_VARIANTS, hands=5, seeds=2)
    runs = {}
    for workers in (1, 2, 3):
        done = naparena("run", "t.toml", "--workers", workers, "--log-dir", f"w{workers}", "--json", cwd=folder)
        assert done.returncode == 0, done.stderr
        runs[workers] = (run_dir_in(folder / f"w{workers}"), done.stdout)
    return folder, runs


@pytest.fixture(scope="module")
def misfits(tmp_path_factory):
    """Bots that crash their worker, fault, and get disqualified; with 2 and 3 workers."""
    folder = tmp_path_factory.mktemp("misfits")
    write_testbots_tournament(folder, bots=("random", "crashy", "broken", "grumpy"), hands=12, table=3)
    runs = {}
    for workers in (2, 3):
        done = naparena("run", "t.toml", "--workers", workers, "--log-dir", f"w{workers}", "--json", cwd=folder)
        assert done.returncode == 0, done.stderr
        runs[workers] = (run_dir_in(folder / f"w{workers}"), done.stdout)
    return folder, runs


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    """A head-to-head stopped by its [sprt] test; with 1 and 3 workers."""
    folder = tmp_path_factory.mktemp("sprt")
    write_testbots_tournament(folder, bots=("random", SECOND), variants=("classic", "pagat"), hands=40, seeds=10,
                     sprt={"a": SECOND, "b": "random", "delta": 50.0})
    runs = {}
    for workers in (1, 3):
        done = naparena("run", "t.toml", "--workers", workers, "--log-dir", f"w{workers}", "--json", cwd=folder)
        assert done.returncode == 0, done.stderr
        runs[workers] = (run_dir_in(folder / f"w{workers}"), done.stdout)
    return folder, runs


@pytest.fixture(scope="module")
def every_variant(tmp_path_factory):
    """tournaments/all-variants.toml cut down to 5 hands a match, plus six-handed tables
    (the dealer sits out) and peel's eldest-one rule, so every kind of hand record occurs."""
    folder = tmp_path_factory.mktemp("every-variant")
    write_testbots_tournament(folder)  # for its bots folder
    data = tomllib.loads((REPO / "tournaments" / "all-variants.toml").read_text())
    data["tournament"]["hands"] = 5
    data["bots"] = [{"name": "random"}, {"name": SECOND}]
    (folder / "all.toml").write_text(tomli_w.dumps(data))
    # Six at a table: the dealer sits out. Nobody bids: classic redeals, peel plays 'one'.
    six = write_testbots_tournament(folder / "six", name="six", bots=("shy",), variants=("classic", "peel"),
                           hands=10, table=6)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(plugins.DISABLE_AUTOLOAD_ENV, "1")
        return [run_in_process(folder / "all.toml", folder / "logs", workers=2)[0],
                run_in_process(six, folder / "logs", workers=1)[0]]


# --- determinism ----------------------------------------------------------------------

def test_every_file_and_the_standings_are_the_same_for_one_two_and_three_workers(plain):
    _, runs = plain
    (one, one_json), (two, two_json), (three, three_json) = runs[1], runs[2], runs[3]
    expected = snapshot(one)
    assert len([f for f in expected if f.startswith(MATCHES)]) == 4 * 2 * 24  # variants x seeds x seatings
    assert_same_files(snapshot(two), expected)
    assert_same_files(snapshot(three), expected)
    assert one_json == two_json == three_json
    assert json.loads(one_json) == json.loads(expected[STANDINGS])


def test_faults_happened_in_the_plain_run_so_determinism_covers_them(plain):
    _, runs = plain
    standings = json.loads(runs[1][1])
    grumpy = [row for v in standings["variants"].values() for row in v["bots"] if row["bot"] == "grumpy"]
    assert sum(sum(row["faults"].values()) for row in grumpy) > 0
    assert not standings["disqualified"]


def test_crashes_and_disqualification_replay_the_same_for_two_and_three_workers(misfits):
    _, runs = misfits
    (two, two_json), (three, three_json) = runs[2], runs[3]
    assert_same_files(snapshot(three), snapshot(two))
    assert two_json == three_json
    standings = json.loads(two_json)
    assert list(standings["disqualified"]) == ["broken"]
    logs = [json.loads(f.read_bytes()) for f in sorted((two / MATCHES).glob("*.json"))]
    after = standings["disqualified"]["broken"]["after_match"]
    later = [log for log in logs if log["match"]["index"] > after and "broken" in log["match"]["seats"]]
    assert later, "the disqualified bot's later line-ups must still be played"
    assert all(log["match"]["stand_ins"] == [log["match"]["seats"].index("broken")] for log in later)
    assert not standings["skipped"]
    assert any(log.get("crashes") for log in logs), "crashy must have crashed a worker"
    assert all(log["match"]["index"] == i for i, log in enumerate(logs))


def test_a_decided_sequential_test_skips_the_same_matches_for_one_and_three_workers(sequential):
    _, runs = sequential
    (one, one_json), (three, three_json) = runs[1], runs[3]
    assert_same_files(snapshot(three), snapshot(one))
    assert one_json == three_json
    standings = json.loads(one_json)
    assert standings["sprt"]["verdict"]
    assert standings["skipped"] and all(s["reason"].startswith("sprt decided: ") for s in standings["skipped"])
    skipped_files = [f for f in (one / MATCHES).glob("*.json") if b'"skipped"' in f.read_bytes()]
    assert len(skipped_files) == len(standings["skipped"])


def test_nothing_depends_on_the_global_rng(tmp_path, monkeypatch):
    path = write_testbots_tournament(tmp_path, bots=("random", SECOND, "grumpy"), variants=("classic", "ecarte"),
                                     hands=15)
    random.seed(1)
    calm, calm_standings = run_in_process(path, tmp_path / "calm", workers=1)

    # The global RNG seeded differently and every module-level function made to raise:
    # any use of it by the engine, the runner or a bot would fault or fail the run.
    random.seed(987654321)
    random.random()

    def forbidden(*args, **kwargs):
        raise AssertionError("the global RNG was used")

    for fn in ("random", "randrange", "randint", "choice", "choices", "shuffle", "sample", "uniform",
               "getrandbits", "gauss", "seed"):
        monkeypatch.setattr(random, fn, forbidden)
    for workers in (1, 2):
        disturbed, disturbed_standings = run_in_process(path, tmp_path / f"disturbed{workers}", workers=workers)
        assert_same_files(snapshot(disturbed), snapshot(calm))
        assert disturbed_standings == calm_standings


LATE_BOT = '''
import naparena
from naparena import Bot


class Late(Bot):
    name = "late"
    description = "first legal answer; lives only in the second folder"

    def bid(self, view):
        return view.legal[0]

    def play(self, view):
        return view.legal[0]


@naparena.hookimpl
def register_bots(register):
    register(Late)
'''


def test_a_second_run_in_the_same_process_sees_its_own_drop_in_bots(tmp_path, monkeypatch):
    write_testbots_tournament(tmp_path / "first", bots=("random", "grumpy"), hands=5)
    write_testbots_tournament(tmp_path / "second", bots=("random", "late"), hands=5)
    (tmp_path / "second" / "bots" / "late.py").write_text(LATE_BOT)
    monkeypatch.chdir(tmp_path / "first")
    run_in_process(Path("t.toml"), Path("logs"))
    monkeypatch.chdir(tmp_path / "second")
    _, standings = run_in_process(Path("t.toml"), Path("logs"))
    assert {row["bot"] for row in standings["variants"]["classic"]["bots"]} == {"random", "late"}


def test_hash_seed_changes_no_file(tmp_path):
    write_testbots_tournament(tmp_path, bots=("random", SECOND, "grumpy"), variants=("classic", "misere"), hands=15)
    outputs = []
    for hash_seed in ("1", "2"):
        done = naparena("run", "t.toml", "--workers", 2, "--log-dir", f"h{hash_seed}", "--json",
                        cwd=tmp_path, env={"PYTHONHASHSEED": hash_seed})
        assert done.returncode == 0, done.stderr
        outputs.append((snapshot(run_dir_in(tmp_path / f"h{hash_seed}")), done.stdout))
    assert_same_files(outputs[1][0], outputs[0][0])
    assert outputs[1][1] == outputs[0][1]


# --- interrupted runs -----------------------------------------------------------------

SLOW_MATCHES = 2 * 4 * 6  # variants x seeds x the 6 seatings of (random, slowpoke, random, slowpoke)


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    """A tournament that is slow only when SLOWPOKE_SLEEP is set, and its uninterrupted run."""
    folder = tmp_path_factory.mktemp("slow")
    write_testbots_tournament(folder, bots=("random", "slowpoke"), variants=("classic", "pagat"), hands=14, seeds=4)
    done = naparena("run", "t.toml", "--workers", 2, "--log-dir", "reference", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder, snapshot(run_dir_in(folder / "reference")), done.stdout


def interrupted_run(folder: Path, log_dir: str, send) -> tuple[subprocess.Popen, str, str]:
    """Start a slow run, let it write its first match, then `send(proc)`; return after it ends."""
    proc = start_naparena("run", "t.toml", "--workers", 2, "--log-dir", log_dir, cwd=folder,
                          env={"SLOWPOKE_SLEEP": "0.8"})
    try:
        wait_for_first_match(proc, folder / log_dir)
        send(proc)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    wait_until_gone(proc.pid)
    return proc, out, err


def resume_and_compare(folder: Path, log_dir: str, reference: dict, reference_json: str) -> None:
    run_dir = run_dir_in(folder / log_dir)
    kept = played_matches(run_dir)
    assert 1 <= kept < SLOW_MATCHES, "the run must be interrupted part-way"
    done = naparena("run", "t.toml", "--resume", "--log-dir", log_dir, "--workers", 2, "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert f"{kept} {'match' if kept == 1 else 'matches'} already done" in " ".join(done.stderr.split())
    assert run_dir_in(folder / log_dir) == run_dir, "resume must continue the same run directory"
    assert not list((run_dir / MATCHES).glob("*.tmp*")), "half-written logs must be cleaned away"
    assert_same_files(snapshot(run_dir), reference)
    assert done.stdout == reference_json


def test_resume_after_kill_9_gives_the_same_files_and_standings(slow):
    folder, reference, reference_json = slow

    def kill_9(proc):
        os.killpg(proc.pid, signal.SIGKILL)  # the parent and every worker, no chance to tidy up

    proc, _, _ = interrupted_run(folder, "killed", kill_9)
    assert proc.returncode == -signal.SIGKILL
    resume_and_compare(folder, "killed", reference, reference_json)


@pytest.mark.parametrize("how", ["SIGTERM to the parent", "Ctrl-C to the process group"])
def test_sigterm_and_ctrl_c_stop_cleanly_say_how_to_resume_and_resume_completes(slow, how):
    folder, reference, reference_json = slow
    log_dir = "terminated" if how.startswith("SIGTERM") else "interrupted"

    def send(proc):
        if how.startswith("SIGTERM"):
            os.kill(proc.pid, signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C

    proc, _, err = interrupted_run(folder, log_dir, send)
    assert proc.returncode == 130, err
    message = " ".join(err.split())
    assert "Traceback" not in err
    assert "interrupted" in message
    kept = played_matches(run_dir_in(folder / log_dir))
    assert f"{kept} of {SLOW_MATCHES} matches {'is' if kept == 1 else 'are'} kept" in message
    assert f"Resume with: naparena resume {log_dir}/" in message
    resume_and_compare(folder, log_dir, reference, reference_json)


def test_the_resume_hint_continues_the_interrupted_run(slow):
    folder, _, _ = slow
    proc, _, err = interrupted_run(folder, "hinted", lambda p: os.kill(p.pid, signal.SIGTERM))
    assert proc.returncode == 130
    message = " ".join(err.split())
    hint = shlex.split(message[message.index("Resume with: ") + len("Resume with: "):])
    assert hint[:2] == ["naparena", "resume"]
    done = naparena(*hint[1:], cwd=folder)
    assert done.returncode == 0, done.stderr
    assert played_matches(run_dir_in(folder / "hinted")) == SLOW_MATCHES


# --- verify and report ----------------------------------------------------------------

def test_verify_passes_on_untouched_runs(plain, misfits):
    for run_dir, _ in list(plain[1].values())[:1] + list(misfits[1].values())[:1]:
        result = invoke("verify", run_dir)
        assert result.exit_code == 0, result.output
        assert "verify ok" in result.stdout
        assert f"{played_matches(run_dir)} matches" in result.stdout


def pick_hand(run_dir: Path) -> tuple[Path, dict, int]:
    """The first match log whose hand 2 was played to at least one full trick."""
    for f in sorted((run_dir / MATCHES).glob("*.json")):
        log = json.loads(f.read_bytes())
        if "hands" in log and len(log["hands"]) > 2 and log["hands"][2]["tricks"]:
            return f, log, 2
    raise AssertionError("no suitable hand")


def edit_trick_card(hand):
    leader, plays, _ = hand["tricks"][0]
    held = set(hand["deal"][leader])
    cards = {c for _, c in plays}
    # A card of another seat: the leader cannot have played it, whatever else it held.
    other = next(c for seat, dealt in enumerate(hand["deal"]) if seat != leader for c in dealt
                 if c not in held and c not in cards)
    plays[0][1] = other


def edit_trick_seat(hand):
    plays = hand["tricks"][0][1]
    plays[0][0], plays[1][0] = plays[1][0], plays[0][0]  # the same cards, said to come from the wrong seats


def edit_chip_delta(hand):
    hand["chips"][0] += 1
    hand["chips"][1] -= 1  # still sums as before, so only a replay can tell


def edit_winner(hand):
    winner = hand["tricks"][0][2]
    hand["tricks"][0][2] = next(s for s in range(len(hand["deal"])) if s != winner and hand["deal"][s])


def edit_dealt_card(hand):
    seat = next(s for s, dealt in enumerate(hand["deal"]) if dealt)
    hand["deal"][seat][0], hand["deal"][seat + 1][0] = hand["deal"][seat + 1][0], hand["deal"][seat][0]


@pytest.mark.parametrize("edit", [edit_trick_card, edit_trick_seat, edit_chip_delta, edit_winner, edit_dealt_card])
def test_verify_names_the_match_and_hand_of_a_hand_edited_log(plain, tmp_path, edit):
    run_dir = shutil.copytree(plain[1][1][0], tmp_path / "run")
    f, log, n = pick_hand(run_dir)
    edit(log["hands"][n])
    f.write_text(json.dumps(log, separators=(",", ":")) + "\n")
    result = invoke("verify", run_dir)
    assert result.exit_code == 1, result.output
    problems = " ".join(result.stderr.split())
    assert f"mismatch matches/{f.name}: hand {n}" in problems
    assert "FAILED" in result.stdout
    others = [line for line in result.stderr.splitlines() if line.startswith("mismatch") and f.name not in line]
    assert not others, "only the edited match may be reported"


@pytest.mark.parametrize("field", ["kitty", "final"])
def test_verify_catches_an_edited_match_summary(plain, tmp_path, field):
    run_dir = shutil.copytree(plain[1][1][0], tmp_path / "run")
    f, log, _ = pick_hand(run_dir)
    if field == "kitty":
        log["summary"]["kitty"] += 7
    else:
        log["summary"]["final"][0] += 3
    f.write_text(json.dumps(log, separators=(",", ":")) + "\n")
    result = invoke("verify", run_dir)
    assert result.exit_code == 1
    assert f.name in result.stderr


def test_report_json_equals_the_run_json_standings(plain, misfits, sequential):
    for run_dir, run_json in (plain[1][2], misfits[1][2], sequential[1][3]):
        result = invoke("report", run_dir, "--json")
        assert result.exit_code == 0, result.output
        assert result.stdout == run_json
        assert standings_from_logs(run_dir) == json.loads(run_json)


def test_report_of_an_unfinished_run_says_so_and_counts_what_was_played(plain, tmp_path):
    run_dir = shutil.copytree(plain[1][1][0], tmp_path / "run")
    for f in sorted((run_dir / MATCHES).glob("*.json"))[8:]:
        f.unlink()
    (run_dir / STANDINGS).unlink()  # written only when a run finishes
    result = invoke("report", run_dir, "--json")
    assert result.exit_code == 0
    assert "unfinished" in result.stderr
    assert json.loads(result.stdout)["matches"] == 8


# --- memory: the parent keeps totals, not hands ---------------------------------------

def footprint(value) -> int:
    """Containers and their items, counted recursively: what grows when data is kept."""
    if isinstance(value, dict):
        return 1 + sum(footprint(k) + footprint(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set)):
        return 1 + sum(footprint(v) for v in value)
    return 1


def fake_summary(hands: int, seats: int = 4) -> dict:
    seat = {"chips": 3 * hands, "hands": hands, "bidder_hands": hands // 3, "bidder_chips": hands,
            "defender_chips": 2 * hands, "contracts": {"three": [hands // 3, hands // 4]}, "revokes": 1,
            "faults": {"exception": 1}, "decisions": 4 * hands}
    return {"seats": [copy.deepcopy(seat) for _ in range(seats)], "final": [0] * seats, "kitty": 0,
            "hands": hands, "dealer": 0, "hand_chips": [[3, -3, 1, -1]] * hands, "deal_keys": [7] * hands}


def fill(standings: Standings, deal_sets: int, rotations: int, hands: int) -> None:
    index = 0
    for table_no in range(deal_sets):
        for rotation in range(rotations):
            spec = MatchSpec(index, "classic", 0, table_no, rotation, 0, ("a", "b", "a", "b"), hands)
            standings.add(spec, fake_summary(hands), duplicate=True)
            index += 1
        standings.close_unit(standings.unit_of(spec))


def state(standings: Standings) -> int:
    return footprint(vars(standings)) + footprint(vars(standings.book))


def test_standings_memory_grows_with_deal_sets_not_with_hands_or_matches():
    few_hands, many_hands, many_matches, more_sets = (Standings(["classic"], ["a", "b"]) for _ in range(4))
    fill(few_hands, deal_sets=3, rotations=2, hands=10)
    fill(many_hands, deal_sets=3, rotations=2, hands=20_000)
    fill(many_matches, deal_sets=3, rotations=200, hands=10)
    fill(more_sets, deal_sets=30, rotations=2, hands=10)
    assert state(many_hands) == state(few_hands)
    assert state(many_matches) == state(few_hands)
    assert state(more_sets) > state(few_hands)  # the measure does see what is kept
    assert many_matches.matches == 600 and len(many_matches.book.bots["classic"]["a"]) == 3
    # every board was counted (a stratum: table × SEATINGS_MAX + deal set, then the seats held)
    assert many_hands.book.bots["classic"]["a"][(2 * SEATINGS_MAX, 4)].n == 20_000


class StopAfter(Quiet):
    """A watcher that interrupts a run as Ctrl-C would, once `after` matches are booked."""

    def __init__(self, after: int):
        self.after, self.done_before = after, None

    def started(self, session, done: int) -> None:
        self.done_before = done

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        if matches >= self.after:
            raise KeyboardInterrupt


def test_a_session_interrupted_resumes_from_its_run_directory_to_the_same_files(tmp_path, run_session):
    path = write_testbots_tournament(tmp_path, hands=5, seeds=2)
    whole_dir, whole = run_session(path, tmp_path / "whole", workers=1)
    stop = StopAfter(3)
    cut = Session.open(path, tmp_path / "cut", workers=1, watcher=stop)
    with pytest.raises(KeyboardInterrupt):
        cut.play()
    assert stop.done_before == 0 and not (tmp_path / "cut" / STANDINGS).exists()
    again = StopAfter(10**9)
    resumed = Session.resume(tmp_path / "cut", workers=1, watcher=again)
    assert resumed.play() == whole
    assert again.done_before >= 3
    assert snapshot(tmp_path / "cut") == snapshot(whole_dir)


def test_a_worker_sends_back_the_summary_not_the_hands(tmp_path):
    path = write_testbots_tournament(tmp_path, hands=40)
    runner = Session.open(path, tmp_path / "run", workers=1)
    runner.prepare()
    job = runner.job(runner.specs[0])
    assert isinstance(job, Job)
    returned = run_job(job)
    written = json.loads(runner.run_dir.match_path(0).read_bytes())
    assert len(written["hands"]) == 40
    assert returned == written["summary"]
    assert set(returned) == {"seats", "final", "kitty", "hands", "dealer", "hand_chips", "deal_keys"}
    assert returned["hands"] == 40 and len(returned["hand_chips"]) == 40


# --- JSON schemas ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["match", "manifest", "standings"])
def test_schemas_are_valid_draft_2020_12_and_ship_in_the_package(name):
    s = schema(name)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(s)


def all_run_files(run_dirs):
    for run_dir in run_dirs:
        yield "manifest", run_dir / MANIFEST
        yield "standings", run_dir / STANDINGS
        for f in sorted((run_dir / MATCHES).glob("*.json")):
            yield "match", f


@pytest.mark.slow
def test_every_file_of_real_runs_matches_its_schema(every_variant, plain, misfits, sequential):
    run_dirs = every_variant + [plain[1][1][0], misfits[1][2][0], sequential[1][1][0]]
    seen_keys, seen_results, seen_pre, checked = set(), set(), set(), 0
    for name, f in all_run_files(run_dirs):
        data = json.loads(f.read_bytes())
        assert not errors(name, data), (f, errors(name, data))
        checked += 1
        for hand in data.get("hands", ()) if name == "match" else ():
            seen_keys |= set(hand)
            seen_results.add(hand["result"])
            seen_pre |= {kind for _, kind, _ in hand.get("pre", ())}
    for _, run_json in (plain[1][1], sequential[1][1]):
        assert not errors("standings", json.loads(run_json))  # what --json prints
    # The runs must have produced every optional part of a hand record, else this proves little.
    assert seen_keys >= {"peep_card", "floater", "garnet", "pre", "trick", "revoke", "faults"}
    assert seen_results == {"made", "lost", "revoke", "passed"}
    assert seen_pre >= {"exchange", "peep", "floater_peep", "garnet", "peep_exchange"}
    assert checked > 60


def test_the_runs_cover_skipped_files_crashes_and_sitting_out(every_variant, misfits, sequential):
    runs = every_variant + [misfits[1][2][0], sequential[1][1][0]]
    logs = [json.loads(f.read_bytes()) for name, f in all_run_files(runs) if name == "match"]
    assert any("skipped" in log for log in logs)
    assert any("stand_ins" in log["match"] for log in logs)
    assert any(log.get("crashes") for log in logs)
    assert any(any(seat.get("crashed_at") is not None for seat in log["summary"]["seats"])
               for log in logs if "summary" in log)
    assert any([] in hand["deal"] for log in logs for hand in log.get("hands", ()))
    assert any(hand["contract"] == "one" for log in logs for hand in log.get("hands", ()))


# Hand-broken logs: each must be rejected. (name, what to do to a played match log)
def _hand(log):
    return next(h for h in log["hands"] if h["tricks"])


BROKEN_MATCHES = [
    ("card 52 in a deal", lambda log: _hand(log)["deal"][0].__setitem__(0, 52)),
    ("negative card in a trick", lambda log: _hand(log)["tricks"][0][1][0].__setitem__(1, -1)),
    ("card named, not numbered", lambda log: _hand(log)["tricks"][0][1][0].__setitem__(1, "AS")),
    ("play without its seat", lambda log: _hand(log)["tricks"][0][1].__setitem__(0, 12)),
    ("result 'won'", lambda log: _hand(log).__setitem__("result", "won")),
    ("unknown bid", lambda log: _hand(log)["bids"].append([0, "grand"])),
    ("seat 7", lambda log: _hand(log).__setitem__("dealer", 7)),
    ("trick without winner", lambda log: _hand(log)["tricks"][0].pop()),
    ("fault of three parts", lambda log: _hand(log).__setitem__("faults", [[0, 1, "bid"]])),
    ("fault of an unknown kind", lambda log: _hand(log).__setitem__("faults", [[0, 1, "sulk", "exception: x"]])),
    ("revoke result without revoking seat", lambda log: _hand(log).__setitem__("result", "revoke")),
    ("unknown key in a hand", lambda log: _hand(log).__setitem__("comment", "nice")),
    ("missing chips", lambda log: _hand(log).pop("chips")),
    ("unknown top-level key", lambda log: log.__setitem__("pid", 1234)),
    ("missing summary", lambda log: log.pop("summary")),
    ("format 1 (an older log)", lambda log: log.__setitem__("format", 1)),
    ("unknown rules option", lambda log: log["rules"].__setitem__("jokers", True)),
    ("rules value out of range", lambda log: log["rules"].__setitem__("deal", "4-1")),
    ("unknown fault kind in summary", lambda log: log["summary"]["seats"][0]["faults"].__setitem__("oops", 1)),
    ("seed beyond 64 bits", lambda log: log.__setitem__("seed", 2 ** 64)),
]


@pytest.mark.parametrize("edit", [e for _, e in BROKEN_MATCHES], ids=[n for n, _ in BROKEN_MATCHES])
def test_hand_broken_match_logs_are_rejected(plain, edit):
    f = plain[1][1][0] / MATCHES / "000000.json"
    log = json.loads(f.read_bytes())
    assert not errors("match", log)
    edit(log)
    assert errors("match", log)


def test_hand_broken_skipped_manifest_and_standings_files_are_rejected(misfits, sequential):
    run_dir = misfits[1][2][0]
    skipped = next(json.loads(f.read_bytes()) for f in sorted((sequential[1][1][0] / MATCHES).glob("*.json"))
                   if b'"skipped"' in f.read_bytes())
    assert not errors("match", skipped)
    assert errors("match", {**skipped, "hands": []})
    assert errors("match", {**skipped, "skipped": "felt like it"})
    manifest = json.loads((run_dir / MANIFEST).read_bytes())
    assert not errors("manifest", manifest)
    assert errors("manifest", {k: v for k, v in manifest.items() if k != "config_hash"})
    assert errors("manifest", {**manifest, "started": "2026-01-01T00:00:00"})
    broken = copy.deepcopy(manifest)
    broken["tournament"]["workers"] = 2  # not part of what a run was
    assert errors("manifest", broken)
    standings = json.loads((run_dir / STANDINGS).read_bytes())
    assert not errors("standings", standings)
    broken = copy.deepcopy(standings)
    next(iter(broken["variants"].values()))["bots"][0]["ci95"] = 1.5
    assert errors("standings", broken)
    assert errors("standings", {**standings, "unit": "match"})


def test_schemas_agree_with_the_code():
    match, manifest = schema("match"), schema("manifest")
    rules = match["$defs"]["rules"]
    assert rules == manifest["$defs"]["rules"]
    assert set(rules["required"]) == set(rules["properties"]) == set(OPTION_NAMES)
    for option, allowed in CHOICES.items():
        assert rules["properties"][option]["enum"] == list(allowed), option
    contracts = set(STANDARD_LADDER) | set(SEVEN_LADDER) | set(FLOATER_LADDER)
    assert set(match["$defs"]["contract"]["enum"]) == contracts
    assert set(match["$defs"]["bid"]["enum"]) == contracts - {"one"} | {"pass"}
    assert set(schema("standings")["$defs"]["contract"]["enum"]) == contracts
    config = manifest["$defs"]["config"]
    assert set(config["properties"]) == (set(SETTINGS) - {"workers", "scheduler"}
                                         | {"bots", "variants", "sprt", "seats"} | set(FORMAT_KEYS))
    assert set(config["properties"]["seats"]["properties"]) == set(SEAT_KEYS) | {"sandbox", "cores"}
    assert set(config["properties"]["bots"]["items"]["properties"]) == set(BOT_KEYS)
    assert set(config["properties"]["sprt"]["properties"]) == set(SPRT_KEYS)
    base = config["properties"]["variants"]["items"]["properties"]["base"]
    assert base["enum"] == list(VARIANTS)
    rules_only = jsonschema.Draft202012Validator({"$ref": "#/$defs/rules", "$defs": match["$defs"]})
    for variant in VARIANTS.values():  # every shipped variant's options are valid rules
        options = {**variant.options, "bids": list(variant.options["bids"])}
        assert not list(rules_only.iter_errors(options)), variant.name
