"""Every way a command can end early ends in one clear line, never a traceback: Ctrl-C in
its first moment (while the command line is still being loaded), a signing command in an
install without the `sign` extra, and a benchmark asked past a documented limit. Each is
tried on a real child process, with a control that shows the check can fail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from naparena.arena.session import Session
from tests.helpers import REPO, child_env, wait_for, write_tournament

# A child that runs `naparena ARGS` as its console script does, Ctrl-C live as at a
# terminal (a shell that started pytest in the background leaves SIGINT ignored).
# The console script imports its entry point (naparena/__main__.py, which loads nothing
# else) and calls it: from that call on, Ctrl-C is caught. Before it, Python's own start
# (a few tens of milliseconds, site packages and the script's imports) is Python's.
CHILD = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.argv = ["naparena", *sys.argv[1:]]
{enter}
{prepare}
main()
"""
ENTRY = "from naparena.__main__ import main"
# What the console script ran before: the command line imported first, outside any guard.
OLD_ENTRY = "def main():\n    from naparena.cli import main as command_line\n    command_line()"


def ready_at_import(ready: Path, module: str = "naparena.cli") -> str:
    """Make the file `ready` as `module` starts to be imported: inside the entry point's
    guard, not in this harness's own lines before it (a Ctrl-C sent while the harness
    still wrote its file was the harness's traceback, not naparena's)."""
    return textwrap.dedent(f"""
        class Ready:
            def find_spec(self, name, path=None, target=None):
                if name == {module!r}:
                    sys.meta_path.remove(self)
                    os.close(os.open({str(ready)!r}, os.O_CREAT | os.O_WRONLY))
                return None
        sys.meta_path.insert(0, Ready())
        """)


def interrupt_at_import(module: str) -> str:
    """A real SIGINT, sent by the child to itself as `module` starts to be imported."""
    return textwrap.dedent(f"""
        class Interrupt:
            def find_spec(self, name, path=None, target=None):
                if name == {module!r}:
                    sys.meta_path.remove(self)
                    os.kill(os.getpid(), signal.SIGINT)
                return None
        sys.meta_path.insert(0, Interrupt())
        """)


def child(args: list[str], cwd: Path, prepare: str = "", enter: str = ENTRY, **options) -> subprocess.Popen[str]:
    code = CHILD.format(prepare=prepare, enter=enter)
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], cwd=cwd, env=child_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **options)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("endings")
    file = write_tournament(root, name="t", seeds=1, hands=2)
    Session.open(file, root / "logs" / "t", workers=1).play()
    return root


def clean(done: subprocess.CompletedProcess[str] | tuple[str, str]) -> str:
    err = done.stderr if isinstance(done, subprocess.CompletedProcess) else done[1]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-2000:]
    return err


# --- Ctrl-C in the first moment --------------------------------------------------------

# Modules the command line loads before any command runs, and one a command loads itself.
EARLY = ["naparena.cli", "typer", "rich.console", "naparena.arena.records.run"]


@pytest.mark.parametrize("module", EARLY)
def test_ctrl_c_while_the_command_line_loads_ends_in_one_line(project, module):
    proc = child(["report", "logs/t"], project, interrupt_at_import(module))
    out, err = proc.communicate(timeout=120)
    clean((out, err))
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "interrupted", err


@pytest.mark.parametrize("module", EARLY[:3])
def test_the_old_entry_printed_a_traceback_there(project, module):
    """Control: entered as the console script was (the command line imported unguarded),
    the same interrupt at the same import is a KeyboardInterrupt traceback."""
    proc = child(["report", "logs/t"], project, interrupt_at_import(module), OLD_ENTRY)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" in err and "KeyboardInterrupt" in err


COMMANDS = [["report", "logs/t"], ["verify", "logs/t"], ["ratings", "logs/t"], ["variants"],
            ["run", "t.toml", "--workers", "2", "--log-dir", "fresh"], ["check", "random", "--hands", "2"]]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_ctrl_c_sent_from_outside_in_the_first_moment_never_prints_a_traceback(project, tmp_path, args):
    """Ctrl-C as a terminal sends it (to the whole process group, workers included), at
    several moments from the first (the command line starting to load): whenever it
    lands, the command ends cleanly (done, or interrupted with exit 130). Not a timing
    test: every moment must pass."""
    for delay in (0.0, 0.02, 0.05, 0.1, 0.3):
        ready = tmp_path / f"ready-{delay}"
        proc = child(args, project, ready_at_import(ready))
        wait_for(ready.exists, "the child to start", proc=proc)
        time.sleep(delay)
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass  # it had finished already
        out, err = proc.communicate(timeout=120)
        clean((out, err))
        # -SIGINT: the interrupt landed while the interpreter was closing, after Python had
        # given SIGINT back its default action; a shell reports that as 130 too
        assert proc.returncode in (0, 130, -signal.SIGINT), (delay, proc.returncode, err[-1000:])


# --- signing without the `sign` extra ---------------------------------------------------

WITHOUT_CRYPTOGRAPHY = "sys.modules['cryptography'] = None  # as in an install without naparena[sign]"


@pytest.mark.parametrize("args", [["keygen", "organizer.key"], ["run", "t.toml", "--sign", "organizer.key"],
                                  ["verify", "logs/t", "--signed-by", "organizer.key.pub"],
                                  ["resume", "logs/t", "--sign", "organizer.key"]], ids=lambda a: a[0])
def test_signing_without_the_extra_is_one_line_and_exit_2(project, args):
    proc = child(args, project, WITHOUT_CRYPTOGRAPHY)
    _, err = proc.communicate(timeout=120)
    clean((_, err))
    assert proc.returncode == 2
    assert err.strip() == ("error: signing needs the cryptography package, which this install lacks: "
                           "pip install 'naparena[sign]'")
    assert not (project / "organizer.key").exists()


def test_without_the_block_the_same_key_is_made(project, tmp_path):
    """Control: the block above is what makes the difference (cryptography is installed here)."""
    pytest.importorskip("cryptography")
    proc = child(["keygen", tmp_path / "k"], project)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and (tmp_path / "k").exists(), err


# --- a benchmark past a documented limit --------------------------------------------------

@pytest.mark.parametrize("bots", ["10000", "1"])
def test_the_league_benchmark_past_its_limit_is_one_clear_error(tmp_path, bots):
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "league_bench.py"), "scale", "--bots", bots],
                          cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=120)
    err = clean(done)
    assert done.returncode == 2
    assert err.strip().splitlines()[-1] == (f"league_bench.py: error: --bots {bots}: a league holds 2 to 1,000 bots "
                                            "(naparena's limit: docs/how-to/leagues.md)")
