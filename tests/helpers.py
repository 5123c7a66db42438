"""What many test modules share: the command line in-process and as a child process,
tournament files with drop-in bots, run directories, and waiting for an event.

A plain module without tests: test modules import it (and `drop_ins`, `deals`,
`misbehaving`), never each other; `tests/test_house.py` checks that.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import jsonschema
import pytest
import tomli_w
from typer.testing import CliRunner

from naparena.arena.records.rundir import MANIFEST, MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.arena.setup.tournament import Tournament
from naparena.bots import plugins
from naparena.cli import app
from tests.drop_ins import TEST_BOTS

if TYPE_CHECKING:  # for the type checker only: recent typer installs no click to import it from
    from typer.testing import Result

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_BOT = REPO / "bots" / "example_bot.py"
WAIT = 120.0  # seconds: a limit for events on a loaded machine, never a speed expectation

T = TypeVar("T")


# --- the command line ------------------------------------------------------------------

def invoke(*args: Any, **kwargs: Any) -> Result:
    """`naparena ARGS` in this process; `kwargs` go to CliRunner.invoke (env, input, ...)."""
    return CliRunner().invoke(app, [str(a) for a in args], **kwargs)


def flat(text: str) -> str:
    """Output with line wrapping undone, for messages the console may have wrapped."""
    return " ".join(text.split())


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment with installed plug-ins off and hashing fixed, plus `env`."""
    return {**os.environ, plugins.DISABLE_AUTOLOAD_ENV: "1", "PYTHONHASHSEED": "0", **(env or {})}


