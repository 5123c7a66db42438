"""Bots as their authors write them play under the default seat sandbox: a second file
beside the program, a virtual environment, a shim on PATH, node_modules, a compiled bot's
data file, a weights file named in `files`. And the sandbox's limits are the seat's:
memory of all its processes, its folders' size, its core. Each test has a control that
shows what it checks can fail: the mount rule before this change (only the files the argv
names), or `sandbox = "off"`, where the limits were per process.

Real processes, 2 workers, the default sandbox (bubblewrap), as a run is played."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.match import bot_files, cgroups, sandbox
from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.errors import ConfigError
from tests.helpers import MISE, flat, invoke, mise_for, needs_mise, organizer_python, python_version

OWNER = Path(__file__).parent / "seat_programs" / "owner.py"
NO_BWRAP = sandbox.unavailable()
pytestmark = pytest.mark.skipif(NO_BWRAP is not None, reason=f"no seat sandbox here: {NO_BWRAP}")
CC = shutil.which("cc") or shutil.which("gcc")


def play(folder: Path, bot: dict, mode: str = "auto", seats: dict | None = None, others: list | None = None,
         log_dir: str = "logs") -> tuple[Path, list[dict]]:
    """Play `bot` against `random` on 2 workers from a tournament file in `folder`; the run
    and the bot's `OWNER` reports, in the order run.log has them."""
    config = {
        "tournament": {"name": "owners", "seed": 3, "seeds": 2, "hands": 2, "table": 2,
                       "workers": 2, "timeout": 30.0, "log_dir": log_dir},
        "seats": {"sandbox": mode, **(seats or {})},
        "bots": [{"alias": "owner", **bot}, *(others or []), {"name": "random"}],
        "variants": [{"name": "classic"}]}
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "tournament.toml"
    file.write_text(tomli_w.dumps(config))
    run = folder / log_dir / "run"
    Session.open(file, run, workers=2).play()
    assert (run / STANDINGS).exists()
    lines = (run / "run.log").read_text().splitlines()
    return run, [json.loads(line.split("OWNER ", 1)[1]) for line in lines if "(owner) stderr: OWNER " in line]


def faults(run: Path, alias: str = "owner") -> list[str]:
    """Every fault reason charged to `alias`; and no other seat faulted, chips conserved."""
    found = []
    for path in sorted((run / MATCHES).glob("*.json")):
        log = json.loads(path.read_bytes())
        for hand in log["hands"]:
            assert sum(hand["chips"]) + hand["kitty"] == 0 or sum(hand["chips"]) == 0, hand
            for _, seat, _, reason in hand.get("faults", ()):
                assert log["bots"][seat]["alias"] == alias, (seat, reason)
                found.append(reason)
    return found


@pytest.fixture
def old_rule(monkeypatch):
    """The mount rule before this change: only the files the argv names, no folder, no
    runtime followed; each test's control."""
    def argv_files_only(argv, files=(), avoid=()):
        named = [a for a in argv[1:] if os.path.isabs(a) and os.path.exists(a)]
        program = shutil.which(argv[0])
        if program and not bot_files.in_system(program):
            named.append(os.path.abspath(program))
        return bot_files.Footprint.showing(tuple(argv), ((p, "named") for p in named))
    monkeypatch.setattr("naparena.arena.match.channel.footprint", argv_files_only)


# --- a bot's own files -------------------------------------------------------------------

JQ_BOT = '''if .type == "hello" then {type: "hello", protocol: 1, name: "jq-bot", params: {}}
elif .type == "decide" then {type: "answer", answer: .view.legal[0]}
else empty end
'''


def jq_bot(folder: Path) -> dict:
    (folder / "jq-bot").mkdir(parents=True)
    (folder / "jq-bot" / "bot.jq").write_text(JQ_BOT)
    (folder / "jq-bot" / "napbot.sh").write_text('exec jq --unbuffered -c -f "$(dirname "$0")/bot.jq"\n')
    return {"name": "jq-bot", "command": ["sh", "jq-bot/napbot.sh"]}


@pytest.mark.skipif(shutil.which("jq") is None, reason="no jq (Debian: apt install jq)")
def test_a_shell_bot_reads_the_file_beside_it(tmp_path):
    run, _ = play(tmp_path, jq_bot(tmp_path))
    assert faults(run) == []


@pytest.mark.skipif(shutil.which("jq") is None, reason="no jq (Debian: apt install jq)")
def test_control_argv_files_alone_turn_the_shell_bot_away_saying_why(tmp_path, old_rule):
    with pytest.raises(ConfigError) as e:
        play(tmp_path, jq_bot(tmp_path))
    said = str(e.value)
    assert "failed its handshake" in said and "bot.jq" in said
    assert f"the seat sandbox hides {tmp_path / 'jq-bot' / 'bot.jq'}" in said and 'files = ["' in said


