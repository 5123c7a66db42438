"""Forged results: four forgeries built with naparena's own engine, with summaries,
standings and the manifest's hash recomputed, pass plain `naparena verify` (the control);
`verify --rerun`, which plays every match again, or `--tournament FILE`, which requires
the run the file describes, fails each. An honest run passes both, inline and with seat
processes; a bot whose code changed since the run is named.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from naparena.arena.match.play import play_job
from naparena.arena.records.ledger import load_standings
from naparena.arena.records.rundir import MANIFEST, MATCHES, RunDir, config_hash
from naparena.arena.rerun import recorded_tournament, time_dependent
from naparena.arena.session import Session, registry_for
from naparena.arena.setup.reader import tournament_from_record
from naparena.arena.setup.schedule import MatchSpec, schedule, total_hands
from naparena.cli import app

PLAIN = Path(__file__).resolve().parent / "seat_programs" / "plain.py"  # an external bot

STEADY = '''
from naparena import Bot, hookimpl


class Steady(Bot):
    name = "steady"
    description = "the first legal answer, always"

    def bid(self, view):
        return view.legal[0]

    def play(self, view):
        return view.legal[0]


@hookimpl
def register_bots(register):
    register(Steady)
'''

SLOW_ONCE = '''
import os
import sys
import time

from naparena import Bot, hookimpl


class SlowOnce(Bot):
    name = "slow-once"
    description = "overruns its time on its first bid of the first match, then plays the first legal card"

    def start_match(self, info):
        # Slow only on a "busy machine": where the flag is set, or always in a seat process.
        seat_process = getattr(sys.modules["__main__"].__spec__, "name", "") == "naparena.bots.serve"
        busy = os.path.exists(os.path.join(os.path.dirname(__file__), "busy")) or seat_process
        self.asked = info["match"] != 0 or not busy

    def bid(self, view):
        if not self.asked:
            self.asked = True
            time.sleep(30)
        return view.legal[0]

    def play(self, view):
        return view.legal[0]


@hookimpl
def register_bots(register):
    register(SlowOnce)
'''


def write_tournament(folder: Path, isolation: str = "inline", **extra) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bots").mkdir(exist_ok=True)
    (folder / "bots" / "steady.py").write_text(STEADY)
    data = {"tournament": {"name": "forge", "seed": 11, "seeds": 2, "hands": 6, "table": 3,
                           "duplicate": True, "isolation": isolation, **extra},
            "bots": [{"name": "heuristic", "params": {"aggression": 0.0}}, {"name": "cautious"},
                     {"name": "steady"}],
            "variants": [{"name": "classic"}]}
    (folder / "t.toml").write_text(tomli_w.dumps(data))
    return folder / "t.toml"


def play(file: Path) -> Path:
    result = CliRunner().invoke(app, ["run", str(file), "--workers", "2", "--log-dir", str(file.parent / "logs")])
    assert result.exit_code == 0, result.output
    [run_dir] = (file.parent / "logs").iterdir()
    return run_dir


def verify(run_dir: Path, *flags: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", str(run_dir), "--workers", "2", *flags])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> Path:
    return play(write_tournament(tmp_path_factory.mktemp("forge") / "a"))


@pytest.fixture
def forged(honest: Path, tmp_path: Path) -> Path:
    """A copy of the honest run for a forger to work on (its tournament file stays the original)."""
    return Path(shutil.copytree(honest, tmp_path / honest.name))


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


def match_files(run_dir: Path) -> list[Path]:
    return sorted((run_dir / MATCHES).glob("*.json"))


def restand(run_dir: Path) -> None:
    """What a forger does last: the standings the forged match logs give."""
    RunDir(run_dir).write_standings(load_standings(run_dir).result())


def rewrite_manifest(run_dir: Path, change) -> None:
    """Change the manifest's configuration and recompute everything that follows from it."""
    data = load(run_dir / MANIFEST)
    change(data["tournament"])
    t = tournament_from_record(data["tournament"], "manifest.json")
    data.update(config_hash=config_hash(t), seed=t.seed, matches=len(schedule(t)), hands=total_hands(t))
    RunDir(run_dir).write_manifest(data)


# --- the four forgeries ---------------------------------------------------------------

