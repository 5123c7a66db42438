"""Runner faults that are no bot's doing: a parent killed with kill -9, a worker killed,
stopped or terminated from outside, an interrupt as the run starts, a full disk or a
read-only log folder, damaged match files, and drop-in bots edited between sessions.

Real processes where the fault is about processes: the runs are `python -m naparena`
children, and workers are signalled by pid.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from naparena.arena.executors import pool as pool_module
from naparena.arena.executors.pool import ForkPool
from naparena.arena.records.rundir import MANIFEST, MATCHES, RunDir
from naparena.arena.session import Session
from naparena.bots import plugins
from naparena.cli import app
from tests.helpers import (
    assert_same_files,
    live_members,
    naparena,
    played_matches,
    run_dir_in,
    snapshot,
    start_naparena,
    wait_for,
    wait_until_gone,
    write_tournament,
)

# A bot that, when SLEEPER_DIR is set, marks its pid in that folder and sleeps inside its
# first card of hand 2 of every match: a worker to signal while a bot is deciding.
SLEEPER = '''
import os
import time

from naparena import Bot, hookimpl


class Sleeper(Bot):
    name = "sleeper"
    description = "random answers; sleeps in a decision when told to"

    def start_match(self, info):
        self.slept = False

    def bid(self, view):
        return self.rng.choice(view.legal)

    def play(self, view):
        folder = os.environ.get("SLEEPER_DIR")
        if folder and view.hand_no == 2 and not self.slept:
            self.slept = True
            with open(os.path.join(folder, str(os.getpid())), "w") as f:
                f.write("deciding")
            time.sleep(float(os.environ.get("SLEEPER_SECONDS", "2")))
        return self.rng.choice(view.legal)


@hookimpl
def register_bots(register):
    register(Sleeper)
'''

MATCH_COUNT = 12  # one variant, 2 seeds, the 6 distinct seatings of (random, sleeper, random, sleeper)


def write_sleeper_tournament(folder: Path, bot_source: str = SLEEPER, hands: int = 12) -> Path:
    # A limit far above the sleep: no decision here may time out, however busy the machine.
    return write_tournament(folder, name="faults", file="t", seeds=2, hands=hands, table=4, timeout=60.0,
                            bots=("random", "sleeper"), drop_ins={"sleeper": bot_source}, example=False)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The tournament run without sleeping or signals: what every disturbed run must equal."""
    folder = tmp_path_factory.mktemp("faults")
    write_sleeper_tournament(folder)
    done = naparena("run", "t.toml", "--workers", 2, "--log-dir", "reference", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder, snapshot(run_dir_in(folder / "reference")), done.stdout


def wait_for_marker(proc: subprocess.Popen, marks: Path) -> int:
    """The pid of the first worker that is inside the sleeper's decision."""
    found = wait_for(lambda: sorted(marks.iterdir()) if marks.exists() else [], "a worker deciding", proc=proc)
    return int(found[0].name)


def disturbed_run(folder: Path, log_dir: str, seconds: float, send) -> tuple[subprocess.Popen, str, str]:
    marks = folder / f"marks-{log_dir}"
    marks.mkdir()
    proc = start_naparena("run", "t.toml", "--workers", 2, "--log-dir", log_dir, "--json", cwd=folder,
                          env={"SLEEPER_DIR": str(marks), "SLEEPER_SECONDS": str(seconds)})
    try:
        send(proc, wait_for_marker(proc, marks))
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc, out, err


# --- workers die with the parent ------------------------------------------------------

def test_after_kill_9_of_the_parent_its_workers_die_too(reference):
    folder = reference[0]

    def kill_parent(proc, _worker):
        os.kill(proc.pid, signal.SIGKILL)  # the parent only: its workers get no signal

    proc, _, _ = disturbed_run(folder, "orphans", 30.0, kill_parent)
    assert proc.returncode == -signal.SIGKILL
    # Without a parent a worker would finish its match and wait for the next one forever.
    wait_until_gone(proc.pid, seconds=30.0)


# --- a worker lost to something outside any bot is replayed, not charged ------------------

@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP])
def test_a_worker_killed_stopped_or_terminated_from_outside_is_replayed_not_charged(reference, sig):
    folder, expected, expected_json = reference

    def signal_worker(_proc, worker):
        os.kill(worker, sig)

    proc, out, err = disturbed_run(folder, f"lost-{sig.name}", 1.0, signal_worker)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    run_dir = run_dir_in(folder / f"lost-{sig.name}")
    # The same files as the undisturbed run: no fault, no crash charged to the sleeper.
    assert_same_files(snapshot(run_dir), expected)
    assert out == expected_json
    assert "worker lost" in (run_dir / "run.log").read_text()