def test_a_bot_reads_a_weights_file_named_in_files(tmp_path):
    """Outside its folder, a weights file is hidden (the control) until `files` names it."""
    home = tmp_path / "author"  # the bot reads ../weights/w.txt from its own folder
    (home / "bot").mkdir(parents=True)
    shutil.copy(OWNER, home / "bot" / "owner.py")
    (home / "weights").mkdir()
    (home / "weights" / "w.txt").write_text("0.25 0.75\n")
    bot = {"name": "owner", "command": [sys.executable, str(home / "bot" / "owner.py"), "--report", "../weights/w.txt"]}
    _, hidden = play(tmp_path / "without", bot)
    assert hidden and all(r["../weights/w.txt"] == "OSError: No such file or directory" for r in hidden)
    _, shown = play(tmp_path / "with", {**bot, "files": ["../author/weights/w.txt"]})
    assert shown and all(r["../weights/w.txt"] == "0.25 0.75" for r in shown)


# --- the interpreter the author meant ---------------------------------------------------------

def own_venv(folder: Path) -> Path:
    """A virtual environment with a package (`napfact`) that only it has."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "napfact").mkdir()
    (site / "napfact" / "__init__.py").write_text('VERSION = "4.2.1"\n')
    (folder / "bot").mkdir(exist_ok=True)
    shutil.copy(OWNER, folder / "bot" / "owner.py")
    return venv


def test_a_venv_bot_runs_its_own_interpreter_and_packages_sandboxed_as_unsandboxed(tmp_path):
    venv = own_venv(tmp_path)
    bot = {"name": "owner", "command": [str(venv / "bin" / "python"), str(tmp_path / "bot" / "owner.py"), "--report"]}
    _, off = play(tmp_path / "off", bot, mode="off")
    _, boxed = play(tmp_path / "boxed", bot)
    assert off and boxed and off[0] == boxed[0]
    assert boxed[0]["napfact"] == "4.2.1" and boxed[0]["prefix"] == str(venv)
    assert boxed[0]["executable"] == str(venv / "bin" / "python")


def test_control_a_venv_bot_without_its_environment_misses_its_packages(tmp_path, old_rule):
    """The interpreter alone (its links kept) starts on whatever standard library it
    finds, not the venv's: the venv's package is missing."""
    venv = own_venv(tmp_path)
    bot = {"name": "owner", "command": [str(venv / "bin" / "python"), str(tmp_path / "bot" / "owner.py"), "--report"]}
    try:
        _, boxed = play(tmp_path / "boxed", bot)
    except ConfigError as e:  # no standard library found at all
        assert "exit code" in str(e)
        return
    assert boxed and all(r["napfact"].startswith("ImportError") and r["prefix"] != str(venv) for r in boxed)


def shim(folder: Path, venv: Path) -> str:
    """A shim on PATH (as version managers and wrappers make) that execs the venv's python."""
    bin_dir = folder / "shims"
    bin_dir.mkdir()
    (bin_dir / "botpython").write_text(f'#!/bin/sh\nexec "{venv}/bin/python" "$@"\n')
    (bin_dir / "botpython").chmod(0o755)
    return str(bin_dir)


def test_a_bot_started_through_a_shim_on_path_runs_the_interpreter_it_execs(tmp_path, monkeypatch):
    venv = own_venv(tmp_path)
    monkeypatch.setenv("PATH", shim(tmp_path, venv) + os.pathsep + os.environ["PATH"])
    bot = {"name": "owner", "command": ["botpython", str(tmp_path / "bot" / "owner.py"), "--report"]}
    _, off = play(tmp_path / "off", bot, mode="off")
    _, boxed = play(tmp_path / "boxed", bot)
    assert off and boxed and off[0] == boxed[0] and boxed[0]["napfact"] == "4.2.1"


def test_control_the_shim_unfollowed_fails_its_handshake(tmp_path, monkeypatch, old_rule):
    venv = own_venv(tmp_path)
    monkeypatch.setenv("PATH", shim(tmp_path, venv) + os.pathsep + os.environ["PATH"])
    bot = {"name": "owner", "command": ["botpython", str(tmp_path / "bot" / "owner.py"), "--report"]}
    with pytest.raises(ConfigError) as e:
        play(tmp_path / "boxed", bot)
    assert "exit code 127" in str(e.value) or "the seat sandbox hides" in str(e.value)


NODE_BOT = '''const napfact = require("napfact");
const rl = require("readline").createInterface({input: process.stdin});
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.type === "hello") {
    process.stderr.write("OWNER " + JSON.stringify({napfact: napfact.VERSION}) + "\\n");
    process.stdout.write(JSON.stringify({type: "hello", protocol: 1, name: "node-bot", params: {}}) + "\\n");
  } else if (msg.type === "decide") {
    process.stdout.write(JSON.stringify({type: "answer", answer: msg.view.legal[0]}) + "\\n");
  } else if (msg.type === "shutdown") { process.exit(0); }
});
'''