def frame_a_fault(run_dir: Path) -> str:
    """The last match played again by the engine with a crash framed on the first bidder of
    its first hand (a crash replay, as the pool does for a seat that really died)."""
    path = match_files(run_dir)[-1]
    log = load(path)
    t = recorded_tournament(RunDir(run_dir))
    registry = registry_for(t)
    session = Session(t, registry, run_dir)
    spec = MatchSpec.from_dict(log["match"])
    innocent = log["hands"][0]["bids"][0][0]
    job = session.job(spec, [[0, innocent, 0, "crash: seat process exited with code 1"]])
    job = dataclasses.replace(job, path=None)  # Job is frozen; no path: its bytes come back, not written by the worker
    path.write_bytes(bytes(play_job(job, registry)))
    restand(run_dir)
    return path.name


def swap_rotations(run_dir: Path) -> str:
    """Two seatings of one duplicate deal set trade their hands and summaries."""
    first, second = match_files(run_dir)[:2]
    a, b = load(first), load(second)
    assert a["seed"] == b["seed"] and a["match"]["seats"] != b["match"]["seats"]
    for key in ("hands", "summary", "crashes"):
        a[key], b[key] = b[key], a[key]
    first.write_text(json.dumps(a))
    second.write_text(json.dumps(b))
    restand(run_dir)
    return first.name


def truncate(run_dir: Path) -> str:
    """The second seed stream's matches dropped, the manifest made to say one stream."""
    keep = len(match_files(run_dir)) // 2
    for path in match_files(run_dir)[keep:]:
        path.unlink()
    rewrite_manifest(run_dir, lambda config: config.update(seeds=1))
    restand(run_dir)
    return "seeds"


def rewrite_params(run_dir: Path) -> str:
    """The heuristic bot's aggression rewritten in the manifest and every match header."""
    def bolder(bot: dict) -> None:
        if bot["name"] == "heuristic":
            bot["params"]["aggression"] = 1.8
    rewrite_manifest(run_dir, lambda config: [bolder(b) for b in config["bots"]])
    for path in match_files(run_dir):
        log = load(path)
        for bot in log["bots"]:
            bolder(bot)
        path.write_text(json.dumps(log))
    restand(run_dir)
    return "aggression"


@pytest.mark.parametrize("forge, caught_by", [
    (frame_a_fault, "--rerun"),
    (swap_rotations, "--rerun"),
    (truncate, "--tournament"),
    (rewrite_params, "--rerun"),
])
def test_a_forgery_passes_verify_but_not_rerun_or_tournament(forge, caught_by, forged, honest):
    named = forge(forged)
    code, output = verify(forged)
    assert code == 0, output  # the control: plain verify is fooled
    code, output = verify(forged, "--rerun", "--tournament", str(honest.parent.parent / "t.toml"))
    assert code == 1, output
    assert named in output
    flag = ["--rerun"] if caught_by == "--rerun" else ["--tournament", str(honest.parent.parent / "t.toml")]
    code, output = verify(forged, *flag)
    assert code == 1, output
    assert ("re-run FAILED" if caught_by == "--rerun" else "tournament FAILED") in output


def test_a_truncated_run_is_an_honest_smaller_run_so_only_its_file_tells(forged, honest):
    truncate(forged)
    code, output = verify(forged, "--rerun")
    assert code == 0, output  # every file is what one stream plays
    code, output = verify(forged, "--tournament", str(honest.parent.parent / "t.toml"))
    assert code == 1
    assert "'seeds' is 1 in the run, 2 in" in output


def test_rewritten_params_are_named_by_the_tournament_file(forged, honest):
    rewrite_params(forged)
    code, output = verify(forged, "--tournament", str(honest.parent.parent / "t.toml"))
    assert code == 1
    assert "bot 'heuristic': params {'aggression': 1.8} in the run, {'aggression': 0.0} in the file" in output


def test_a_framed_fault_is_named_by_file(forged):
    name = frame_a_fault(forged)
    code, output = verify(forged, "--rerun")
    assert code == 1
    assert f"{MATCHES}/{name}: differs from its re-run: 'crashes'" in output


# --- honest runs ----------------------------------------------------------------------

def test_an_honest_run_passes_both(honest):
    code, output = verify(honest, "--rerun", "--tournament", str(honest.parent.parent / "t.toml"))
    assert code == 0, output
    assert "re-run ok: 12 matches compared" in output
    assert "tournament ok: 0 differences" in output