def naparena(*args: Any, cwd: Path | str, env: Mapping[str, str] | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m naparena ARGS` in a child process, as a person would run it."""
    return subprocess.run([sys.executable, "-m", "naparena", *map(str, args)], cwd=cwd, env=child_env(env),
                          capture_output=True, text=True, timeout=timeout)


def start_naparena(*args: Any, cwd: Path | str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `python -m naparena ARGS` in its own process group, so its workers can be signalled too."""
    # A shell starting pytest in the background makes it ignore SIGINT, and an ignored
    # signal stays ignored in children: let the child see Ctrl-C as a terminal would send it.
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen([sys.executable, "-m", "naparena", *map(str, args)], cwd=cwd, env=child_env(env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, previous)


# --- tournament files and drop-in bots -----------------------------------------------------

def drop_in(folder: Path, sources: Mapping[str, str] | None = None, *, example: bool = False) -> Path:
    """A drop-in bot folder: each source written as `folder/NAME.py`, and the repository's
    example bot as `example_bot.py` if `example`."""
    folder.mkdir(parents=True, exist_ok=True)
    if example:
        shutil.copy(EXAMPLE_BOT, folder / "example_bot.py")
    for name, source in (sources or {}).items():
        (folder / f"{name}.py").write_text(source)
    return folder


def write_tournament(folder: Path, *, name: str = "t", file: str | None = None, seed: int = 7, seeds: int = 4,
                     hands: int = 10, bots: Iterable[str] = ("random", "example"),
                     variants: Iterable[str] = ("classic",), drop_ins: Mapping[str, str] | None = None,
                     sprt: Mapping[str, Any] | None = None, example: bool = True, **settings: Any) -> Path:
    """`folder/FILE.toml` (FILE: the tournament's name) for a round robin of `bots` in
    `variants`, with `drop_ins` (module name: source) and, if `example`, the example bot
    in `folder/bots`."""
    drop_in(folder / "bots", drop_ins, example=example)
    # A generous time limit: a decision timed out by a busy machine would change the logs
    # the tests compare byte for byte.
    settings.setdefault("timeout", 5.0)
    # The plain estimator unless a test asks: "auto" adjusts random beside the example bot,
    # and its rollouts cost ten times the hands' own play (test_luck tests the estimator).
    settings.setdefault("estimator", "plain")
    data: dict[str, Any] = {
        "tournament": {"name": name, "seed": seed, "seeds": seeds, "hands": hands, **settings},
        "bots": [{"name": b} for b in bots], "variants": [{"name": v} for v in variants]}
    if sprt:
        data["sprt"] = dict(sprt)
    path = folder / f"{file or name}.toml"
    path.write_text(tomli_w.dumps(data))
    return path


def _second_bot() -> str:
    """`heuristic` when the reference bots are there, else the example drop-in."""
    return "heuristic" if "heuristic" in plugins.load_registry(None).bots else "example"


SECOND = _second_bot()

# The runner's tournaments (the runner's and the cluster's tests): always `t.toml`, seed
# 2026, one seed stream of 20 hands at tables of four, with the test bots.
write_testbots_tournament = functools.partial(
    write_tournament, file="t", seed=2026, seeds=1, hands=20, table=4, bots=("random", SECOND),
    drop_ins={"testbots": TEST_BOTS})


def prepared_run(t: Tournament, run_dir: Path, workers: int | None = None, **options: Any) -> Session:
    """What `naparena run` does before playing, minus the terminal: the session opened
    (registry, bot checks, preflight) and the run directory prepared (nothing played yet)."""
    session = Session.open(t, run_dir, workers=workers, **options)
    session.prepare()
    return session


# --- run directories ---------------------------------------------------------------------

def run_dir_in(log_dir: Path) -> Path:
    """The one run directory in `log_dir`."""
    [run_dir] = [p for p in Path(log_dir).iterdir() if p.is_dir()]
    return run_dir


def snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every canonical file of a run directory (not run.log), by relative path."""
    files = {MANIFEST: (run_dir / MANIFEST).read_bytes(), STANDINGS: (run_dir / STANDINGS).read_bytes()}
    for f in sorted((run_dir / MATCHES).iterdir()):
        files[f"{MATCHES}/{f.name}"] = f.read_bytes()
    return files


def assert_same_files(got: dict[str, bytes], expected: dict[str, bytes]) -> None:
    assert sorted(got) == sorted(expected)
    differing = [name for name in expected if got[name] != expected[name]]
    assert not differing, f"files differ: {differing}"


def played_matches(run_dir: Path) -> int:
    return sum(1 for _ in (run_dir / MATCHES).glob("*.json"))


# --- JSON schemas ------------------------------------------------------------------------

def schema(name: str) -> dict[str, Any]:
    return json.loads((resources.files("naparena") / "schemas" / f"{name}.schema.json").read_text())


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema(name))


def errors(name: str, data: Any) -> list[str]:
    """What the schema `name` finds wrong with `data` (empty: valid)."""
    return [f"{e.json_path}: {e.message[:200]}" for e in validator(name).iter_errors(data)]


# --- waiting and processes -----------------------------------------------------------------

def wait_for(condition: Callable[[], T], what: str, seconds: float = WAIT, *,
             proc: subprocess.Popen[str] | None = None) -> T:
    """Poll `condition` until it gives something true, and return that. Fails after
    `seconds` (a limit for a loaded machine, not a speed expectation), or at once if `proc`
    ends first, with its output."""
    deadline = time.monotonic() + seconds
    while True:
        found = condition()
        if found:
            return found
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the process ended before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds:g} s for {what}")
        time.sleep(0.02)


def live_members(pgid: int) -> list[int]:
    """Processes of a process group that are still running (zombies do not count)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces, so split after the last ')'.
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def wait_until_gone(pgid: int, seconds: float = WAIT) -> None:
    """Wait for every process of the group to end: workers must not outlive their run."""
    wait_for(lambda: not live_members(pgid), "the run's worker processes to end", seconds)


# --- runtimes an organizer installs -------------------------------------------------------

#: A statically linked CPython whose copy, with its standard library, is a Python of its own.
SYSTEM_PYTHON = Path("/usr/bin/python3")
_LEFT_OUT = shutil.ignore_patterns("test", "tests", "__pycache__", "site-packages", "dist-packages", "idlelib",
                                   "tkinter", "turtledemo", "lib2to3", "ensurepip", "config-*")


def organizer_python(prefix: Path) -> Path | None:
    """A Python installation at `prefix` as an installer lays one out (bin/python3.X, its
    standard library in lib/python3.X), copied from the system's; its `python3`, or None
    where the copy does not run as a Python of its own (no such Python, or one that needs
    its own libpython)."""
    if not SYSTEM_PYTHON.exists():
        return None
    real = Path(os.path.realpath(SYSTEM_PYTHON))
    asked = subprocess.run([str(real), "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
                           capture_output=True, text=True, check=False)
    stdlib = Path(asked.stdout.strip())
    if asked.returncode != 0 or not (stdlib / "os.py").is_file():
        return None
    shutil.copytree(stdlib, prefix / "lib" / stdlib.name, ignore=_LEFT_OUT, symlinks=True)
    (prefix / "bin").mkdir(parents=True, exist_ok=True)
    shutil.copy2(real, prefix / "bin" / real.name)
    os.symlink(real.name, prefix / "bin" / "python3")
    said = subprocess.run([str(prefix / "bin" / "python3"), "-c", "import sys; print(sys.prefix)"],
                          capture_output=True, text=True, check=False)
    return prefix / "bin" / "python3" if said.stdout.strip() == str(prefix) else None


def python_version(python: Path) -> str:
    """X.Y.Z of the Python `python`."""
    return subprocess.run([str(python), "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


MISE = shutil.which("mise")
needs_mise = pytest.mark.skipif(MISE is None, reason="no mise (npm install -g @jdxcode/mise)")


def mise_for(root: Path, monkeypatch: pytest.MonkeyPatch, links: Mapping[str, Path]) -> Path:
    """mise as an organizer sets it up in a container image (its folders under `root`, named
    by MISE_DATA_DIR and the like, its shims first on PATH), each `links` version
    (`python@X.Y.Z`) linked to a folder of the organizer's (`mise link`); its shims folder."""
    assert MISE is not None
    for what in ("data", "config", "state", "cache"):
        monkeypatch.setenv(f"MISE_{what.upper()}_DIR", str(root / what))
    monkeypatch.delenv("MISE_TRUSTED_CONFIG_PATHS", raising=False)
    for tool, folder in links.items():
        subprocess.run([MISE, "link", "--force", tool, str(folder)], check=True, capture_output=True)
    subprocess.run([MISE, "reshim"], check=True, capture_output=True)
    shims = root / "data" / "shims"
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    return shims