def node_bot(folder: Path) -> dict:
    """A Node bot whose package sits in node_modules a folder above its own (Node looks upwards)."""
    package = folder / "node_modules" / "napfact"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "napfact", "version": "4.2.1", "main": "index.js"}')
    (package / "index.js").write_text('module.exports = {VERSION: "4.2.1"};\n')
    (folder / "bots" / "node-bot").mkdir(parents=True)
    (folder / "bots" / "node-bot" / "bot.js").write_text(NODE_BOT)
    return {"name": "node-bot", "command": ["node", "bots/node-bot/bot.js"]}


@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_a_node_bot_finds_its_node_modules(tmp_path):
    run, said = play(tmp_path, node_bot(tmp_path))
    assert faults(run) == [] and said and said[0] == {"napfact": "4.2.1"}


@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_control_node_modules_hidden_fail_the_handshake(tmp_path, old_rule):
    with pytest.raises(ConfigError) as e:
        play(tmp_path, node_bot(tmp_path))
    assert "MODULE_NOT_FOUND" in str(e.value)


def c_bot(folder: Path) -> dict:
    """The C example built in its own folder, with its napbot.conf beside it."""
    source = Path(__file__).resolve().parent.parent / "examples" / "c" / "napbot.c"
    (folder / "c").mkdir(parents=True)
    subprocess.run([CC, "-O2", "-o", str(folder / "c" / "napbot"), str(source)], check=True)
    (folder / "c" / "napbot.conf").write_text("min_suit = 4\n")
    return {"name": "napbot-c", "command": ["c/napbot"]}


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("rule", ["now", "before"])
def test_the_c_example_reads_its_data_file(tmp_path, monkeypatch, rule):
    if rule == "before":
        monkeypatch.setattr("naparena.arena.match.channel.footprint", lambda argv, files=(), avoid=():
                            bot_files.Footprint.showing(tuple(argv), ((argv[0], "named"),)))
    run, _ = play(tmp_path, c_bot(tmp_path))
    read = [line for line in (run / "run.log").read_text().splitlines() if "napbot-c: min_suit 4 from" in line]
    assert faults(run) == []
    assert (len(read) > 0) == (rule == "now")


# --- the run's places stay hidden -------------------------------------------------------------

def test_a_bot_whose_folder_holds_the_run_and_tournament_file_sees_neither(tmp_path):
    """The tournament file, the log folder and another bot's folder inside the bot's own
    folder are masked; unsandboxed (the control) the same reads succeed."""
    shutil.copy(OWNER, tmp_path / "owner.py")
    (tmp_path / "other").mkdir()
    shutil.copy(OWNER, tmp_path / "other" / "owner.py")
    (tmp_path / "other" / "secret.txt").write_text("theirs\n")
    reads = ["@tournament.toml", "@other/secret.txt", "@logs/run/manifest.json"]
    bot = {"name": "owner", "command": [sys.executable, "owner.py", "--report", *reads]}
    other = {"name": "other", "command": [sys.executable, "other/owner.py"]}
    _, boxed = play(tmp_path, bot, others=[other])
    assert boxed and all(r[name].startswith("OSError") or r[name] == "" for r in boxed for name in reads), boxed
    shutil.rmtree(tmp_path / "logs")
    _, off = play(tmp_path, bot, mode="off", others=[other])
    assert off and all(r["@other/secret.txt"] == "theirs" and r["@logs/run/manifest.json"] == "{" for r in off)
    assert all(r["@tournament.toml"] and not r["@tournament.toml"].startswith("OSError") for r in off)


# --- a seat's limits are the seat's ------------------------------------------------------------

needs_memory_cgroup = pytest.mark.skipif("memory" not in cgroups.available(),
                                         reason="no writable memory cgroup here (root and cgroup v1 needed)")


@needs_memory_cgroup
def test_three_children_together_past_memory_mb_fault_their_seat_alone(tmp_path):
    shutil.copy(OWNER, tmp_path / "owner.py")
    bot = {"name": "owner", "command": [sys.executable, "owner.py", "--children", "3", "150"]}
    run, said = play(tmp_path, bot, seats={"memory_mb": 300})
    reasons = faults(run)
    assert reasons and all(r.startswith("crash: the seat went over memory_mb = 300") for r in reasons)
    assert not said, "no seat got all three children's memory"


@needs_memory_cgroup
def test_control_per_process_limits_let_three_children_hold_more(tmp_path):
    shutil.copy(OWNER, tmp_path / "owner.py")
    bot = {"name": "owner", "command": [sys.executable, "owner.py", "--children", "3", "150"]}
    run, said = play(tmp_path, bot, mode="off", seats={"memory_mb": 300})
    assert faults(run) == [] and said and all(r["children"] == ["held"] * 3 for r in said)