@pytest.mark.slow
def test_an_honest_run_with_seat_processes_passes_both(tmp_path):
    file = write_tournament(tmp_path, isolation="process")
    run_dir = play(file)
    code, output = verify(run_dir, "--rerun", "--tournament", str(file))
    assert code == 0, output
    assert "re-run ok: 12 matches compared" in output


def test_an_unfinished_run_is_compared_as_far_as_it_went(forged):
    for path in match_files(forged)[7:]:
        path.unlink()
    (forged / "standings.json").unlink()
    code, output = verify(forged, "--rerun")
    assert code == 0, output
    assert "re-run ok: 7 matches compared" in output


def test_a_bot_whose_code_changed_is_named(tmp_path):
    file = write_tournament(tmp_path)
    run_dir = play(file)
    (tmp_path / "bots" / "steady.py").write_text(STEADY.replace("view.legal[0]", "view.legal[-1]"))
    code, output = verify(run_dir, "--rerun")
    assert code == 1
    assert "cannot re-run bot 'steady': its code hash is" in output
    assert "drop-in file steady.py" in output


def test_a_missing_bot_is_named(tmp_path):
    file = write_tournament(tmp_path)
    run_dir = play(file)
    (tmp_path / "bots" / "steady.py").unlink()
    code, output = verify(run_dir, "--rerun")
    assert code == 1
    assert "cannot re-run bot 'steady': no bot 'steady' is installed or in the drop-in folder" in output


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_a_logged_time_out_is_taken_as_given(tmp_path, isolation):
    """The slow bot overran in the run. The re-run faults it at the same decision: inline it
    is asked again (its own state moves on as it did) and faulted whatever it answers; a
    seat process is ended unasked, as it was killed then. The files are the same. Inline,
    the bot is fast in the re-run (the "machine" is no longer busy), so without the logged
    time-out taken as given the re-run would differ."""
    file = write_tournament(tmp_path, isolation, timeout=2.0, seeds=1, hands=2)
    (tmp_path / "bots" / "slow.py").write_text(SLOW_ONCE)
    data = load_toml(file)
    data["bots"][2] = {"name": "slow-once"}
    file.write_text(tomli_w.dumps(data))
    (tmp_path / "bots" / "busy").touch()
    run_dir = play(file)
    (tmp_path / "bots" / "busy").unlink()
    logs = [load(p) for p in match_files(run_dir)]
    assert [bool(time_dependent(log)[1]) for log in logs] == [True] + [False] * (len(logs) - 1)
    assert bool(logs[0]["crashes"]) == (isolation == "process")  # a seat process is killed for it
    code, output = verify(run_dir, "--rerun")
    assert code == 0, output
    assert "1 time-outs taken as given" in output
    assert "taken as given matches/000000.json: hand 0" in output


def load_toml(file: Path) -> dict:
    return tomllib.loads(file.read_text())


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    code, output = verify(tmp_path / "nowhere", "--rerun")
    assert code == 2
    assert "not a run directory" in output and "Traceback" not in output


@pytest.mark.slow
def test_a_missing_external_program_is_named(tmp_path):
    program = tmp_path / "plain-bot"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {PLAIN} \"$@\"\n")
    program.chmod(0o755)
    file = write_tournament(tmp_path, seeds=1, hands=2)
    data = load_toml(file)
    data["bots"][2] = {"name": "plain", "command": ["plain-bot"]}
    data["seats"] = {"sandbox": "off"}  # the script runs a program its command line does not name
    file.write_text(tomli_w.dumps(data))
    run_dir = play(file)
    program.unlink()
    code, output = verify(run_dir, "--rerun")
    assert code == 1
    assert "cannot re-run bot 'plain': its program plain-bot is missing" in output


BROKEN = '''
from naparena import Bot, hookimpl


class Broken(Bot):
    name = "broken"
    description = "bids four when it can, then raises on every card"

    def bid(self, view):
        return "four" if "four" in view.legal else "pass"

    def play(self, view):
        raise RuntimeError("no cards today")


@hookimpl
def register_bots(register):
    register(Broken)
'''


