"""A seat process whose limits cannot be set says which one: the setting's name, its value
and the system's reason, where subprocess alone says "Exception occurred in preexec_fn".
The refusal is real: the child (forked from this process, so it runs the patched call)
fails in setrlimit between fork and exec, as on a system whose policy forbids a limit."""

from __future__ import annotations

import errno
import resource
import subprocess
import sys

import pytest

from naparena.arena.match.channel import Channel, _Broken
from naparena.arena.setup.settings import Confinement, Sandbox

SEAT = [sys.executable, "-c", "import sys; sys.stdin.read()"]


def refusing(kind: int):
    real = resource.setrlimit

    def setrlimit(which: int, limits: tuple[int, int]) -> None:
        if which == kind:
            raise OSError(errno.EPERM, "Operation not permitted")
        real(which, limits)
    return setrlimit


@pytest.mark.parametrize(("kind", "said"), [
    (resource.RLIMIT_NOFILE, "open_files = 48 (RLIMIT_NOFILE)"),
    (resource.RLIMIT_CPU, "cpu_seconds = 30 (RLIMIT_CPU)"),
    (resource.RLIMIT_AS, "memory_mb = 900 (RLIMIT_AS)"),
])
def test_a_limit_that_cannot_be_set_is_named(monkeypatch, kind, said):
    monkeypatch.setattr(resource, "setrlimit", refusing(kind))
    confinement = Confinement(memory_mb=900, cpu_seconds=30, open_files=48, sandbox=Sandbox.OFF)
    with pytest.raises(_Broken) as caught:
        Channel(SEAT, confinement, True, "seat 1")
    assert caught.value.reason == (f"crash: cannot start the seat process {sys.executable}: its limit {said} "
                                   "could not be set: Operation not permitted")


def test_the_same_seat_starts_when_its_limits_can_be_set():
    """Control: nothing refused, the same seat starts (and its limits hold in it)."""
    channel = Channel(SEAT[:2] + ["import resource, sys; print(resource.getrlimit(resource.RLIMIT_NOFILE)); "
                                  "sys.stdin.read()"],
                      Confinement(memory_mb=900, cpu_seconds=30, open_files=48, sandbox=Sandbox.OFF), True, "seat 1")
    try:
        assert channel.proc.poll() is None
    finally:
        channel.kill()


def test_subprocess_alone_says_only_that_an_exception_occurred():
    """Why the pipe: what subprocess reports of a failing preexec_fn names nothing."""
    def fail() -> None:
        raise OSError(errno.EPERM, "Operation not permitted")
    with pytest.raises(subprocess.SubprocessError, match=r"^Exception occurred in preexec_fn\.$"):
        subprocess.Popen(SEAT, preexec_fn=fail)  # noqa: PLW1509