@pytest.mark.parametrize("folder", ["home", "/tmp", "/dev/shm"])
def test_a_seat_filling_a_folder_past_disk_mb_is_stopped_and_faulted(tmp_path, folder):
    shutil.copy(OWNER, tmp_path / "owner.py")
    bot = {"name": "owner", "command": [sys.executable, "owner.py", "--fill", folder, "24"]}
    run, said = play(tmp_path, bot, seats={"disk_mb": 8})
    reasons = faults(run)
    assert reasons and all(r.startswith("crash") for r in reasons) and not said
    assert "No space left on device" in (run / "run.log").read_text()


def test_control_unsandboxed_the_home_takes_the_same_files(tmp_path):
    shutil.copy(OWNER, tmp_path / "owner.py")
    bot = {"name": "owner", "command": [sys.executable, "owner.py", "--fill", "home", "24"]}
    run, said = play(tmp_path, bot, mode="off", seats={"disk_mb": 8})
    assert faults(run) == [] and said and all(r == {"filled": 24} for r in said)


needs_cpuset = pytest.mark.skipif("cpuset" not in cgroups.available() or len(os.sched_getaffinity(0)) < 2,
                                  reason="no writable cpuset cgroup here, or one core")


@needs_cpuset
@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_seat_cannot_widen_its_affinity_off_the_match_core(tmp_path, mode):
    """Sandboxed, the seat's cpuset holds it to its match's core; unsandboxed (the control)
    the same call widens it."""
    shutil.copy(OWNER, tmp_path / "owner.py")
    run, said = play(tmp_path, {"name": "owner", "command": [sys.executable, "owner.py", "--widen"]}, mode=mode)
    cores = [r["cores"] for r in said if "cores" in r]
    assert cores and all(n == (1 if mode == "auto" else len(os.sched_getaffinity(0))) for n in cores), said


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_closed_stdout_is_a_crash_at_once_in_every_mode(tmp_path, mode):
    """Not a time-out (the decision's limit is 30 s; the bot sleeps 60 after closing)."""
    shutil.copy(OWNER, tmp_path / "owner.py")
    run, _ = play(tmp_path, {"name": "owner", "command": [sys.executable, "owner.py", "--close-stdout"]}, mode=mode)
    reasons = faults(run)
    assert reasons and all(r.startswith("crash") for r in reasons), reasons


def _pyenv_shim() -> bool:
    found = shutil.which("python3")
    return found is not None and bot_files._PYENV.search(bot_files._script(found) or "") is not None


@pytest.mark.skipif(not _pyenv_shim(), reason="python3 on PATH is not a pyenv shim here")
def test_python3_through_a_pyenv_shim_runs_the_version_it_names(tmp_path):
    """`python3` as pyenv's shim: sandboxed, the interpreter pyenv would run (before this
    change, exit 127: the shim's pyenv was not in the sandbox)."""
    shutil.copy(OWNER, tmp_path / "owner.py")
    bot = {"name": "owner", "command": ["python3", str(tmp_path / "owner.py"), "--report"]}
    _, off = play(tmp_path / "off", bot, mode="off")
    _, boxed = play(tmp_path / "boxed", bot)
    assert off and boxed and off[0] == boxed[0]


def runpath_bot(folder: Path, inside: bool = True) -> dict:
    """The C example linked to a shared library in a folder of its own, found through the
    program's RUNPATH (as a bot built against a vendored library is): in the bot's folder
    (`$ORIGIN/vendor/lib`), or in a folder beside it, named by its absolute path."""
    lib = folder / "bot" / "vendor" / "lib" if inside else folder / "vendor" / "lib"
    lib.mkdir(parents=True)
    (folder / "fact.c").write_text("int napfact(void) { return 42; }\n")
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(lib / "libnapfact.so"), str(folder / "fact.c")], check=True)
    source = Path(__file__).resolve().parent.parent / "examples" / "c" / "napbot.c"
    rpath = "$ORIGIN/vendor/lib" if inside else str(lib)
    subprocess.run([CC, "-O2", "-o", str(folder / "bot" / "napbot"), str(source), "-Wl,--no-as-needed",
                    f"-L{lib}", "-lnapfact", f"-Wl,-rpath,{rpath}"], check=True)
    return {"name": "napbot-c", "command": ["bot/napbot"]}


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_a_compiled_bot_finds_its_library_through_its_runpath(tmp_path):
    run, _ = play(tmp_path, runpath_bot(tmp_path))
    assert faults(run) == []


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_control_without_its_runpath_a_compiled_bot_fails_saying_why(tmp_path, old_rule):
    (tmp_path / "bot").mkdir()
    bot = runpath_bot(tmp_path)
    shutil.move(tmp_path / "bot" / "vendor", tmp_path / "elsewhere")  # not in the folder the old rule shows
    with pytest.raises(ConfigError) as e:
        play(tmp_path, bot)
    said = str(e.value)
    assert "libnapfact.so" in said and ("exit code 127 in the seat sandbox" in said or "seat sandbox hides" in said)


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_a_runpath_outside_the_bot_folder_is_refused_and_the_hint_that_names_it_makes_it_play(tmp_path):
    """The RUNPATH is the bot's own byte: a folder outside the bot's folder that is no
    runtime installation is not shown; the handshake's hint names it, and the organizer
    who adds it to `files` gets a bot that plays."""
    (tmp_path / "bot").mkdir()
    bot = runpath_bot(tmp_path, inside=False)
    with pytest.raises(ConfigError) as e:
        play(tmp_path / "first", bot | {"command": [str(tmp_path / "bot" / "napbot")]})
    hint = re.search(r'files = \["([^"]+)"\]', str(e.value))
    assert hint is not None and hint.group(1) == str(tmp_path / "vendor" / "lib"), str(e.value)
    run, _ = play(tmp_path / "second", bot | {"command": [str(tmp_path / "bot" / "napbot")],
                                              "files": [hint.group(1)]})
    assert faults(run) == []


