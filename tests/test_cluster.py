"""Dask clusters: a scheduler and two workers as real processes on loopback play the same
bytes as the local pool; a worker killed by pid mid-run changes nothing; a run resumes
across executors; a worker lacking a plug-in, or naparena without the extra, is one
clear message. Nothing here waits on the machine's speed: every wait is for an event,
with a generous limit."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from naparena.arena.executors.cluster import describe_bots, mismatch
from naparena.arena.match.job import Job
from naparena.arena.session import Quiet, Session
from naparena.arena.setup.reader import load_tournament
from naparena.arena.setup.settings import Scheduler, Timing
from naparena.bots import plugins
from naparena.cli import app
from naparena.errors import ConfigError, RunError
from naparena.game.rules import make_rules
from tests.helpers import (
    REPO,
    assert_same_files,
    naparena,
    played_matches,
    run_dir_in,
    snapshot,
    start_naparena,
    wait_for,
    write_testbots_tournament,
)

# CI installs the extra, so nothing is skipped there. Dask is imported only by the tests
# that need it in this process: a parent holding it makes forked workers' collections slower.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="the dask extra is not installed")

DASK = Path(sys.executable).parent / "dask"
GATE_ENV = "NAPARENA_TEST_GATE"
WAIT = 180.0  # seconds: a limit for events on a loaded machine, never a speed expectation

# A drop-in bot that, on the cluster's workers only (they have GATE_ENV set), holds each
# match at its start while `closed` exists in the gate folder, leaving a note that names
# the process playing it and its Dask worker. Waiting changes no answer, so the logs do
# not depend on it (past the time limit the watchdog ends the wait, at no cost).
GATE_BOT = '''
import logging
import multiprocessing
import os
import time

import naparena
from naparena import Bot


class Gate(Bot):
    name = "gate"
    description = "random answers; held at each match's start while the test's gate is closed"

    def start_match(self, info):
        if info["match"] == 1:
            logging.getLogger("gate").warning("gate sat at match 1, seat %d", info["seat"])
        gate = os.environ.get("''' + GATE_ENV + '''")
        if not gate or not os.path.exists(os.path.join(gate, "closed")):
            return
        worker = multiprocessing.parent_process().pid
        with open(os.path.join(gate, f"started-{info['match']}-{os.getpid()}-{worker}"), "w"):
            pass
        deadline = time.monotonic() + 600
        while os.path.exists(os.path.join(gate, "closed")) and time.monotonic() < deadline:
            time.sleep(0.05)

    def bid(self, view):
        return self.rng.choice(view.legal)

    def play(self, view):
        return self.rng.choice(view.legal)


@naparena.hookimpl
def register_bots(register):
    register(Gate)
'''

BOTS = ("random", "heuristic", "grumpy", "gate")  # a built-in, drop-ins, a bot that faults


class Cluster:
    def __init__(self, file: Path, gate: Path, client):
        self.file, self.gate, self.client = file, gate, client

    def worker_pids(self) -> dict[str, int]:
        return self.client.run(os.getpid)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """`dask scheduler` and two `dask worker`s (one thread each, with nannies), on loopback."""
    folder = tmp_path_factory.mktemp("dask")
    file, gate = folder / "scheduler.json", folder / "gate"
    gate.mkdir()
    env = {**os.environ, plugins.DISABLE_AUTOLOAD_ENV: "1", "PYTHONHASHSEED": "0", GATE_ENV: str(gate)}
    local = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
    commands = [[DASK, "scheduler", *local, "--port", "0", "--scheduler-file", file]]
    commands += [[DASK, "worker", *local, "--scheduler-file", file, "--nthreads", "1", "--no-dashboard",
                  "--death-timeout", "60", "--local-directory", folder / f"w{i}"] for i in (1, 2)]
    import distributed

    procs = []
    client = None
    try:
        for i, command in enumerate(commands):
            with open(folder / f"{i}.log", "w") as log:
                procs.append(subprocess.Popen(list(map(str, command)), env=env, stdout=log,
                                              stderr=subprocess.STDOUT, start_new_session=True))
            if i == 0:
                wait_for(file.exists, "the scheduler file", WAIT)
        client = distributed.Client(scheduler_file=str(file), set_as_default=False)
        client.wait_for_workers(2, timeout=WAIT)
        yield Cluster(file, gate, client)
    finally:
        if client is not None:
            client.close()
        for p in reversed(procs):  # our own processes, by pid: workers first, then the scheduler
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def tournament(folder: Path, **settings) -> Path:
    path = write_testbots_tournament(folder, bots=BOTS, variants=("classic", "peep"), hands=15, seeds=2, **settings)
    (folder / "bots" / "gate.py").write_text(GATE_BOT)
    return path


def reference(folder: Path) -> dict[str, bytes]:
    """The same tournament with `--workers 1`, in-process: the bytes everything must match."""
    done = naparena("run", "t.toml", "--workers", 1, "--log-dir", "ref", "--json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return snapshot(run_dir_in(folder / "ref"))


# --- the same bytes -------------------------------------------------------------------

def test_a_scheduler_and_two_workers_play_the_same_bytes_as_one_local_worker(cluster, tmp_path):
    tournament(tmp_path)
    expected = reference(tmp_path)
    done = naparena("run", "t.toml", "--scheduler", cluster.file, "--log-dir", "dask", "--json", cwd=tmp_path,
                    timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert_same_files(snapshot(run_dir_in(tmp_path / "dask")), expected)
    total = len([f for f in expected if f.startswith("matches/")])
    assert total == 2 * 2 * 24  # variants x seeds x seatings
    said = " ".join(done.stderr.split())
    assert f"Dask scheduler {cluster.client.scheduler.address}: 2 worker(s), 2 thread(s)" in said
    assert f"{total}/{total}" in said  # the progress bar reached the end
    # What a bot logs on a worker comes back to run.log, as from the local pool.
    assert "WARNING gate sat at match 1, seat" in (run_dir_in(tmp_path / "dask") / "run.log").read_text()
    assert json.loads(done.stdout) == json.loads(expected["standings.json"])


def test_matches_batched_several_to_a_task_play_the_same_bytes(cluster, tmp_path, monkeypatch):
    """Sized as if each task should last minutes: after the first match measured, tasks
    carry several matches, the last ones one each, and the files are still the reference's."""
    from naparena.arena.executors import cluster as module
    from naparena.arena.session import bots_dir

    monkeypatch.setattr(module, "TASK_SECONDS", 600.0)
    tournament(tmp_path)
    expected = reference(tmp_path)
    runner = Session.open(tmp_path / "t.toml", tmp_path / "batched" / "run", scheduler=str(cluster.file))
    executor = module.ClusterExecutor(Scheduler.parse(str(cluster.file)), runner.registry,
                                      [b.name for b in runner.t.bots], bots_dir(runner.t))
    sizes: list[int] = []
    flush = executor.flush
    monkeypatch.setattr(executor, "flush", lambda: (sizes.append(len(executor._batch)), flush())[1])
    try:
        runner.play(executor=executor)
    finally:
        executor.shutdown()
    assert_same_files(snapshot(runner.run_dir.path), expected)
    assert max(sizes) > 1 and sum(sizes) >= runner.matches  # several matches went in one task
    assert [s for s in sizes if s][-1] == 1  # what was left at the end went out a match at a time


