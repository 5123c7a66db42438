"""A signature vouches only for what was checked. A run signed as it goes (run --sign) is
signed as far as it went when interrupted; `resume --sign` holds every file an earlier
session wrote to that record, or replays it, and refuses by name a file changed while the
run was interrupted, before playing anything. Plain `verify` says when a signed run lost
its signature, and a private key others may read is refused, as ssh refuses it."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from naparena.arena.match.play import play_job
from naparena.arena.records.rundir import MATCHES, SIGNATURE, STANDINGS, RunDir
from naparena.arena.rerun import recorded_tournament
from naparena.arena.session import Session, registry_for
from naparena.arena.setup.schedule import MatchSpec
from naparena.cli import app
from tests.helpers import errors, flat, start_naparena, wait_for, write_tournament

pytest.importorskip("cryptography", reason="needs the sign extra")


def invoke(*args) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, flat(result.output)


def matches(run_dir: Path) -> list[Path]:
    return sorted((run_dir / MATCHES).glob("*.json"))


def frame_a_time_out(path: Path) -> None:
    """The match played again by the engine with a time-out framed on the first bidder of its
    last hand, taken as given as a re-run takes one: it replays as logged."""
    run_dir = path.parent.parent
    log = json.loads(path.read_bytes())
    t = recorded_tournament(RunDir(run_dir))
    registry = registry_for(t)
    session = Session(t, registry, run_dir)
    last = log["hands"][-1]
    framed = [last["n"], last["bids"][0][0], 0, f"time-out: no answer within {t.timeout:g} s"]
    session.given[log["match"]["index"]] = ([], [framed])
    job = dataclasses.replace(session.job(MatchSpec.from_dict(log["match"])), path=None)
    path.write_bytes(bytes(play_job(job, registry)))


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("keys")
    code, output = invoke("keygen", folder / "organizer.key")
    assert code == 0, output
    return folder / "organizer.key", folder / "organizer.key.pub"


#: A bot that plays the first legal answer, and waits at the start of its third match
#: until its folder holds a file `open`: the run is interrupted there, whatever the
#: machine's speed, and resumed with the gate open.
GATE = '''
import os
import time

import naparena
from naparena import Bot


class Gate(Bot):
    name = "gate"

    def start_match(self, info):
        while info["match"] >= 2 and not os.path.exists(os.path.join(os.path.dirname(__file__), "open")):
            time.sleep(0.05)

    def bid(self, view):
        return view.legal[0]

    play = peep = exchange = garnet = garnet_discard = trumps = bid
    floater_peep = peep_exchange = floater_discard = bid


@naparena.hookimpl
def register_bots(register):
    register(Gate)
'''


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory, keys) -> Path:
    """`naparena run t.toml --sign KEY`, Ctrl-C once its first matches are written (the
    third waits at its gate: the tournament's time limit is longer than any wait here)."""
    key, _ = keys
    folder = tmp_path_factory.mktemp("interrupted")
    write_tournament(folder, name="t", seeds=3, hands=8, bots=("random", "gate"), drop_ins={"gate": GATE},
                     example=False, timeout=3600.0)
    run = start_naparena("run", "t.toml", "--workers", "1", "--sign", key, cwd=folder)
    wait_for(lambda: len(list((folder / "logs").glob(f"*/{MATCHES}/*.json"))) >= 2, "two matches to be written",
             proc=run)
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    [run_dir] = (folder / "logs").iterdir()
    assert not (run_dir / STANDINGS).exists(), "the run finished before Ctrl-C"
    assert "(unfinished) with ed25519:" in flat(err)
    (folder / "bots" / "open").touch()  # what is resumed plays through
    return run_dir


def copy(run_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run_dir, tmp_path / run_dir.name))


def test_an_interrupted_signed_run_is_signed_as_far_as_it_went(interrupted, keys):
    _, public = keys
    signature = json.loads((interrupted / SIGNATURE).read_bytes())
    assert signature["complete"] is False and errors("signature", signature) == []
    manifest = json.loads((interrupted / "manifest.json").read_bytes())
    assert manifest["signed_by"] == signature["public_key"] and errors("manifest", manifest) == []
    assert {f"{MATCHES}/{p.name}" for p in matches(interrupted)} <= set(signature["files"])
    code, output = invoke("verify", interrupted, "--signed-by", public)
    assert code == 0 and "signature ok" in output, output
    code, output = invoke("verify", interrupted)
    assert "(of the run so far: it is unfinished)" in output


def test_resume_sign_finishes_and_signs_an_honest_run(interrupted, keys, tmp_path):
    key, public = keys
    run_dir = copy(interrupted, tmp_path)
    code, output = invoke("resume", run_dir, "--workers", 1, "--sign", key)
    assert code == 0, output
    assert "complete" not in json.loads((run_dir / SIGNATURE).read_bytes())
    code, output = invoke("verify", run_dir, "--signed-by", public)
    assert code == 0 and "signature ok" in output, output