# --- an external bot beside naparena, and a command that does not exist -------------------------

NAPARENA = Path(sys.executable).parent / "naparena"


def _own_paths_before(own_paths):
    """The rule before this change: a command with no file argument had its program's
    folder as the bot's own, even a venv's bin/ (then hidden from every other seat)."""
    def before(argv, files, module=None):
        return own_paths(argv, files, module) + ([os.path.dirname(argv[0])] if argv and "/" in argv[0] else [])
    return before


@pytest.mark.skipif(not NAPARENA.exists(), reason="naparena's console script is not beside this interpreter")
@pytest.mark.parametrize("rule", ["now", "before"])
def test_an_external_bot_in_a_venvs_bin_leaves_python_seats_their_interpreter(tmp_path, monkeypatch, rule):
    """`naparena serve bold` from the venv's bin/ as an external bot beside isolated
    Python seats: the venv's bin/ is not that bot's folder, so the Python seats (whose
    interpreter lives there) still start; before, they failed ("python3: not found")."""
    if rule == "before":
        monkeypatch.setattr(bot_files, "own_paths", _own_paths_before(bot_files.own_paths))
    bot = {"name": "bold-ext", "command": [str(NAPARENA), "serve", "bold"]}
    run, _ = play(tmp_path, bot, others=[{"alias": "boxed", "name": "cautious", "isolation": "process"}])
    reasons = [r for path in sorted((run / MATCHES).glob("*.json"))
               for hand in json.loads(path.read_bytes())["hands"] for _, _, _, r in hand.get("faults", ())]
    assert (reasons == []) == (rule == "now"), reasons[:3]


def test_a_command_whose_program_does_not_exist_is_told_so(tmp_path):
    with pytest.raises(ConfigError) as e:
        play(tmp_path, {"name": "ghost", "command": ["no-such-program-here", "bot.py"]})
    said = str(e.value)
    assert "the command's program no-such-program-here does not exist (not found on PATH)" in said
    assert "files = [" not in said and "exit code 127" not in said


# --- the JVM ------------------------------------------------------------------------------------

JAVA = shutil.which("java")
JAVA_BOT = Path(__file__).parent / "seat_programs" / "java" / "Bot.java"
needs_java = pytest.mark.skipif(JAVA is None, reason="no java (Debian: apt install openjdk-17-jdk-headless)")


def java_bot(folder: Path) -> dict:
    (folder / "javabot").mkdir(parents=True)
    shutil.copy(JAVA_BOT, folder / "javabot" / "Bot.java")
    return {"name": "java-bot", "command": ["java", "javabot/Bot.java"]}


@needs_java
@pytest.mark.parametrize("rule", ["now", "before"])
def test_a_java_bot_reaches_its_jdks_configuration(tmp_path, monkeypatch, rule):
    """Debian keeps a JDK's conf/ in /etc/java-N-openjdk, linked from the JDK's folder:
    the sandbox shows what the JDK links to there. Before (the control), java.security
    was missing and the bot died at its hello, with the cause shown, not cut."""
    links_to_etc = bool(bot_files._jdk_config(str(Path(os.path.realpath(JAVA)).parent.parent)))
    if rule == "before":
        monkeypatch.setattr(bot_files, "_jdk_config", lambda home: ())
    if rule == "now" or not links_to_etc:
        run, _ = play(tmp_path, java_bot(tmp_path))
        assert faults(run) == []
        return
    with pytest.raises(ConfigError) as e:
        play(tmp_path, java_bot(tmp_path))
    assert "Error loading java.security file" in str(e.value), str(e.value)