@pytest.mark.parametrize("sees", [True, False])
def test_a_worker_writes_the_logs_only_where_it_sees_the_run_folder(cluster, tmp_path, monkeypatch, sees):
    """A worker that finds the run's token (this machine's workers) writes each log itself,
    and this process writes none; one that does not (as on another machine: here, a
    token whose nonce differs) sends every log back to be written here. The same bytes."""
    from naparena.arena.executors import cluster as module
    from naparena.arena.session import bots_dir

    tournament(tmp_path)
    expected = reference(tmp_path)
    runner = Session.open(tmp_path / "t.toml", tmp_path / "dask" / "run", scheduler=str(cluster.file))
    executor = module.ClusterExecutor(Scheduler.parse(str(cluster.file)), runner.registry,
                                      [b.name for b in runner.t.bots], bots_dir(runner.t))
    if not sees:
        shared = executor._shared
        monkeypatch.setattr(executor, "_shared", lambda paths: (lambda s: s and (s[0], "another", s[2]))(shared(paths)))
    written: list[str] = []
    write = module.write_atomic
    monkeypatch.setattr(module, "write_atomic", lambda path, data: (written.append(path), write(path, data))[1])
    try:
        runner.play(executor=executor)
    finally:
        executor.shutdown()
    assert_same_files(snapshot(runner.run_dir.path), expected)
    assert len(written) == (0 if sees else runner.matches)
    assert not list(runner.run_dir.matches.glob(".dask-*"))  # the token goes with the run