def test_resume_sign_refuses_a_match_framed_while_the_run_was_interrupted(interrupted, keys, tmp_path):
    key, public = keys
    run_dir = copy(interrupted, tmp_path)
    first = matches(run_dir)[0]
    frame_a_time_out(first)
    kept = len(matches(run_dir))
    code, output = invoke("resume", run_dir, "--workers", 1, "--sign", key)
    assert code == 2, output
    assert (f"not signing: {MATCHES}/{first.name}: changed since it was signed (while the run was interrupted?)"
            in output)
    assert len(matches(run_dir)) == kept, "nothing is played once it refuses"
    # Control: signed after an unchecked resume (what resume --sign did), the forgery passes.
    code, output = invoke("resume", run_dir, "--workers", 1)
    assert code == 0, output
    from naparena.arena.records.signing import load_private, sign_run
    sign_run(run_dir, load_private(key))
    code, output = invoke("verify", run_dir, "--signed-by", public)
    assert code == 0 and "signature ok" in output, output


@pytest.fixture(scope="module")
def unsigned(tmp_path_factory) -> Path:
    """A run played without a key, then cut back as an interrupt leaves it."""
    folder = tmp_path_factory.mktemp("unsigned")
    file = write_tournament(folder, name="t", seeds=2, hands=6)
    Session.open(file, folder / "logs" / "t", workers=1).play()
    run_dir = folder / "logs" / "t"
    (run_dir / STANDINGS).unlink()
    for path in matches(run_dir)[-4:]:
        path.unlink()
    return run_dir


def test_resume_sign_replays_what_no_signature_covers(unsigned, keys, tmp_path):
    key, public = keys
    run_dir = copy(unsigned, tmp_path)
    code, output = invoke("resume", run_dir, "--workers", 1, "--sign", key)
    assert code == 0, output
    code, output = invoke("verify", run_dir, "--signed-by", public)
    assert code == 0 and "signature ok" in output, output


def test_resume_sign_will_not_vouch_for_a_time_out_no_signature_covers(unsigned, keys, tmp_path):
    key, _ = keys
    run_dir = copy(unsigned, tmp_path)
    first = matches(run_dir)[0]
    frame_a_time_out(first)
    code, output = invoke("resume", run_dir, "--workers", 1, "--sign", key)
    assert code == 2, output
    assert f"not signing: {MATCHES}/{first.name}: holds 1 time-out(s) or hang(s), which no replay can check" in output
    # Control: an edit the engine does not reproduce is refused as the replay finds it.
    run_dir = copy(unsigned, tmp_path / "again")
    log = json.loads(first.read_bytes())
    log["hands"][0]["chips"] = [c + 1 if s == 0 else c - 1 if s == 1 else c
                                for s, c in enumerate(log["hands"][0]["chips"])]
    (run_dir / MATCHES / first.name).write_text(json.dumps(log))
    code, output = invoke("resume", run_dir, "--workers", 1, "--sign", key)
    assert code == 2 and f"not signing: {MATCHES}/{first.name}: hand 0: differs in chips" in output, output


def test_plain_verify_of_a_signed_run_that_lost_its_signature_fails(interrupted, keys, tmp_path):
    key, _ = keys
    run_dir = copy(interrupted, tmp_path)
    assert invoke("resume", run_dir, "--workers", 1, "--sign", key)[0] == 0
    (run_dir / SIGNATURE).unlink()
    code, output = invoke("verify", run_dir)
    assert code == 1
    assert "signature.json: missing: the manifest says the run is signed by ed25519:" in output
    # Control: a run never signed is simply unsigned.
    plain = copy(interrupted, tmp_path / "plain")
    manifest = json.loads((plain / "manifest.json").read_bytes())
    del manifest["signed_by"]
    (plain / "manifest.json").write_text(json.dumps(manifest))
    (plain / SIGNATURE).unlink()
    code, output = invoke("verify", plain)
    assert code == 0 and "signature: none (the run is unsigned)" in output


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_a_private_key_others_may_read_or_change_is_refused_as_ssh_refuses_it(keys, tmp_path, mode):
    key, _ = keys
    loose = tmp_path / "loose.key"
    shutil.copy(key, loose)
    loose.chmod(mode)
    file = write_tournament(tmp_path, name="t", seeds=1, hands=2)
    code, output = invoke("run", file, "--sign", loose, "--log-dir", tmp_path / "logs")
    assert code == 2
    assert f"--sign {loose}: its permissions {mode:04o} let others read or change it" in output
    assert "chmod 600" in output and not (tmp_path / "logs").exists()
    loose.chmod(0o600)  # control: the same key, its owner's alone, signs
    code, output = invoke("run", file, "--sign", loose, "--log-dir", tmp_path / "logs", "--workers", 1)
    assert code == 0 and "signed" in output, output