@needs_java
@pytest.mark.parametrize("rule", ["now", "before"])
def test_a_java_bot_starts_where_only_rlimit_as_bounds_its_memory(tmp_path, monkeypatch, rule):
    """Without a memory cgroup (most developer machines) memory_mb is the seat's
    RLIMIT_AS, which a JVM's default reservations exceed: told sizes in proportion, it
    plays; before (the control), it died at start, and now the error names memory_mb."""
    found = {k: v for k, v in cgroups.available().items() if k != "memory"}
    monkeypatch.setattr(cgroups, "available", lambda: found)
    if rule == "before":
        monkeypatch.setattr("naparena.arena.match.channel.address_space_env", lambda memory_mb: {})
    bot = java_bot(tmp_path)
    if rule == "now":
        run, _ = play(tmp_path, bot, seats={"memory_mb": 2048})
        assert faults(run) == []
        return
    with pytest.raises(ConfigError) as e:
        play(tmp_path, bot, seats={"memory_mb": 2048})
    assert "memory_mb = 2048" in str(e.value) and "RLIMIT_AS" in str(e.value), str(e.value)


# --- a version manager, asked from the bot's folder -------------------------------------------------

def _pyenv_other_version() -> str | None:
    """An installed pyenv Python other than the global one (None without pyenv)."""
    pyenv = shutil.which("pyenv")
    if pyenv is None or not _pyenv_shim():
        return None
    listed = subprocess.run([pyenv, "versions", "--bare", "--skip-aliases"], capture_output=True, text=True,
                            check=False)
    now = subprocess.run([pyenv, "version-name"], capture_output=True, text=True, check=False, cwd="/").stdout.strip()
    others = [v for v in listed.stdout.split() if v != now and v.startswith("3.") and "/" not in v]
    return others[-1] if others else None


@pytest.mark.skipif(_pyenv_other_version() is None, reason="no pyenv shim with a second Python installed")
def test_a_python_version_file_in_the_bots_folder_picks_its_python_in_both_modes(tmp_path):
    """`pyenv local X` in the bot's folder: the shim is asked from there, sandboxed or not
    (before, sandboxed, it was asked from the seat's empty home: the global Python)."""
    version = _pyenv_other_version()
    (tmp_path / "bot").mkdir()
    shutil.copy(OWNER, tmp_path / "bot" / "owner.py")
    (tmp_path / "bot" / ".python-version").write_text(f"{version}\n")
    bot = {"name": "owner", "command": ["python3", str(tmp_path / "bot" / "owner.py"), "--report"]}
    _, off = play(tmp_path / "off", bot, mode="off")
    _, boxed = play(tmp_path / "boxed", bot)
    assert off and boxed and off[0] == boxed[0] and boxed[0]["prefix"].endswith(f"/versions/{version}"), boxed[0]


# --- mise: a version file in the bot's folder, asked of the real tool ----------------------------

VERSION_FILES = {".tool-versions": "python {version}\n", "mise.toml": '[tools]\npython = "{version}"\n',
                 ".python-version": "{version}\n"}  # read once the organizer's mise settings say so


@pytest.fixture
def mise_python(tmp_path, monkeypatch):
    """An organizer's Python (a copy of the system's, in a folder of its own) that mise
    knows by `mise link`, with mise's shims first on PATH; (its version, its prefix)."""
    python = organizer_python(tmp_path / "opt" / "python")
    if python is None:
        pytest.skip("no statically linked system Python to copy into a prefix of its own")
    version = python_version(python)
    mise_for(tmp_path / "mise", monkeypatch, {f"python@{version}": python.parent.parent})
    return version, python.parent.parent


def mise_bot(folder: Path, file: str, version: str) -> dict:
    (folder / "bot").mkdir(parents=True)
    shutil.copy(OWNER, folder / "bot" / "owner.py")
    (folder / "bot" / file).write_text(VERSION_FILES[file].format(version=version))
    return {"name": "owner", "command": ["python3", str(folder / "bot" / "owner.py"), "--report"]}


@needs_mise
@pytest.mark.parametrize("file", list(VERSION_FILES))
def test_python3_through_mises_shim_runs_the_version_the_bots_folder_names(tmp_path, mise_python, file):
    """mise's `python3` shim, asked from the bot's folder (its `.tool-versions`, its
    `mise.toml`, or its `.python-version` where the organizer's settings enable it): the
    Python mise links to plays sandboxed as unsandboxed, with only that installation
    shown beside the bot's folder."""
    version, prefix = mise_python
    bot = mise_bot(tmp_path, file, version)
    if file == ".python-version":  # the organizer's own setting, in its MISE_CONFIG_DIR
        subprocess.run([MISE, "settings", "add", "idiomatic_version_file_enable_tools", "python"], check=True,
                       capture_output=True)
    _, off = play(tmp_path / "off", bot, mode="off")
    _, boxed = play(tmp_path / "boxed", bot)
    assert off and boxed and off[0] == boxed[0], (off, boxed)
    assert os.path.realpath(boxed[0]["prefix"]) == str(prefix), boxed[0]
    found = bot_files.footprint(tuple(bot["command"]))
    outside = {p for p in found.paths if not p.startswith(str(tmp_path / "bot"))}
    assert outside == {str(prefix), f"{tmp_path / 'mise' / 'data'}/installs/python/{version}/bin/python3"}, found