@pytest.mark.slow
def test_a_run_with_faults_skips_and_stand_ins_re_runs_the_same(tmp_path):
    """Disqualified bots, skipped stubs, the stand-in, a gathered pack and Sir Garnet: the
    re-run books them all in schedule order as the run did."""
    file = write_tournament(tmp_path, seeds=1, hands=8, duplicate=False, max_fault_share=0.3)
    (tmp_path / "bots" / "broken.py").write_text(BROKEN)
    data = load_toml(file)
    data["bots"] += [{"name": "broken"}, {"name": "broken", "alias": "wrecked"}]
    data["variants"] = [{"name": "purchase"}, {"name": "sir-garnet"}]
    file.write_text(tomli_w.dumps(data))
    result = CliRunner().invoke(app, ["run", str(file), "--workers", "2", "--log-dir", str(tmp_path / "logs")])
    assert result.exit_code == 3, result.output  # finished, with skipped matches
    [run_dir] = (tmp_path / "logs").iterdir()
    assert any("skipped" in load(p) for p in match_files(run_dir))
    assert any(load(p)["match"].get("stand_ins") for p in match_files(run_dir))
    code, output = verify(run_dir, "--rerun", "--tournament", str(file))
    assert code == 0, output
    assert f"re-run ok: {len(match_files(run_dir))} matches compared" in output


def test_an_unreadable_tournament_file_is_bad_input(honest, tmp_path):
    code, output = verify(honest, "--tournament", str(tmp_path / "missing.toml"))
    assert code == 2
    assert "missing.toml" in output and "Traceback" not in output


def test_verify_tournament_reads_its_file_before_replaying_the_run(honest, tmp_path):
    code, output = verify(honest, "--tournament", str(tmp_path / "nosuch.toml"))
    assert code == 2
    assert "nosuch.toml" in output and "verify ok" not in output and "replayed" not in output


def test_a_changed_seed_is_one_difference(honest, tmp_path):
    data = tomllib.loads((honest.parent.parent / "t.toml").read_text())
    data["tournament"]["seed"] = 12
    (tmp_path / "bots").mkdir()
    shutil.copy(honest.parent.parent / "bots" / "steady.py", tmp_path / "bots")
    (tmp_path / "t.toml").write_text(tomli_w.dumps(data))
    code, output = verify(honest, "--tournament", str(tmp_path / "t.toml"))
    assert code == 1, output
    assert output.count("'seed' is 11 in the run, 12 ") == 1
    assert "tournament FAILED: 1 differences" in output
    # Told from the manifest, before the long replay of every hand.
    assert output.index("tournament FAILED") < output.index("verify ok")


# --- signed runs ------------------------------------------------------------------------

def frame_a_last_hand_time_out(run_dir: Path) -> str:
    """The last match played again with a time-out framed on the first bidder of its last
    hand, as a re-run takes a logged time-out as given: nothing replays differently."""
    path = match_files(run_dir)[-1]
    log = load(path)
    t = recorded_tournament(RunDir(run_dir))
    registry = registry_for(t)
    session = Session(t, registry, run_dir)
    last = log["hands"][-1]
    framed = [last["n"], last["bids"][0][0], 0, f"time-out: no answer within {t.timeout:g} s"]
    session.given[log["match"]["index"]] = ([], [framed])
    job = session.job(MatchSpec.from_dict(log["match"]))
    job = dataclasses.replace(job, path=None)  # Job is frozen; no path: its bytes come back, not written by the worker
    path.write_bytes(bytes(play_job(job, registry)))
    restand(run_dir)
    return path.name


@pytest.fixture(scope="module")
def signed(tmp_path_factory) -> tuple[Path, Path]:
    """An honest run signed by its organizer, and the organizer's public key file."""
    pytest.importorskip("cryptography", reason="needs the sign extra")
    folder = tmp_path_factory.mktemp("signed")
    made = CliRunner().invoke(app, ["keygen", str(folder / "organizer.key")])
    assert made.exit_code == 0, made.output
    file = write_tournament(folder / "a")
    result = CliRunner().invoke(app, ["run", str(file), "--workers", "2", "--log-dir", str(folder / "a" / "logs"),
                                      "--sign", str(folder / "organizer.key")])
    assert result.exit_code == 0, result.output
    [run_dir] = (folder / "a" / "logs").iterdir()
    return run_dir, folder / "organizer.key.pub"


