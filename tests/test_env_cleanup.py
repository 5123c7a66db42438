"""An environment whose opponents play in seat processes ends them however it ends: by
`close()`, or dropped without it (a notebook cell run again, a script that forgets), when
the environment is collected. Before, a dropped environment left its processes running."""

from __future__ import annotations

import gc
import os
import shlex
import sys

import pytest

from naparena.arena.setup.settings import Confinement, Sandbox
from tests.helpers import wait_for

pytest.importorskip("gymnasium")
from naparena.envs.single import NapSeatEnv

# An external program that outlives its stdin, as many do: naparena's random bot served,
# then, when the environment's end of the pipe is gone, a long sleep in the same process.
PROGRAM = f"{shlex.quote(sys.executable)} -m naparena serve random; exec sleep 600"
OPPONENTS = [{"name": "outlives", "command": ["/bin/sh", "-c", PROGRAM]}]


def seat_pids(env: NapSeatEnv) -> list[int]:
    return [bot.channel.proc.pid for bot in env.remotes.values() if bot.channel is not None]


def running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def opened() -> tuple[NapSeatEnv, list[int]]:
    env = NapSeatEnv("classic", 3, opponents=OPPONENTS, confinement=Confinement(sandbox=Sandbox.OFF), hands=3)
    env.reset(seed=5)
    pids = seat_pids(env)
    assert len(pids) == 2 and all(map(running, pids))
    return env, pids


def test_a_dropped_environment_ends_its_seat_processes():
    env, pids = opened()
    del env
    gc.collect()
    wait_for(lambda: not any(map(running, pids)), "the dropped environment's seat processes to end")


def test_close_ends_them_and_a_new_episode_starts_fresh_ones():
    env, first = opened()
    env.reset(seed=6)
    second = seat_pids(env)
    assert not set(first) & set(second)
    wait_for(lambda: not any(map(running, first)), "the last episode's seats to end")
    env.close()
    wait_for(lambda: not any(map(running, second)), "close() to end the seats")
    env.close()  # twice is harmless


def test_without_the_finalizer_they_would_run_on():
    """Control: the same drop with the finalizer detached leaves the processes running."""
    env, pids = opened()
    remotes = dict(env.remotes)
    env._finalizer.detach()
    del env
    gc.collect()
    try:
        assert all(map(running, pids))
    finally:
        for bot in remotes.values():
            if bot.channel is not None:
                bot.channel.kill()
    assert not any(map(running, pids))
    assert os.getpid() not in pids


def test_a_dropped_batched_environment_ends_every_tables_seat_processes():
    """The same for `NapVectorEnv`: one finalizer holds every table's seat processes; the
    control detaches it and they run on."""
    from naparena.envs.vector import NapVectorEnv

    def batched() -> tuple[NapVectorEnv, list[int]]:
        env = NapVectorEnv(2, "classic", 3, opponents=OPPONENTS, confinement=Confinement(sandbox=Sandbox.OFF),
                           hands=3)
        env.reset(seed=5)
        pids = [bot.channel.proc.pid for t in env.tables for bot in t.remotes.values() if bot.channel is not None]
        assert len(pids) == 4 and all(map(running, pids))
        return env, pids

    env, pids = batched()
    del env
    gc.collect()
    wait_for(lambda: not any(map(running, pids)), "the dropped batched environment's seat processes to end")
    env, pids = batched()
    remotes = [dict(t.remotes) for t in env.tables]
    env._finalizer.detach()
    del env
    gc.collect()
    try:
        assert all(map(running, pids))
    finally:
        for table in remotes:
            for bot in table.values():
                if bot.channel is not None:
                    bot.channel.kill()