def test_a_batch_lasts_about_task_seconds_by_the_matches_measured():
    from naparena.arena.executors.cluster import MAX_BATCH, TASK_SECONDS, ClusterExecutor

    executor = ClusterExecutor.__new__(ClusterExecutor)  # only the sizing: no cluster
    executor.workers, executor._seconds, executor._played, executor._left = 2, 0.0, 0, None
    assert executor.batch == 1  # nothing measured yet
    executor._seconds, executor._played = TASK_SECONDS / 5 * 10, 10  # a match: a fifth of a task
    assert (executor.batch, executor.window) == (5, 30)
    executor._seconds = TASK_SECONDS * 30  # matches longer than a task go alone
    assert (executor.batch, executor.window) == (1, 6)
    executor._seconds = 1e-9
    assert executor.batch == MAX_BATCH


def test_the_last_batches_shrink_so_the_workers_finish_together():
    """With what is left known, a batch is at most half a thread's share of it: 1,000 short
    matches on 2 threads go out as batches that only shrink, ending in single matches."""
    from naparena.arena.executors.cluster import MAX_BATCH, ClusterExecutor

    executor = ClusterExecutor.__new__(ClusterExecutor)
    executor.workers, executor._seconds, executor._played = 2, 1e-9, 1  # by time alone: MAX_BATCH
    executor._batch, executor._fn, executor._timing = [], None, None
    executor.expect(1000)
    job = Job(index=0, seed=0, variant="v", rules=make_rules("classic"), seats=(), hands=1)
    nothing = lambda job: None  # noqa: E731 (one function: a batch plays one)
    sizes = []
    executor.flush = lambda: (sizes.append(len(executor._batch)), executor._batch.clear())  # type: ignore[method-assign]
    for _ in range(1000):
        executor.play(nothing, job, Timing())
    assert sum(sizes) == 1000 and sizes[0] == MAX_BATCH
    assert sizes == sorted(sizes, reverse=True) and sizes[-3:] == [1, 1, 1]
    # The control: not told what is left, the sizing is by time alone, to the end.
    executor._left, sizes[:] = None, []
    for _ in range(1000):
        executor.play(nothing, job, Timing())
    assert set(sizes) == {MAX_BATCH}


def test_the_window_keeps_its_size_while_the_last_batches_shrink():
    """Matches done ahead of their turn count in the window until the batch before them is
    booked. Sized by the shrinking batch, the window filled with them while a long batch
    still played, and the short tasks behind waited: a thread stood idle 0.2-0.5 s at a time
    (seen in Dask's task stream). Sized by the batch measured time gives, it holds."""
    from naparena.arena.executors.cluster import TASK_SECONDS, ClusterExecutor

    executor = ClusterExecutor.__new__(ClusterExecutor)
    executor.workers, executor._batch = 2, []
    executor._seconds, executor._played = TASK_SECONDS / 5 * 10, 10  # five matches a task
    executor.expect(1000)
    assert (executor.batch, executor.window) == (5, 30)
    executor.expect(3)  # the end: single matches now, the window as before
    assert (executor.batch, executor.window) == (1, 30)