def sigterm_is_default() -> bool:
    return signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_a_worker_does_not_inherit_the_parents_sigterm_handler(tmp_path):
    from naparena.arena.executors.pool import ForkPool
    from naparena.arena.setup.settings import Timing

    previous = signal.signal(signal.SIGTERM, lambda *a: None)  # as `naparena run` installs one
    try:
        pool = ForkPool(1, Timing(60.0))
        try:
            assert pool.submit(sigterm_is_default).result(timeout=60) is True
        finally:
            pool.shutdown()
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_bot_killing_its_own_worker_in_the_same_place_again_is_charged_as_a_crash(tmp_path):
    """Being lost twice in the very same bot call is the bot's doing, not bad luck."""
    killer = SLEEPER.replace('time.sleep(float(os.environ.get("SLEEPER_SECONDS", "2")))',
                             "os.kill(os.getpid(), 9)").replace("sleeper", "killer").replace("Sleeper", "Killer")
    write_sleeper_tournament(tmp_path, killer)
    (tmp_path / "t.toml").write_text((tmp_path / "t.toml").read_text().replace('"sleeper"', '"killer"'))
    (tmp_path / "marks").mkdir()
    done = naparena("run", "t.toml", "--workers", 2, "--json", cwd=tmp_path,
                    env={"SLEEPER_DIR": str(tmp_path / "marks")})
    assert done.returncode == 0, done.stderr
    [row] = [r for r in json.loads(done.stdout)["variants"]["classic"]["bots"] if r["bot"] == "killer"]
    assert row["crashes"] > 0 and set(row["faults"]) == {"crash"}


# --- an interrupt just after the run directory exists ----------------------------------