def test_a_framed_last_hand_time_out_is_caught_on_a_signed_run(signed, tmp_path):
    honest, public = signed
    code, output = verify(honest, "--signed-by", str(public))
    assert code == 0 and "signature ok" in output, output
    forged = Path(shutil.copytree(honest, tmp_path / honest.name))
    name = frame_a_last_hand_time_out(forged)
    assert any(str(f[3]).startswith("time-out") for f in load(forged / MATCHES / name)["hands"][-1]["faults"])
    # The control: every check that takes time as given is fooled.
    code, output = verify(forged, "--rerun", "--tournament", str(honest.parent.parent / "t.toml"))
    assert code == 0, output
    code, output = verify(forged, "--signed-by", str(public))
    assert code == 1
    assert f"{MATCHES}/{name}: changed since it was signed" in " ".join(output.split())
    assert "standings.json: changed since it was signed" in " ".join(output.split())
    # Signing the forgery again takes the organizer's private key; the forger's own is named.
    made = CliRunner().invoke(app, ["keygen", str(tmp_path / "forger.key")])
    assert made.exit_code == 0
    from naparena.arena.records.signing import load_private, sign_run
    sign_run(forged, load_private(tmp_path / "forger.key"))
    code, output = verify(forged, "--signed-by", str(public))
    assert code == 1 and "not by ed25519:" in output


def test_a_signature_names_files_added_removed_or_a_changed_list(signed, tmp_path):
    honest, public = signed
    copy = Path(shutil.copytree(honest, tmp_path / honest.name))
    first, *_, last = match_files(copy)
    shutil.copy(last, copy / MATCHES / "000099.json")
    first.unlink()
    code, output = verify(copy, "--signed-by", str(public))
    said = " ".join(output.split())
    assert code == 1
    assert f"{MATCHES}/{first.name}: missing, though it was signed" in said
    assert f"{MATCHES}/000099.json: not signed" in said
    signature = json.loads((copy / "signature.json").read_text())
    signature["files"][f"{MATCHES}/000099.json"] = signature["files"][f"{MATCHES}/{last.name}"]
    (copy / "signature.json").write_text(json.dumps(signature))
    code, output = verify(copy, "--signed-by", str(public))
    assert code == 1 and "the list was changed" in output


def test_an_unsigned_run_says_it_is_unsigned(honest, signed):
    _, public = signed
    code, output = verify(honest)
    assert code == 0 and "signature: none (the run is unsigned)" in output
    code, output = verify(honest, "--signed-by", str(public))
    assert code == 1 and "the run is unsigned" in " ".join(output.split())


def test_a_bad_key_is_one_message_before_anything_is_played(signed, tmp_path):
    honest, public = signed
    (tmp_path / "not-a-key").write_text("hello")
    for args in (["verify", str(honest), "--signed-by", str(tmp_path / "not-a-key")],
                 ["verify", str(honest), "--signed-by", "ed25519:AAAA"],
                 ["verify", str(honest), "--signed-by", str(tmp_path / "nowhere.pub")],
                 ["run", str(honest.parent.parent / "t.toml"), "--sign", str(public),
                  "--log-dir", str(tmp_path / "logs")]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert result.stderr.startswith("error: --sign") and "verify ok" not in result.output
    assert not (tmp_path / "logs").exists()
    again = CliRunner().invoke(app, ["keygen", str(public.with_suffix(""))])
    assert again.exit_code == 2 and "never overwrites" in again.stderr
    for where in (tmp_path, tmp_path / "nowhere" / "k.key"):
        result = CliRunner().invoke(app, ["keygen", str(where)])
        assert result.exit_code == 2 and result.stderr.startswith("error:"), result.output
        assert "Traceback" not in result.output


def test_a_run_resumed_with_sign_is_signed_whole(signed, tmp_path):
    honest, public = signed
    copy = Path(shutil.copytree(honest, tmp_path / honest.name))
    for path in match_files(copy)[5:]:
        path.unlink()
    for name in ("standings.json", "signature.json"):
        (copy / name).unlink()
    resumed = CliRunner().invoke(app, ["resume", str(copy), "--workers", "1", "--sign",
                                       str(public.with_suffix(""))])
    assert resumed.exit_code == 0, resumed.output
    code, output = verify(copy, "--signed-by", str(public))
    assert code == 0 and "signature ok" in output, output
    assert json.loads((copy / "signature.json").read_text())["files"] == \
        json.loads((honest / "signature.json").read_text())["files"]