@needs_mise
def test_control_mises_shim_unasked_plays_silently_on_another_python(tmp_path, mise_python, monkeypatch):
    """The control: mise not asked (its shim taken for a plain program), the sandboxed
    seat runs the shim from its empty home, where no version is active, and mise falls
    through to the next `python3` on PATH: the bot plays, on a Python it did not name."""
    monkeypatch.setattr(bot_files, "_MANAGERS", ())
    _, boxed = play(tmp_path, mise_bot(tmp_path, ".tool-versions", mise_python[0]))
    assert boxed and os.path.realpath(boxed[0]["prefix"]) != str(mise_python[1]), boxed[0]


@needs_mise
def test_check_v_says_mises_answer_shows_its_python_and_who_asked(tmp_path, mise_python):
    version, prefix = mise_python
    bot = mise_bot(tmp_path, ".tool-versions", version)
    result = invoke("check", "owner", "--command", " ".join(bot["command"]), "--hands", "1", "-v")
    said = flat(result.output)
    assert result.exit_code == 0, said
    answer = f"{tmp_path / 'mise' / 'data'}/installs/python/{version}/bin/python3"
    assert f"{prefix} (a Python installation on this machine: the version manager's answer for python3 " \
           "from the bot's folder)" in said, said
    assert f"{answer} (the version manager's answer for python3 from the bot's folder (a link to a Python " \
           "installation))" in said, said


# --- conda and uv-managed Pythons, laid out on disk as their installers lay them out --------------

def conda_env(prefix: Path) -> Path | None:
    """A conda environment as conda lays one out (conda-meta/, bin/python3, lib/python3.X),
    its Python copied from the system's: no conda channel is needed to test the wall."""
    python = organizer_python(prefix)
    if python is not None:
        (prefix / "conda-meta").mkdir()
        (prefix / "conda-meta" / "history").write_text("==> 2026-01-01 00:00:00 <==\n")
    return python


def uv_managed(home: Path) -> Path | None:
    """A uv-managed Python as `uv python install` lays one out under the organizer's home,
    its Python copied from the system's (no download host is needed)."""
    root = home / ".local" / "share" / "uv" / "python"
    root.mkdir(parents=True)
    python = organizer_python(root / "staging")
    if python is None:
        return None
    prefix = root / f"cpython-{python_version(python)}-linux-x86_64-gnu"
    shutil.rmtree(root / "staging")
    return organizer_python(prefix)


def shown_outside(command: list[str], folder: Path) -> set[str]:
    """What the wall shows the command outside `folder`, besides the system folders."""
    return {p for p in bot_files.footprint(tuple(command)).paths if not p.startswith(str(folder))}


@pytest.mark.parametrize("rule", ["now", "before"])
def test_a_bot_on_a_conda_environments_python_plays_with_only_that_environment_shown(tmp_path, rule, monkeypatch):
    """`command = [".../envs/napenv/bin/python3", "bot/owner.py"]`: the environment is shown,
    nothing else outside the bot's folder; before (the control), the seat could not start."""
    python = conda_env(tmp_path / "miniconda" / "envs" / "napenv")
    if python is None:
        pytest.skip("no statically linked system Python to copy into a conda environment")
    (tmp_path / "bot").mkdir()
    shutil.copy(OWNER, tmp_path / "bot" / "owner.py")
    bot = {"name": "owner", "command": [str(python), str(tmp_path / "bot" / "owner.py"), "--report"]}
    assert shown_outside(bot["command"], tmp_path / "bot") == {str(python), str(python.parent.parent)}
    if rule == "before":
        monkeypatch.setattr("naparena.arena.match.channel.footprint", lambda argv, files=(), avoid=():
                            bot_files.Footprint.showing(tuple(argv), [(str(tmp_path / "bot"), "its folder")]))
        with pytest.raises(ConfigError, match="failed its handshake"):
            play(tmp_path / "boxed", bot)
        return
    _, off = play(tmp_path / "off", bot, mode="off")
    _, boxed = play(tmp_path / "boxed", bot)
    assert off and boxed and off[0] == boxed[0] and boxed[0]["prefix"] == str(python.parent.parent), boxed[0]