def test_ctrl_c_just_after_the_run_directory_is_created_still_says_how_to_resume(tmp_path, monkeypatch):
    write_sleeper_tournament(tmp_path)
    monkeypatch.chdir(tmp_path)
    prepare = Session.prepare

    def prepare_then_interrupt(self):
        prepare(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(Session, "prepare", prepare_then_interrupt)
    result = CliRunner().invoke(app, ["run", "t.toml", "--workers", "1"])
    assert result.exit_code == 130, result.output
    message = " ".join(result.output.split())
    assert "Resume with: naparena resume logs/faults-" in message
    monkeypatch.setattr(Session, "prepare", prepare)
    hint = message[message.index("Resume with: ") + len("Resume with: "):].split()
    resumed = CliRunner().invoke(app, hint[1:3] + ["--workers", "1"])
    assert resumed.exit_code == 0, resumed.output
    assert played_matches(run_dir_in(tmp_path / "logs")) == MATCH_COUNT


# --- a log folder that cannot be written ----------------------------------------------

def _unshare_works() -> bool:
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(not _unshare_works(), reason="needs a private mount namespace (unshare -rm)")


def in_small_filesystem(folder: Path, options: str, workers: int) -> subprocess.CompletedProcess:
    """`naparena run` with its log folder on a fresh tmpfs mounted with `options`, in a
    private mount namespace; afterwards list every file left on that filesystem."""
    logs = folder / "small"
    logs.mkdir(exist_ok=True)
    env = {**os.environ, plugins.DISABLE_AUTOLOAD_ENV: "1"}
    script = (f"mount -t tmpfs -o {options} tmpfs {logs} && "
              f"{sys.executable} -m naparena run t.toml --workers {workers} --log-dir {logs}; "
              f"code=$?; echo '--- files'; find {logs} -type f; exit $code")
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


@needs_mounts
@pytest.mark.parametrize("workers", [1, 2])
def test_a_full_disk_is_one_clear_message_and_leaves_no_temporary_files(tmp_path, workers):
    write_sleeper_tournament(tmp_path, hands=400)  # about 90 kB a match: the 60 kB disk fills
    done = in_small_filesystem(tmp_path, "size=60k", workers)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = error_lines(done.stderr)
    assert "No space left on device" in line and "cannot write" in line
    assert "outside any bot" not in done.stderr
    left = done.stdout.split("--- files")[1].split()
    assert not [f for f in left if ".tmp" in f], left


@needs_mounts
def test_a_read_only_log_folder_is_one_clear_message(tmp_path):
    write_sleeper_tournament(tmp_path)
    done = in_small_filesystem(tmp_path, "ro,size=64k", 2)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    [line] = error_lines(done.stderr)
    assert "cannot create the run directory" in line and "Read-only file system" in line


def test_log_dir_naming_a_file_is_one_clear_message(tmp_path, monkeypatch):
    write_sleeper_tournament(tmp_path)
    monkeypatch.chdir(tmp_path)
    Path("notes.txt").write_text("not a folder")
    result = CliRunner().invoke(app, ["run", "t.toml", "--log-dir", "notes.txt"])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert "notes.txt is a file, not a folder" in " ".join(result.output.split())
    assert Path("notes.txt").read_text() == "not a folder"


# --- damaged match files ----------------------------------------------------------------

@pytest.fixture(scope="module")
def finished(reference, tmp_path_factory):
    return reference[0] / "reference"


@pytest.mark.parametrize("damage", [b"", b'{"format": 3, "match": {', b"\x00garbage\xff", b"{}", b"[]",
                                    b'{"format": 3}'])
@pytest.mark.parametrize("command", ["report", "resume", "verify"])
def test_a_damaged_match_file_is_named_not_a_traceback(finished, tmp_path, damage, command):
    copy = tmp_path / "run"
    shutil.copytree(run_dir_in(finished), copy)
    victim = copy / MATCHES / "000003.json"
    victim.write_bytes(damage)
    result = CliRunner().invoke(app, [command, str(copy)])
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (1, 2), result.output
    assert "000003.json" in result.output


def test_a_match_file_whose_summary_is_damaged_is_named(finished, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir_in(finished), copy)
    victim = copy / MATCHES / "000002.json"
    data = json.loads(victim.read_bytes())
    data["summary"]["seats"][0]["contracts"] = {"nap": "many"}
    victim.write_text(json.dumps(data))
    for command in ("report", "resume"):
        result = CliRunner().invoke(app, [command, str(copy)])
        assert result.exit_code == 2 and "000002.json" in result.output, result.output


# --- drop-in bots must be the same when a run is resumed ----------------------------------

def test_resuming_after_editing_a_drop_in_bot_is_refused(tmp_path, monkeypatch):
    write_sleeper_tournament(tmp_path)
    monkeypatch.chdir(tmp_path)
    first = CliRunner().invoke(app, ["run", "t.toml", "--workers", "1"])
    assert first.exit_code == 0, first.output
    run_dir = run_dir_in(tmp_path / "logs")
    bot = tmp_path / "bots" / "sleeper.py"
    bot.write_text(bot.read_text().replace("return self.rng.choice(view.legal)\n\n\n",
                                           "return view.legal[0]\n\n\n"))
    sys.modules.pop(plugins.DROP_IN_PACKAGE + ".sleeper", None)
    again = CliRunner().invoke(app, ["resume", str(run_dir)])
    assert again.exit_code == 2, again.output
    message = " ".join(again.output.split())
    assert "bot 'sleeper' is not the one this run started with" in message


def test_resuming_with_another_bots_dir_holding_a_bot_of_the_same_name_is_refused(tmp_path, monkeypatch):
    write_sleeper_tournament(tmp_path)
    monkeypatch.chdir(tmp_path)
    first = CliRunner().invoke(app, ["run", "t.toml", "--workers", "1"])
    assert first.exit_code == 0, first.output
    other = tmp_path / "other"
    other.mkdir()
    (other / "sleeper.py").write_text(SLEEPER.replace("sleeps in a decision", "another sleeper"))
    sys.modules.pop(plugins.DROP_IN_PACKAGE + ".sleeper", None)
    again = CliRunner().invoke(app, ["resume", str(run_dir_in(tmp_path / "logs")), "--bots-dir", str(other)])
    assert again.exit_code == 2, again.output
    assert "is not the one this run started with" in " ".join(again.output.split())
    # The same file in another folder is the same bot: that resume is fine.
    (other / "sleeper.py").write_text(SLEEPER)
    sys.modules.pop(plugins.DROP_IN_PACKAGE + ".sleeper", None)
    same = CliRunner().invoke(app, ["resume", str(run_dir_in(tmp_path / "logs")), "--bots-dir", str(other)])
    assert same.exit_code == 0, same.output


def test_live_members_helper_sees_this_process():
    # The orphan test relies on it: a live process of a group is found.
    assert os.getpid() in live_members(os.getpgid(0))


# --- files deleted during the run, plug-ins that exit or interrupt ------------------------

VANDAL = '''
import glob
import os

from naparena import Bot, hookimpl


class Vandal(Bot):
    name = "vandal"
    description = "deletes the run's first match log and its manifest from match 2 on"

    def start_match(self, info):
        if info["match"] >= 2:
            for path in glob.glob(os.path.join("logs", "*", "matches", "000000.json")) + \\
                    glob.glob(os.path.join("logs", "*", "manifest.json")):
                os.remove(path)

    def bid(self, view):
        return self.rng.choice(view.legal)

    def play(self, view):
        return self.rng.choice(view.legal)


@hookimpl
def register_bots(register):
    register(Vandal)
'''


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_bot_deleting_run_files_makes_the_run_fail_loudly(tmp_path, monkeypatch, workers):
    write_sleeper_tournament(tmp_path, VANDAL)
    (tmp_path / "t.toml").write_text((tmp_path / "t.toml").read_text().replace('"sleeper"', '"vandal"'))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "t.toml", "--workers", workers])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "manifest.json, matches/000000.json disappeared while the run went on" in message
    assert not (run_dir_in(tmp_path / "logs") / "standings.json").exists()


