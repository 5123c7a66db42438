"""A hostile bot author against the wall the organizer draws, past the cases of
`test_hostile_footprint.py`: the author controls every byte of the bot's folder (its
venv, a folder dressed as a Python installation or a JDK, its links) and nothing else;
the organizer writes an innocent entry and runs it from wherever they like.

Each case plays a real run under the default sandbox and the same with
`sandbox = "off"`: the control, where every read succeeds. The prober
(`tests/seat_programs/prober.py`) reports what it read; the secrets are the tournament
file, a match file of an earlier run of the same file, another bot's file, `/etc/shadow`,
a key in the organizer's home and a note of the organizer's beside the tournament file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.match import bot_files, sandbox
from naparena.arena.records.rundir import MATCHES, new_run_dir
from naparena.arena.rerun import rerun
from naparena.arena.session import Session
from naparena.arena.setup.reader import load_tournament
from naparena.errors import ConfigError
from tests.helpers import flat, invoke

PROBER = Path(__file__).parent / "seat_programs" / "prober.py"
NO_BWRAP = sandbox.unavailable()
pytestmark = pytest.mark.skipif(NO_BWRAP is not None, reason=f"no seat sandbox here: {NO_BWRAP}")
ETC = "/etc/shadow" if os.access("/etc/shadow", os.R_OK) else "/etc/hostname"
PYTHON = "/usr/bin/python3"


@pytest.fixture
def arena(tmp_path, monkeypatch):
    """A tournament folder as an organizer keeps one (an earlier run's match files in its
    log folder, another bot with a secret, a note of the organizer's), their home beside
    it (HOME) with a key in it, and a folder elsewhere; the working directory is the
    tournament's folder."""
    home = tmp_path / "home"
    tmp_path = tmp_path / "arena"
    (tmp_path / "logs" / "earlier" / MATCHES).mkdir(parents=True)
    (tmp_path / "logs" / "earlier" / MATCHES / "000001.json").write_text('{"deals": "the same as now"}\n')
    (tmp_path / "bots" / "evil").mkdir(parents=True)
    (tmp_path / "bots" / "other").mkdir()
    shutil.copy(PROBER, tmp_path / "bots" / "other" / "bot.py")
    (tmp_path / "bots" / "other" / "secret.txt").write_text("theirs\n")
    (tmp_path / "notes.txt").write_text("the organizer's notes\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("the organizer's key\n")
    (tmp_path.parent / "elsewhere").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def secrets(folder: Path) -> dict[str, str]:
    """Each secret as the prober is told to read it (`@` + an absolute path)."""
    return {"tournament": f"@{folder / 't.toml'}", "earlier run": f"@{folder / 'logs' / 'earlier' / MATCHES}",
            "other bot": f"@{folder / 'bots' / 'other' / 'secret.txt'}", "etc": f"@{ETC}",
            "home": f"@{folder.parent / 'home' / '.ssh' / 'id_ed25519'}", "notes": f"@{folder / 'notes.txt'}"}


def tournament(folder: Path, command: list[str], mode: str) -> Path:
    """bots/evil (with `command`) against bots/other and `random`, in t.toml."""
    config = {
        "tournament": {"name": "hostile", "seed": 3, "seeds": 2, "hands": 2, "table": 3, "workers": 2,
                       "timeout": 30.0},
        "seats": {"sandbox": mode},
        "bots": [{"alias": "evil", "name": "evil", "command": command},
                 {"alias": "other", "name": "other", "command": [PYTHON, "bots/other/bot.py"]},
                 {"name": "random"}],
        "variants": [{"name": "classic"}]}
    file = folder / "t.toml"
    file.write_text(tomli_w.dumps(config))
    return file


def reports(run: Path) -> list[dict]:
    """The evil seat's reports, as the run's run.log has them."""
    lines = (run / "run.log").read_text().splitlines()
    return [json.loads(line.split("PROBE ", 1)[1]) for line in lines if "(evil) stderr: PROBE " in line]


def play(folder: Path, command: list[str], mode: str, **options) -> list[dict]:
    session = Session.open(tournament(folder, command, mode), workers=2, **options)
    session.play()
    return reports(session.run_dir.path)


def leaked(found: list[dict], folder: Path, wanted: dict[str, str] | None = None) -> set[str]:
    """The secrets any report read (not an error)."""
    assert found, "the evil seat never reported"
    wanted = wanted or secrets(folder)
    return {name for r in found for name, arg in wanted.items()
            if arg in r and not str(r[arg]).startswith("OSError")}


def attack(folder: Path, command_head: list[str], mode: str, **options) -> set[str]:
    return leaked(play(folder, [*command_head, *secrets(folder).values()], mode, **options), folder)


def prober(folder: Path) -> Path:
    path = folder / "bots" / "evil" / "prober.py"
    shutil.copy(PROBER, path)
    return path


# --- a folder of the bot's own, dressed as a runtime installation ---------------------------------

@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_pth_file_in_an_installation_the_bots_own_link_reaches_shows_it_nothing(arena, mode):
    """The organizer names the bot's venv's python; the author makes it a link to
    `rt/bin/python3` in the bot's folder (a shell script running the system's Python),
    with `rt/lib/python3.11/site-packages/x.pth` naming the organizer's ~/.ssh, /etc and
    the tournament folder. The folder the link reaches was taken for the installation,
    its .pth files for the organizer's word: all three were shown."""
    evil = arena / "bots" / "evil"
    prober(arena)
    (evil / ".venv" / "bin").mkdir(parents=True)
    (evil / ".venv" / "pyvenv.cfg").write_text(f"home = {os.path.dirname(PYTHON)}\n")
    site = evil / "rt" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (evil / "rt" / "bin").mkdir()
    (evil / "rt" / "bin" / "python3").write_text(f'#!/bin/sh\nexec {PYTHON} "$@"\n')
    (evil / "rt" / "bin" / "python3").chmod(0o755)
    os.symlink("../../rt/bin/python3", evil / ".venv" / "bin" / "python")
    (site / "x.pth").write_text(f"{arena.parent / 'home' / '.ssh'}\n/etc\n{arena}\n")
    got = attack(arena, ["bots/evil/.venv/bin/python", "bots/evil/prober.py"], mode)
    assert got == (set() if mode == "auto" else set(secrets(arena)))


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_jdk_of_the_bots_own_links_it_nothing_from_etc(arena, mode):
    """The organizer runs a compiled bot, `bots/evil/bot`; it is a link to `jdk/bin/java`
    in the bot's folder (a shell script), beside a `lib/modules` (a JDK's landmark) and
    links into /etc (`/etc/shadow/x`, `/etc/ssh/...`). A JDK's links into /etc were the
    organizer's word wherever the JDK was: /etc/shadow was shown."""
    evil = arena / "bots" / "evil"
    prober(arena)
    (evil / "jdk" / "bin").mkdir(parents=True)
    (evil / "jdk" / "lib").mkdir()
    (evil / "jdk" / "lib" / "modules").write_text("")
    java = evil / "jdk" / "bin" / "java"
    java.write_text(f'#!/bin/sh\nexec {PYTHON} "$(dirname "$(readlink -f "$0")")/../../prober.py" "$@"\n')
    java.chmod(0o755)
    os.symlink("jdk/bin/java", evil / "bot")
    os.symlink(f"{ETC}/x", evil / "jdk" / "lib" / "security")
    os.symlink("/etc/ssh/ssh_config", evil / "jdk" / "conf")
    got = attack(arena, ["bots/evil/bot"], mode)
    assert got == (set() if mode == "auto" else set(secrets(arena)))


# --- the runs of the same file, wherever they are ----------------------------------------------------

def beside_the_file(arena: Path) -> list[str]:
    """A bot kept beside the tournament file: its folder is the tournament's, shown with
    the run's places carved out."""
    shutil.copy(PROBER, arena / "evil.py")
    return [PYTHON, "evil.py"]


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_an_earlier_run_beside_the_file_stays_hidden_when_run_from_another_folder(arena, monkeypatch, mode):
    """The earlier run was made from the tournament's folder (logs/ beside the file);
    today the organizer types `naparena run arena/t.toml` from the folder above. Only
    the working directory's logs/ was hidden: the earlier run, the same deals, was read."""
    command = beside_the_file(arena)
    file = tournament(arena, [*command, *secrets(arena).values()], mode)
    monkeypatch.chdir(arena.parent / "elsewhere")
    session = Session.open(os.path.relpath(file), workers=2)
    session.play()
    assert session.run_dir.path.parent == arena.parent / "elsewhere" / "logs"
    got = leaked(reports(session.run_dir.path), arena)
    assert got == ({"notes"} if mode == "auto" else set(secrets(arena)))


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_the_runs_beside_a_run_in_another_log_folder_stay_hidden(arena, mode):
    """`--log-dir runs` (a folder beside the file, not the file's log_dir): the second
    run of the same file reads the first, whose deals are its own, card for card."""
    command = beside_the_file(arena)
    first = Session.open(tournament(arena, command, mode), log_dir=arena / "runs", workers=2)
    first.play()
    earlier = {"first run": f"@{first.run_dir.path / MATCHES}"}
    second = Session.open(tournament(arena, [*command, *earlier.values()], mode), log_dir=arena / "runs", workers=2)
    second.play()
    assert second.run_dir.path != first.run_dir.path
    got = leaked(reports(second.run_dir.path), arena, earlier)
    assert got == (set() if mode == "auto" else {"first run"})


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_rerun_hides_the_run_it_replays(arena, monkeypatch, mode):
    """`naparena verify --rerun RUN` plays RUN again into a scratch folder: its seats saw
    RUN itself (every deal) where RUN was not in the working directory's logs/. The
    command is replayed as the run recorded it, so the prober reads `@evil-reads`, a
    link of the bot's (not hashed: no file the command names) to RUN's matches."""
    command = [*beside_the_file(arena), "@evil-reads"]
    file = tournament(arena, command, mode)
    run = new_run_dir(load_tournament(file), arena / "runs")
    os.symlink(run / MATCHES, arena / "evil-reads")
    Session.open(file, log_dir=arena / "runs", workers=2).play()
    monkeypatch.chdir(arena.parent / "elsewhere")
    scratch = arena.parent / "scratch" / "run"
    found = rerun(run, scratch, workers=2)
    assert not found.problems and not found.unrunnable, (found.problems, found.unrunnable)
    wanted = {"the run replayed": "@evil-reads"}
    assert leaked(reports(run), arena, wanted) == (set() if mode == "auto" else set(wanted))
    assert leaked(reports(scratch), arena, wanted) == (set() if mode == "auto" else set(wanted))


# --- what another user leaves where anyone may write ----------------------------------------------

JS_PROBER = r"""
// The prober in Node: reads each @PATH at its first decision, reports on stderr.
const fs = require("fs");
const rl = require("readline").createInterface({ input: process.stdin });
let decisions = 0;
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
function read(path) {
  try {
    return fs.statSync(path).isDirectory() ? fs.readdirSync(path).sort() : fs.readFileSync(path, "utf8").split("\n")[0];
  } catch (e) { return "OSError: " + e.code; }
}
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.type === "hello") send({ type: "hello", protocol: 1, name: "jsprober", params: {} });
  else if (m.type === "decide") {
    if (++decisions === 1) {
      const facts = {};
      for (const a of process.argv.slice(2)) if (a.startsWith("@")) facts[a] = read(a.slice(1));
      process.stderr.write("PROBE " + JSON.stringify(facts) + "\n");
    }
    send({ type: "answer", answer: m.view.legal[0] });
  } else if (m.type === "shutdown") process.exit(0);
});
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node (Debian: apt install nodejs)")
@pytest.mark.skipif(os.getuid() != 0, reason="making a link another user owns needs root")
@pytest.mark.parametrize(("mode", "owner"), [("auto", "nobody"), ("off", "nobody"), ("auto", "the organizer")])
def test_a_node_modules_link_another_user_left_above_the_bots_folder_shows_it_nothing(arena, mode, owner):
    """A Node bot is shown every node_modules from its folder upwards, as Node resolves
    them. Above the tournament folder (in /tmp, say, where anyone may write) another user
    leaves `node_modules`, a link to the organizer's ~/.ssh: it was shown as the
    organizer's word. The organizer's own link there still is (the last case)."""
    (arena / "bots" / "evil" / "bot.js").write_text(JS_PROBER)
    link = arena.parent / "node_modules"
    os.symlink(arena.parent / "home" / ".ssh", link)
    if owner == "nobody":
        os.lchown(link, 65534, 65534)
    wanted = {"home": f"@{link / 'id_ed25519'}"}
    found = play(arena, ["node", "bots/evil/bot.js", *wanted.values()], mode)
    assert leaked(found, arena, wanted) == (set() if (mode, owner) == ("auto", "nobody") else set(wanted))


# --- what is checked is what is shown -------------------------------------------------------------

def test_a_link_swapped_after_its_check_changes_nothing_shown(arena, monkeypatch):
    """bots/evil is a link to bots/evil-real when the footprint checks it; an accomplice
    points it at the tournament folder as the footprint's last path is checked. Each
    path was resolved again to be shown: the tournament folder was then bound (less the
    run's places: the organizer's notes and other tournaments with it)."""
    real = arena / "bots" / "evil-real"
    (arena / "bots" / "evil").rmdir()
    real.mkdir()
    shutil.copy(PROBER, real / "prober.py")
    shutil.copy(PROBER, arena / "prober.py")
    link = arena / "bots" / "evil"
    os.symlink(real, link)
    checked = bot_files._Door.organizer

    def swapped_at_the_last_check(door, path, why):
        if why == "files = [...]":
            os.unlink(link)
            os.symlink(arena, link)
        checked(door, path, why)

    monkeypatch.setattr(bot_files._Door, "organizer", swapped_at_the_last_check)
    found = bot_files.footprint.__wrapped__((PYTHON, str(link / "prober.py")), (str(arena / "notes.txt"),),
                                            (str(arena / "t.toml"), str(arena / "logs")))
    assert str(real) in found.exact and os.path.realpath(link) == str(arena)
    assert str(arena) not in found.exact, found.exact
    assert (str(link), str(real)) in found.links


# --- what naparena advises the organizer ----------------------------------------------------------

@pytest.mark.parametrize(("named", "advised"), [(".ssh/id_ed25519", False), ("shared/weights.txt", True)])
def test_a_bots_output_never_gets_a_hidden_file_of_a_home_advised(arena, named, advised):
    """A bot that fails its handshake after writing a path to stderr gets a hint: show it
    with files = [...]. Naming the organizer's private key, it got that advice too; a
    file the bot needs in the home (the control) still gets it."""
    home = arena.parent / "home"
    (home / "shared").mkdir()
    (home / "shared" / "weights.txt").write_text("0.25\n")
    bot = arena / "bots" / "evil" / "bot.py"
    bot.write_text(f"import sys\nsys.stderr.write('cannot open {home / named}\\n')\nsys.exit(1)\n")
    tournament(arena, [PYTHON, "bots/evil/bot.py"], "auto")
    result = invoke("run", "t.toml")
    assert result.exit_code == 2, result.output
    said = flat(result.output)
    assert f"the seat sandbox hides {home / named}" in said, said
    assert (f'files = ["{home / named}"]' in said) == advised, said


# --- the organizer's own JDK ---------------------------------------------------------------------

def jdk_links_into_etc() -> list[str]:
    """Where the system JDK's own links lead under /etc (Debian: its conf/ and cacerts)."""
    java = shutil.which("java")
    if java is None:
        return []
    home = Path(os.path.realpath(java)).parent.parent
    return sorted({os.path.realpath(p) for p in home.rglob("*") if p.is_symlink()
                   and os.path.realpath(p).startswith("/etc/")})


@pytest.mark.skipif(not any(not p.startswith("/etc/java") for p in jdk_links_into_etc()),
                    reason="no JDK here links into /etc beyond its own configuration")
def test_a_java_bot_sees_its_jdks_configuration_and_no_other_folder_of_etc(arena, tmp_path):
    """Debian's JDK links its cacerts to /etc/ssl/certs/java/cacerts: the whole first
    folder under /etc of every link was shown, so `java Bot.java` saw /etc/ssl (its
    private/ folder, the machine's TLS keys, with it). Now only /etc/java*; the control
    reads the same file unsandboxed."""
    secret = "/etc/ssl/openssl.cnf"
    assert os.path.isfile(secret) and any(p.startswith("/etc/ssl/") for p in jdk_links_into_etc())
    bot = arena / "bots" / "evil" / "Bot.java"
    bot.write_text("public class Bot { public static void main(String[] a) {} }\n")
    found = bot_files.footprint.__wrapped__(("java", str(bot)), (), ())
    assert any(p.startswith("/etc/java") for p in found.paths), found.paths
    view = sandbox.view_of(sandbox.Shown(exact=found.exact, links=found.links))
    wrapped = sandbox.wrap(["/bin/cat", secret], view, str(tmp_path / "seat"), 16)
    try:
        inside = subprocess.run(wrapped.argv, pass_fds=wrapped.fds, capture_output=True, text=True, check=False)
    finally:
        wrapped.started()
    outside = subprocess.run(["/bin/cat", secret], capture_output=True, text=True, check=False)
    assert outside.returncode == 0 and outside.stdout  # the control: there to read
    assert inside.returncode != 0 and "No such file" in inside.stderr, inside


# --- another name of the tournament file, past the look-out's reach ------------------------------------

def hard_link_behind(arena: Path, folders: int, files: int) -> tuple[Path, Path]:
    """The tournament file (written now: play() rewrites it in place, the same inode) and
    its second name in the bot's folder, in the last of `folders` folders of `files`
    empty files the search walks through (or beside `files` files, for one folder)."""
    prober(arena)
    evil = arena / "bots" / "evil"
    for f in range(folders):
        folder = evil / f"f{f:03d}" if folders > 1 else evil
        folder.mkdir(exist_ok=True)
        for i in range(files):
            (folder / f"{i:05d}").touch()
    last = [folder for folder, _, _ in os.walk(evil)][-1]
    play_file = tournament(arena, [], "auto")
    alias = Path(last) / "seed.toml"
    os.link(play_file, alias)
    return play_file, alias


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_hard_link_to_the_tournament_file_behind_twenty_thousand_files_is_carved_out(arena, mode):
    """The tournament file has a second name in the bot's folder, as in
    `test_a_hard_link_to_the_tournament_file_in_the_bots_folder_is_carved_out`, but
    in the last of 101 folders of 201 empty files: the search for other names stopped
    after 20,000 and the folder was shown whole, the tournament file in it. A folder too
    big to look through is now rebuilt entry by entry, each folder in it looked through."""
    play_file, alias = hard_link_behind(arena, 101, 201)
    wanted = {"tournament": f"@{alias}"}
    found = play(arena, [PYTHON, "bots/evil/prober.py", "--brief", *wanted.values()], mode)
    assert alias.stat().st_ino == play_file.stat().st_ino and alias.read_text() == play_file.read_text()
    assert leaked(found, arena, wanted) == (set() if mode == "auto" else set(wanted))


def test_twenty_thousand_files_side_by_side_beside_a_hidden_files_other_name_are_refused(arena):
    """20,001 files in one folder, too many to look through or to show one by one: the
    seat is refused before play, and the organizer told why."""
    hard_link_behind(arena, 1, 20_001)
    with pytest.raises(ConfigError, match="too many to look through for another name"):
        play(arena, [PYTHON, "bots/evil/prober.py"], "auto")