def test_a_local_cluster_started_for_the_run_plays_the_same_bytes(tmp_path):
    tournament(tmp_path)
    expected = reference(tmp_path)
    done = naparena("run", "t.toml", "--scheduler", "local:2", "--log-dir", "local", cwd=tmp_path, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert "2 worker(s), 2 thread(s)" in " ".join(done.stderr.split())
    assert_same_files(snapshot(run_dir_in(tmp_path / "local")), expected)


def test_a_local_cluster_forks_its_workers_and_starts_their_pools_before_any_match():
    """What a run on one machine pays before its first match. Each worker is forked from a
    server that has imported Dask and naparena's worker side (its parent is that server, not
    the run, which spawned a fresh interpreter per worker before), the plug-in starts each
    worker's supervised child as soon as it is set up (before, at the first match), and
    Dask's housekeeping runs less often."""
    import dask

    from naparena.arena.executors.cluster import LOCAL_CONFIG, LOCAL_PRELOAD, ClusterExecutor
    from naparena.arena.executors.dask_worker import PLUGIN

    def pool_started(dask_worker) -> bool:
        pool = dask_worker.plugins[PLUGIN].pool_here
        return pool is not None and all(w.process.is_alive() for w in pool._workers)

    executor = ClusterExecutor(Scheduler.parse("local:2"), plugins.load_registry(None), ["random"], None)
    try:
        wait_for(lambda: all(executor.client.run(pool_started).values()), "every worker's pool, no match sent", WAIT)
        assert os.getpid() not in executor.client.run(os.getppid).values()
        imported = executor.client.run(lambda: [name in sys.modules for name in LOCAL_PRELOAD])
        assert all(all(names) for names in imported.values()), imported
        # Dask's housekeeping slowed on the workers too (it competes with play on one machine).
        settings = executor.client.run(lambda: {key: dask.config.get(key) for key in LOCAL_CONFIG})
        assert all(found == LOCAL_CONFIG for found in settings.values()), settings
    finally:
        executor.shutdown()


def test_a_local_clusters_workers_have_the_runs_environment_not_the_fork_servers(monkeypatch):
    """The fork server lives as long as the process that started it and keeps the
    environment of that moment: a later run's workers must see the run's own (its PATH
    decides whether a worker can sandbox), as spawned workers did."""
    from naparena.arena.executors.cluster import ClusterExecutor

    def started(value: str) -> dict[str, str | None]:
        monkeypatch.setenv("NAPARENA_TEST_RUN", value)
        executor = ClusterExecutor(Scheduler.parse("local:1"), plugins.load_registry(None), ["random"], None)
        try:
            return executor.client.run(lambda: os.environ.get("NAPARENA_TEST_RUN"))
        finally:
            executor.shutdown()

    assert set(started("first").values()) == {"first"}
    assert set(started("second").values()) == {"second"}  # "first" from the server alone


@pytest.mark.slow
def test_a_bot_that_kills_its_process_is_contained_on_a_local_cluster(tmp_path):
    """A local cluster's workers are forks of a fork server, and each supervises its matches
    in children of a fork server of its own: a bot that kills its process there is charged
    a crash and replayed, giving the bytes of the local pool."""
    write_testbots_tournament(tmp_path)
    data = {"tournament": {"name": "crashes", "seed": 5, "hands": 4, "table": 3, "max_fault_share": 1.0},
            "bots": [{"name": "random"}, {"name": "crashy"}, {"name": "random", "alias": "other"}],
            "variants": [{"name": "classic"}]}
    (tmp_path / "t.toml").write_text(tomli_w.dumps(data))
    pool = naparena("run", "t.toml", "--workers", 2, "--log-dir", "pool", cwd=tmp_path, timeout=WAIT)
    assert pool.returncode == 0, pool.stderr
    dask = naparena("run", "t.toml", "--scheduler", "local:2", "--log-dir", "dask", cwd=tmp_path, timeout=WAIT)
    assert dask.returncode == 0, dask.stderr
    expected = snapshot(run_dir_in(tmp_path / "pool"))
    assert_same_files(snapshot(run_dir_in(tmp_path / "dask")), expected)
    reasons = [c[3] for k, v in expected.items() if k.startswith("matches/") for c in json.loads(v)["crashes"]]
    assert any(r.startswith("crash: process exited with code 3") for r in reasons), reasons


def test_the_tournament_file_can_name_the_scheduler(cluster, tmp_path):
    tournament(tmp_path / "ref")
    expected = reference(tmp_path / "ref")
    tournament(tmp_path, scheduler=str(cluster.file))
    done = naparena("run", "t.toml", "--log-dir", "dask", cwd=tmp_path, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert f"Dask ({cluster.file})" in " ".join(done.stderr.split())
    # Where a run was played is not what it is: the same manifest, hash and directory name.
    assert run_dir_in(tmp_path / "dask").name == run_dir_in(tmp_path / "ref" / "ref").name
    assert_same_files(snapshot(run_dir_in(tmp_path / "dask")), expected)


@pytest.mark.slow
def test_crashing_and_hanging_bots_are_supervised_on_the_workers_as_in_the_local_pool(cluster, tmp_path):
    """crashy kills its process in hand 1 of every match it plays; misbehave hangs with the
    watchdog's interrupt blocked in one match, so only the hard limit ends it. Both are
    charged to those bots, replayed, and give the bytes of the local pool."""
    write_testbots_tournament(tmp_path)
    (tmp_path / "bots" / "misbehaving.py").write_bytes((REPO / "tests" / "bots_misbehaving" / "misbehaving.py")
                                                      .read_bytes())
    hang = {"mode": "block", "every": 5, "times": 1, "match": 1, "sleep": 600.0}
    data = {"tournament": {"name": "misfits", "seed": 5, "hands": 8, "table": 3, "timeout": 2.0,
                           "max_fault_share": 1.0},
            "bots": [{"name": "random"}, {"name": "crashy"}, {"name": "misbehave", "params": hang}],
            "variants": [{"name": "classic"}]}
    (tmp_path / "t.toml").write_text(tomli_w.dumps(data))
    pool = naparena("run", "t.toml", "--workers", 2, "--log-dir", "pool", cwd=tmp_path, timeout=WAIT)
    assert pool.returncode == 0, pool.stderr
    dask = naparena("run", "t.toml", "--scheduler", cluster.file, "--log-dir", "dask", cwd=tmp_path, timeout=WAIT)
    assert dask.returncode == 0, dask.stderr
    expected = snapshot(run_dir_in(tmp_path / "pool"))
    assert_same_files(snapshot(run_dir_in(tmp_path / "dask")), expected)
    logs = [json.loads(v) for k, v in expected.items() if k.startswith("matches/")]
    reasons = [c[3] for log in logs for c in log["crashes"]]
    assert any(r.startswith("crash: process exited with code 3") for r in reasons), reasons
    assert any(r.startswith("hang: killed after 11 s") for r in reasons), reasons


# --- faults ---------------------------------------------------------------------------

def test_a_worker_killed_by_pid_mid_run_changes_nothing(cluster, tmp_path):
    tournament(tmp_path)
    expected = reference(tmp_path)
    closed = cluster.gate / "closed"
    closed.touch()
    before = set(cluster.gate.glob("started-*"))
    run = start_naparena("run", "t.toml", "--scheduler", cluster.file, "--log-dir", "dask", cwd=tmp_path)
    try:
        # A worker in the middle of a match, held at its start by the gate.
        wait_for(lambda: set(cluster.gate.glob("started-*")) - before, "a match to start", WAIT)
        child, worker = map(int, min(set(cluster.gate.glob("started-*")) - before).name.split("-")[2:])
        assert worker in cluster.worker_pids().values()
        os.kill(worker, signal.SIGKILL)
        # The match's child process dies with its worker: nothing is left playing it.
        wait_for(lambda: not alive(child), "the killed worker's child to go", WAIT)
    finally:
        closed.unlink()
    out, err = run.communicate(timeout=WAIT)
    assert run.returncode == 0, err
    assert "crash" not in (run_dir_in(tmp_path / "dask") / "run.log").read_text()  # never a bot's fault
    assert_same_files(snapshot(run_dir_in(tmp_path / "dask")), expected)
    cluster.client.wait_for_workers(2, timeout=WAIT)  # the nanny brings a new worker in


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_ctrl_c_on_a_cluster_run_says_how_to_resume_and_resume_completes(cluster, tmp_path):
    tournament(tmp_path)
    expected = reference(tmp_path)
    closed = cluster.gate / "closed"
    closed.touch()
    before = set(cluster.gate.glob("started-*"))
    run = start_naparena("run", "t.toml", "--scheduler", cluster.file, "--log-dir", "dask", cwd=tmp_path)
    try:
        wait_for(lambda: len(set(cluster.gate.glob("started-*")) - before) >= 1, "a match to start", WAIT)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=WAIT)
    finally:
        closed.unlink()
    assert run.returncode == 130, err
    run_dir = run_dir_in(tmp_path / "dask")
    assert f"Resume with: naparena resume {run_dir.relative_to(tmp_path)}" in " ".join(err.split())
    done = naparena("resume", run_dir, "--scheduler", cluster.file, cwd=tmp_path, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert_same_files(snapshot(run_dir), expected)


# --- resume across executors ----------------------------------------------------------

class Interrupt(Quiet):
    """A watcher that stops a run as Ctrl-C would, after `after` booked matches."""

    def __init__(self, after: int):
        self.after = after

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        if matches >= self.after:
            raise KeyboardInterrupt


class Notices(Quiet):
    """A watcher that keeps what the executor says."""

    def __init__(self) -> None:
        self.heard: list[str] = []

    def notice(self, text: str) -> None:
        self.heard.append(text)


def start_in_process(path: Path, log_dir: Path, after: int, **run) -> Path:
    runner = Session.open(path, log_dir / "run", watcher=Interrupt(after), **run)
    with pytest.raises(KeyboardInterrupt):
        runner.play()
    return runner.run_dir.path


def test_a_local_run_interrupted_resumes_on_the_cluster_and_back(cluster, tmp_path):
    tournament(tmp_path)
    expected = reference(tmp_path)
    total = len([f for f in expected if f.startswith("matches/")])

    local_first = start_in_process(tmp_path / "t.toml", tmp_path / "a", 3, workers=2)
    kept = played_matches(local_first)
    assert 3 <= kept < total
    done = naparena("resume", local_first, "--scheduler", cluster.file, cwd=tmp_path, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert f"({kept} {'match' if kept == 1 else 'matches'} already done)" in " ".join(done.stderr.split())
    assert_same_files(snapshot(local_first), expected)

    cluster_first = start_in_process(tmp_path / "t.toml", tmp_path / "b", 3,
                                     scheduler=Scheduler.parse(str(cluster.file)))
    kept = played_matches(cluster_first)
    # A Dask worker writes its batch's match files as it plays them (a batch aims at two
    # seconds of play), so on a loaded machine every batch may be written by the time the
    # interrupt lands: then the resume below only books them. The local half above is
    # the one that must resume mid-run.
    assert 3 <= kept <= total
    done = naparena("resume", cluster_first, "--workers", 2, cwd=tmp_path, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert_same_files(snapshot(cluster_first), expected)


def test_scheduler_none_plays_here_although_the_file_names_a_scheduler(tmp_path):
    tournament(tmp_path / "ref")
    expected = reference(tmp_path / "ref")
    tournament(tmp_path, scheduler="tcp://127.0.0.1:1")  # nothing listens there
    done = naparena("run", "t.toml", "--scheduler", "none", "--workers", 2, "--log-dir", "here", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert_same_files(snapshot(run_dir_in(tmp_path / "here")), expected)


# --- what must be the same on every worker --------------------------------------------

PLUGIN = '''
import naparena
from naparena import Bot


class Tiny(Bot):
    name = "tiny"
    description = "an installed plug-in only this machine has"

    def bid(self, view):
        return "pass"

    def play(self, view):
        return view.legal[0]


@naparena.hookimpl
def register_bots(register):
    register(Tiny)
'''


def install_plugin(site: Path) -> None:
    """An installed distribution `tiny-bot` 1.0 with a `naparena` entry point, in `site`."""
    site.mkdir()
    (site / "tiny_bot.py").write_text(PLUGIN)
    info = site / "tiny_bot-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-bot\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[naparena]\ntiny = tiny_bot\n")


def test_a_worker_without_an_installed_plugin_is_one_clear_error(cluster, tmp_path):
    install_plugin(tmp_path / "site")
    write_testbots_tournament(tmp_path, bots=("random", "tiny"))
    env = {plugins.DISABLE_AUTOLOAD_ENV: "", "PYTHONPATH": str(tmp_path / "site")}
    here = naparena("run", "t.toml", "--workers", 1, "--log-dir", "here", cwd=tmp_path, env=env)
    assert here.returncode == 0, here.stderr  # the plug-in works on this machine
    done = naparena("run", "t.toml", "--scheduler", cluster.file, "--log-dir", "dask", cwd=tmp_path, env=env,
                    timeout=WAIT)
    assert done.returncode == 2
    message = " ".join(done.stderr.split("error: ", 1)[1].split())  # one message, however wrapped
    worker = message.split()[2]
    assert worker in cluster.worker_pids()
    assert message == (f"Dask worker {worker} cannot load bot 'tiny' (not installed there); here it is entry "
                       "point 'tiny' from package 'tiny-bot' 1.0: install it on every worker")
    assert played_matches(run_dir_in(tmp_path / "dask")) == 0


def test_mismatch_names_the_worker_and_what_differs(tmp_path):
    registry = plugins.load_registry(None)
    ours = describe_bots(registry, ["random", "heuristic"])
    assert mismatch("tcp://w:1", ours, ours) is None
    other_code = {**ours, "code": "0" * 12}
    assert "Dask worker tcp://w:1 runs naparena" in mismatch("tcp://w:1", other_code, ours)
    lacking = describe_bots(plugins.Registry(), ["random", "heuristic"])
    assert mismatch("tcp://w:1", lacking, ours).startswith(
        "Dask worker tcp://w:1 cannot load bot 'random' (not installed there); here it is built-in module")
    changed = {**ours, "bots": {**ours["bots"], "random": {**ours["bots"]["random"], "digest": "f" * 12}}}
    assert "has another bot 'random'" in mismatch("tcp://w:1", changed, ours)


def test_a_drop_in_is_known_by_its_file_name_and_content_not_its_folder(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "gate.py").write_text(GATE_BOT)
    a = describe_bots(plugins.load_registry(tmp_path / "a"), ["gate"])
    b = describe_bots(plugins.load_registry(tmp_path / "b"), ["gate"])
    assert a == b and a["bots"]["gate"]["source"] == "drop-in file gate.py"
    (tmp_path / "b" / "gate.py").write_text(GATE_BOT.replace("random answers", "other answers"))
    c = describe_bots(plugins.load_registry(tmp_path / "b"), ["gate"])
    assert "has another bot 'gate'" in mismatch("w", c, a)


# --- without the extra, and bad values ------------------------------------------------

def test_without_the_extra_one_line_says_how_to_install_it(tmp_path, monkeypatch):
    tournament(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "distributed", None)  # what an environment without it gives
    result = CliRunner().invoke(app, ["run", "t.toml", "--scheduler", "local:2", "--log-dir", "logs"])
    assert result.exit_code == 2
    assert result.output == "error: Dask is not installed: pip install 'naparena[dask]'\n"
    assert not (tmp_path / "logs").exists()  # nothing started


def test_a_bad_scheduler_value_names_the_key(tmp_path, monkeypatch):
    path = tournament(tmp_path, scheduler="local:0")
    with pytest.raises(ConfigError) as caught:
        load_tournament(path)
    assert "tournament.scheduler" in str(caught.value) and "local:N" in str(caught.value)
    monkeypatch.chdir(tmp_path)
    tournament(tmp_path)
    result = CliRunner().invoke(app, ["run", "t.toml", "--scheduler", "local:x"])
    assert result.exit_code == 2 and "--scheduler 'local:x' must be tcp://host:port" in result.output
    result = CliRunner().invoke(app, ["run", "t.toml", "--scheduler", "missing.json", "--log-dir", "logs"])
    assert result.exit_code == 2 and "scheduler file missing.json does not exist" in result.output


def test_an_unreachable_scheduler_is_one_clear_error(tmp_path):
    tournament(tmp_path)
    import dask

    from naparena.arena.executors.cluster import ClusterExecutor
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}), \
            pytest.raises(RunError, match="cannot reach the Dask scheduler tcp://127.0.0.1:1"):
        ClusterExecutor(Scheduler.parse("tcp://127.0.0.1:1"), plugins.load_registry(tmp_path / "bots"),
                        ["random"], None)


def test_the_dashboard_address_is_given_where_the_scheduler_has_one(tmp_path, monkeypatch):
    """A local cluster's scheduler runs in this process, so it sees this stand-in for bokeh."""
    monkeypatch.setattr("naparena.arena.executors.cluster._has_bokeh", lambda: True)
    write_testbots_tournament(tmp_path, hands=3)
    notices = Notices()
    Session.open(tmp_path / "t.toml", tmp_path / "run", scheduler="local:1", watcher=notices).play()
    [notice] = notices.heard
    assert notice.startswith("Dask scheduler tcp://127.0.0.1:")
    assert ": 1 worker(s), 1 thread(s); dashboard http://127.0.0.1:" in notice


def test_logs_come_through_the_scheduler_where_the_workers_cannot_be_reached(cluster, tmp_path):
    from naparena.arena.executors.cluster import ClusterExecutor
    from naparena.arena.session import bots_dir

    tournament(tmp_path)
    expected = reference(tmp_path)
    runner = Session.open(tmp_path / "t.toml", tmp_path / "via-scheduler" / "run", scheduler=str(cluster.file))
    t = runner.t
    executor = ClusterExecutor(Scheduler.parse(str(cluster.file)), runner.registry, [b.name for b in t.bots],
                               bots_dir(t))
    try:
        assert executor._direct  # loopback: straight from the workers
        assert not executor._reachable(["tcp://127.0.0.1:1"])  # nothing listens there
        executor._direct = False
        runner.play(executor=executor)
    finally:
        executor.shutdown()
    assert_same_files(snapshot(runner.run_dir.path), expected)