def test_the_matches_on_disk_are_listed_as_has_match_finds_them(tmp_path):
    # The dispatch and the check for deleted files list the folder once instead of asking
    # `has_match` per match: the two must agree, a half-written or stray file included.
    rd = RunDir(tmp_path / "run")
    assert rd.done_matches() == set()  # no folder yet
    rd.matches.mkdir(parents=True)
    for name in ["000003.json", "000010.json", "1234567.json", "12.json", "000004.json.tmp9", "abc.json",
                 "\u0663\u0663\u0663\u0663\u0663\u0663.json", "00007.json", "000015.JSON"]:
        (rd.matches / name).write_text("{}")
    assert rd.done_matches() == {3, 10, 1234567}
    assert {i for i in [*range(20), 1234567] if rd.has_match(i)} == {3, 10, 1234567}
    assert rd.missing([3, 4, 10, 12]) == [MANIFEST, f"{MATCHES}/000004.json", f"{MATCHES}/000012.json"]


@pytest.mark.parametrize("where, what", [("import", "raise SystemExit(3)"), ("import", "raise KeyboardInterrupt"),
                                         ("register", "raise SystemExit(4)"),
                                         ("register", "raise KeyboardInterrupt")])
def test_a_drop_in_that_exits_or_interrupts_is_a_plug_in_failure(tmp_path, where, what):
    folder = tmp_path / "bots"
    folder.mkdir()
    body = (what + "\n") if where == "import" else ""
    body += "from naparena import hookimpl\n\n\n@hookimpl\ndef register_bots(register):\n"
    body += f"    {what}\n" if where == "register" else "    pass\n"
    (folder / "quitter.py").write_text(body)
    done = naparena("bots", "--bots-dir", "bots", cwd=tmp_path)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)  # a plug-in failed: said
    assert "Traceback" not in done.stderr
    flat = " ".join((done.stdout + done.stderr).split())
    assert "failed" in flat and "quitter" in flat
    assert ("SystemExit" in flat) or ("KeyboardInterrupt" in flat)
    assert "random" in flat, "the other bots still load"


class _WatchedLock:
    """A lock that notes when a thread had to wait for it."""

    def __init__(self):
        self._lock = threading.Lock()
        self.waited = threading.Event()

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            self.waited.set()
            self._lock.acquire()
        return self

    def __exit__(self, *exc):
        self._lock.release()


def test_shutdown_never_writes_its_wake_byte_to_a_pipe_the_manager_closed(monkeypatch):
    # Force the interleaving seen under load: shutdown's wake write is held back until the
    # manager thread has either finished (and closed the pipe) or is waiting for the lock.
    # Under the fix the write happens with the lock held, so the manager waits; with the
    # write outside the lock the manager finishes first and the write hits a closed pipe.
    pool = ForkPool(1)
    lock = _WatchedLock()
    pool._lock = lock  # type: ignore[assignment]
    real_write, writes = os.write, []

    def held_back_write(fd, data):
        if threading.current_thread() is threading.main_thread() and pool._closing:
            lock.waited.clear()
            deadline = time.monotonic() + 60  # a safety stop, never reached either way
            while pool._thread.is_alive() and not lock.waited.is_set():
                assert time.monotonic() < deadline, "the manager neither finished nor waited"
                time.sleep(0.005)
            writes.append("after the manager closed" if not pool._thread.is_alive() else "in time")
        return real_write(fd, data)

    monkeypatch.setattr(pool_module.os, "write", held_back_write)
    pool.shutdown()
    assert writes == ["in time"]
    assert not pool._thread.is_alive()