def test_a_bots_venv_made_from_a_uv_managed_python_plays_with_only_that_python_shown(tmp_path, monkeypatch):
    """A bot's `.venv` made from a uv-managed Python under the organizer's home (as `uv
    venv` makes one): its pyvenv.cfg, the bot's own byte, names that Python, which is a
    runtime installation; it is shown, the home around it is not."""
    home = tmp_path / "home"
    python = uv_managed(home)
    if python is None:
        pytest.skip("no statically linked system Python to copy into a uv-managed layout")
    (home / "secret.txt").write_text("the organizer's\n")
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "bot").mkdir()
    shutil.copy(OWNER, tmp_path / "bot" / "owner.py")
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(tmp_path / "bot" / ".venv")], check=True)
    venv_python = tmp_path / "bot" / ".venv" / "bin" / "python"
    bot = {"name": "owner", "command": [str(venv_python), str(tmp_path / "bot" / "owner.py"), "--report",
                                        f"@{home / 'secret.txt'}"]}
    assert shown_outside(bot["command"], tmp_path / "bot") == {str(python.parent.parent)}
    _, off = play(tmp_path / "off", bot, mode="off")
    _, boxed = play(tmp_path / "boxed", bot)
    assert off and boxed and off[0]["base_prefix"] == boxed[0]["base_prefix"] == str(python.parent.parent)
    assert off[0]["executable"] == boxed[0]["executable"] == str(venv_python), boxed[0]
    assert off[0][f"@{home / 'secret.txt'}"] == "the organizer's"  # the control: unsandboxed, the home is there
    assert boxed[0][f"@{home / 'secret.txt'}"].startswith("OSError"), boxed[0]


# --- uv ----------------------------------------------------------------------------------------

UV = shutil.which("uv") or next((str(p) for p in [Path(sys.executable).parent / "uv"] if p.exists()), None)
needs_uv = pytest.mark.skipif(UV is None, reason="no uv on PATH (pip install uv)")


def uv_env(tmp_path: Path) -> dict[str, str]:
    """uv offline, with a cache of the test's own."""
    return {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_OFFLINE": "1"}


@needs_uv
def test_a_uv_project_bot_plays_sandboxed_as_unsandboxed(tmp_path, monkeypatch):
    """`uv run --project bots/owl bots/owl/bot.py`: uv's project venv and the Python it
    was made from (a runtime installation, named by the venv's pyvenv.cfg) are shown."""
    owl = tmp_path / "bots" / "owl"
    owl.mkdir(parents=True)
    shutil.copy(OWNER, owl / "bot.py")
    (owl / "pyproject.toml").write_text('[project]\nname = "owl"\nversion = "0.1.0"\ndependencies = []\n')
    env = uv_env(tmp_path)
    subprocess.run([UV, "sync", "--project", str(owl), "--python", sys.executable], check=True, env=env,
                   capture_output=True)
    for key in ("UV_CACHE_DIR", "UV_OFFLINE"):
        monkeypatch.setenv(key, env[key])
    bot = {"name": "owl", "command": [UV, "run", "--project", "bots/owl", "bots/owl/bot.py", "--report"]}
    _, off = play(tmp_path, bot, mode="off", log_dir="logs-off")
    _, boxed = play(tmp_path, bot, log_dir="logs-boxed")
    assert off and boxed and off[0] == boxed[0] and boxed[0]["prefix"] == str(owl / ".venv"), boxed[0]


SCRIPT_HEAD = '# /// script\n# requires-python = ">=3.11"\n# dependencies = []\n# ///\n'


@needs_uv
def test_uv_run_script_is_one_clear_line_and_the_prepared_interpreter_plays(tmp_path):
    """`uv run --script` makes its environment as it starts: sandboxed, one line says so
    and how to prepare it; the interpreter `uv python find --script` names then plays."""
    owl = tmp_path / "bots" / "owl"
    owl.mkdir(parents=True)
    (owl / "bot.py").write_text(SCRIPT_HEAD + OWNER.read_text())
    with pytest.raises(ConfigError) as e:
        play(tmp_path / "a", {"name": "owl", "command": [UV, "run", "--script", str(owl / "bot.py")]})
    assert f"uv sync --script {owl / 'bot.py'}" in str(e.value) and "uv python find --script" in str(e.value)
    env = uv_env(tmp_path)
    subprocess.run([UV, "sync", "--script", str(owl / "bot.py"), "--python", sys.executable], check=True, env=env,
                   capture_output=True)
    python = subprocess.run([UV, "python", "find", "--script", str(owl / "bot.py")], check=True, env=env,
                            capture_output=True, text=True).stdout.strip()
    run, said = play(tmp_path / "b", {"name": "owl", "command": [python, str(owl / "bot.py"), "--report"]})
    assert faults(run) == [] and said and said[0]["executable"] == python
