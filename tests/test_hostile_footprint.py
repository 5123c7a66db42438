"""A bot's own bytes never widen its sandbox (docs/explanation/sandbox.md, "Who draws the
wall"): a hostile author's `#!` lines, `exec` lines, `.pth` files, editable finders,
`pyvenv.cfg` home, RUNPATH, a version manager's answer, symlinks swapped during the run,
a resumed run's predictable folder, writes to `/` and `/run`, and `/proc/1/cmdline`.

Every case plays a real run under the default sandbox from an innocent tournament entry
(`command = ["/usr/bin/python3", "bots/evil/prober.py", ...]`), and the same with
`sandbox = "off"`: the control, where the same reads succeed. The prober reports what it
read (`tests/seat_programs/prober.py`); the secrets are the tournament file (its seed
makes every deal), an earlier run's match files (the same deals), another bot's file,
/etc and the organizer's home.
"""

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

from naparena.arena.match import bot_files, sandbox
from naparena.arena.records.rundir import MATCHES
from naparena.arena.session import Session
from naparena.errors import ConfigError
from tests.helpers import flat, invoke, mise_for, needs_mise, organizer_python

PROBER = Path(__file__).parent / "seat_programs" / "prober.py"
NO_BWRAP = sandbox.unavailable()
pytestmark = pytest.mark.skipif(NO_BWRAP is not None, reason=f"no seat sandbox here: {NO_BWRAP}")
CC = shutil.which("cc") or shutil.which("gcc")
ETC = "/etc/shadow" if os.access("/etc/shadow", os.R_OK) else "/etc/hostname"
PYTHON = "/usr/bin/python3"


@pytest.fixture
def arena(tmp_path, monkeypatch):
    """A tournament folder as an organizer keeps one: an earlier run's match files in the
    log folder, a second bot with a secret, and a home of the organizer's (HOME, beside
    it) with a secret in it; the working directory is the tournament's folder."""
    home = tmp_path / "home"
    tmp_path = tmp_path / "arena"
    (tmp_path / "logs" / "earlier" / MATCHES).mkdir(parents=True)
    (tmp_path / "logs" / "earlier" / MATCHES / "000001.json").write_text('{"deals": "the same as now"}\n')
    (tmp_path / "bots" / "evil").mkdir(parents=True)
    (tmp_path / "bots" / "other").mkdir()
    shutil.copy(PROBER, tmp_path / "bots" / "other" / "bot.py")
    (tmp_path / "bots" / "other" / "secret.txt").write_text("theirs\n")
    (home / "lib").mkdir(parents=True)
    (home / "secret.txt").write_text("the organizer's\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def secrets(folder: Path) -> dict[str, str]:
    """Each secret as the prober is told to read it (`@` + an absolute path)."""
    return {"tournament": f"@{folder / 't.toml'}", "earlier run": f"@{folder / 'logs' / 'earlier' / MATCHES}",
            "other bot": f"@{folder / 'bots' / 'other' / 'secret.txt'}", "etc": f"@{ETC}",
            "home": f"@{folder.parent / 'home' / 'secret.txt'}"}


def evil(folder: Path, header: str = "") -> Path:
    """The prober as bots/evil/prober.py, `header` (the attack) before its code."""
    path = folder / "bots" / "evil" / "prober.py"
    path.write_text(header + PROBER.read_text())
    return path


def play(folder: Path, command: list[str], mode: str, *, files: list[str] | None = None, seats: dict | None = None,
         run: Path | None = None, resume: bool = False, other: bool = True) -> list[dict]:
    """Play bots/evil (with `command`) against bots/other (unless not `other`) and
    `random`, 2 workers; the evil seat's reports, as run.log has them."""
    config = {
        "tournament": {"name": "hostile", "seed": 3, "seeds": 2, "hands": 2, "table": 3, "workers": 2,
                       "timeout": 30.0},
        "seats": {"sandbox": mode, **(seats or {})},
        "bots": [{"alias": "evil", "name": "evil", "command": command, **({"files": files} if files else {})},
                 *([{"alias": "other", "name": "other", "command": [PYTHON, "bots/other/bot.py"]}] if other else []),
                 {"name": "random"}],
        "variants": [{"name": "classic"}]}
    file = folder / "t.toml"
    if not resume:
        file.write_text(tomli_w.dumps(config))
    run = run or folder / "logs" / f"now-{mode}"
    session = Session.resume(run, workers=2) if resume else Session.open(file, run, workers=2)
    session.play()
    lines = (run / "run.log").read_text().splitlines()
    return [json.loads(line.split("PROBE ", 1)[1]) for line in lines if "(evil) stderr: PROBE " in line]


def leaked(reports: list[dict], folder: Path) -> set[str]:
    """The secrets any report read (not an error)."""
    wanted = secrets(folder)
    return {name for r in reports for name, arg in wanted.items()
            if arg in r and not str(r[arg]).startswith("OSError")}


def attack(folder: Path, command_head: list[str], mode: str, **options) -> set[str]:
    reports = play(folder, [*command_head, *secrets(folder).values()], mode, **options)
    assert reports, "the evil seat never reported"
    return leaked(reports, folder)


# --- what the bot's own file says ------------------------------------------------------------

HEADERS = {
    "shebang, relative": "#!/usr/bin/env ./logs\n",
    "shebang, absolute": "#!{folder}/t.toml\n",
    "shebang, env": "#!/usr/bin/env {folder}/t.toml\n",
    "exec lines": '#!/usr/bin/env python3\n"""\nexec {folder}/t.toml\nexec {etc}\nexec {folder}/bots/other\n'
                  'exec {folder}/logs\n"""\n',
}


@pytest.mark.parametrize("mode", ["auto", "off"])
@pytest.mark.parametrize("case", list(HEADERS))
def test_a_bots_own_first_lines_show_it_nothing(arena, case, mode):
    script = evil(arena, HEADERS[case].format(folder=arena, etc=ETC))
    got = attack(arena, [PYTHON, str(script)], mode)
    assert got == (set() if mode == "auto" else set(secrets(arena))), case


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_shell_bots_exec_lines_show_it_nothing(arena, mode):
    """Run by a shell, a script's `exec` lines are its programs: those outside the bot's
    folder and every runtime installation are refused; the real program still runs."""
    script = arena / "bots" / "evil" / "run.sh"
    evil(arena)
    script.write_text(f"if false; then\n  exec {arena}/t.toml\n  exec {arena}/logs\nfi\n"
                      f'exec {PYTHON} "$(dirname "$0")/prober.py" "$@"\n')
    got = attack(arena, ["sh", str(script)], mode)
    assert got == (set() if mode == "auto" else set(secrets(arena)))


# --- what its environment says -----------------------------------------------------------------

def evil_venv(folder: Path) -> Path:
    """A venv in the bot's folder, made from the interpreter running the tests."""
    venv = folder / "bots" / "evil" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv


def site(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_pth_file_in_the_bots_venv_shows_it_nothing(arena, mode):
    venv = evil_venv(arena)
    (site(venv) / "evil.pth").write_text(f"{arena.parent / 'home'}\n/etc\n{arena / 'logs'}\n{arena}\n")
    got = attack(arena, [str(venv / "bin" / "python"), str(evil(arena))], mode)
    assert got == (set() if mode == "auto" else set(secrets(arena)))


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_an_editable_finder_in_the_bots_venv_shows_it_nothing(arena, mode):
    venv = evil_venv(arena)
    (site(venv) / "__editable___evil_0_finder.py").write_text(
        f"MAPPING = {{'evil': '{arena / 'logs'}', 'home': '{arena.parent / 'home'}', 'etc': '/etc'}}\n"
        "def install():\n    pass\n")
    (site(venv) / "__editable__.evil-0.pth").write_text("import __editable___evil_0_finder; "
                                                        "__editable___evil_0_finder.install()\n")
    got = attack(arena, [str(venv / "bin" / "python"), str(evil(arena))], mode)
    assert got == (set() if mode == "auto" else set(secrets(arena)))


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_pyvenv_cfg_home_shows_it_nothing(arena, mode):
    """`home` names a folder whose parent has a lib/ (the organizer's home here): not a
    runtime installation, so not shown; the interpreter the venv's links reach still runs."""
    venv = evil_venv(arena)
    config = venv / "pyvenv.cfg"
    lines = [f"home = {arena.parent / 'home' / 'bin'}" if line.startswith("home") else line
             for line in config.read_text().splitlines()]
    config.write_text("\n".join(lines) + "\n")
    got = attack(arena, [str(venv / "bin" / "python"), str(evil(arena))], mode)
    assert got == (set() if mode == "auto" else set(secrets(arena)))


@pytest.mark.skipif(CC is None, reason="no C compiler (Debian: apt install gcc)")
@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_runpath_with_origin_shows_it_nothing(arena, mode):
    """A compiled launcher whose RUNPATH names the tournament folder through $ORIGIN, the
    organizer's home and /etc; it execs the prober."""
    evil(arena)
    source = arena / "launch.c"
    source.write_text('#include <unistd.h>\nint main(int c, char **v) { v[0] = "python3";\n'
                      f'  execv("{PYTHON}", (char *[]){{"python3", "{arena}/bots/evil/prober.py", '
                      + ", ".join(f'"{s}"' for s in secrets(arena).values()) + ", 0}); return 127; }\n")
    launcher = arena / "bots" / "evil" / "launch"
    subprocess.run([CC, "-o", str(launcher), str(source),
                    f"-Wl,-rpath,$ORIGIN/../..:{arena.parent / 'home'}:/etc", "-Wl,--enable-new-dtags"], check=True)
    shown = bot_files.footprint((str(launcher),)).paths
    assert not any(p in shown for p in (str(arena), str(arena / "home"), "/etc"))
    reports = play(arena, [str(launcher)], mode)
    assert reports and leaked(reports, arena) == (set() if mode == "auto" else set(secrets(arena)))


# --- a version manager's answer ---------------------------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_version_managers_answer_naming_the_log_folder_shows_it_nothing(arena, monkeypatch, mode):
    """A manager (mise, found on PATH) asked from the bot's folder answers an interpreter
    in the log folder: refused, and the seat runs the shim the organizer's PATH has."""
    shims = arena / "shims"
    shims.mkdir()
    planted = arena / "logs" / "earlier" / "bin"
    planted.mkdir()
    os.symlink(PYTHON, planted / "python3")
    (shims / "mise").write_text(f'#!/bin/sh\nif [ "$1" = which ]; then echo {planted}/python3; exit 0; fi\n'
                                f'exec {PYTHON} "$@"\n')
    (shims / "mise").chmod(0o755)
    os.symlink("mise", shims / "evilpython")
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    found = bot_files.footprint(("evilpython", str(evil(arena))), (), (str(arena / "logs"),))
    assert found.argv[0] == "evilpython" and not any(p.startswith(str(arena / "logs")) for p in found.paths)
    assert any(p == f"{planted}/python3" for p, _ in found.refused)
    assert attack(arena, ["evilpython", str(evil(arena))], mode) == (set() if mode == "auto" else set(secrets(arena)))


# --- the real mise, asked from the bot's folder ------------------------------------------------------

MISE_ATTACKS = {
    "a version linked to the log folder": (".tool-versions", "python 6.6.6\n"),
    "a version linked to the organizer's home": ("mise.toml", '[tools]\npython = "6.6.7"\n'),
    "a path: version in the log folder": (".tool-versions", "python path:{logs}\n"),
    "a path: version in the organizer's home": ("mise.toml", '[tools]\npython = "path:{home}"\n'),
}


@pytest.fixture
def planted_mise(arena, monkeypatch):
    """The organizer's mise (its folders beside the arena) with two versions linked where
    no runtime is: 6.6.6 to the earlier run in the log folder, 6.6.7 to the organizer's
    home, each holding a bin/python3 (a link to the system's Python)."""
    home = arena.parent / "home"
    planted = arena / "logs" / "earlier"
    for folder in (planted, home):
        (folder / "bin").mkdir()
        os.symlink(PYTHON, folder / "bin" / "python3")
    mise_for(arena.parent / "mise", monkeypatch, {"python@6.6.6": planted, "python@6.6.7": home})
    return {"logs": planted, "home": home}


@needs_mise
@pytest.mark.parametrize("mode", ["auto", "off"])
@pytest.mark.parametrize("case", list(MISE_ATTACKS))
def test_a_bots_mise_version_file_shows_it_nothing(arena, planted_mise, case, mode):
    """The bot's `.tool-versions` or `mise.toml` names a version the organizer's mise links
    to the log folder or the home, or a `path:` there: mise answers it, the wall refuses
    it (or shows only a link to the system's Python), and the seat reads no secret."""
    file, text = MISE_ATTACKS[case]
    script = evil(arena)
    (script.parent / file).write_text(text.format(**planted_mise))
    found = bot_files.footprint(("python3", str(script)), (), (str(arena / "logs"), str(arena / "t.toml")))
    for path in found.paths:
        if not path.startswith(str(script.parent)):
            assert bot_files.runtime_installation(os.path.realpath(path)) is not None, (path, found)
        assert not path.startswith((str(arena / "logs"), str(planted_mise["home"]) + "/lib")), found
    if "linked" in case or "log folder" in case:
        assert found.argv[0] == "python3" and found.refused, found
    assert attack(arena, ["python3", str(script)], mode) == (set() if mode == "auto" else set(secrets(arena)))


@needs_mise
def test_check_v_names_the_refused_mise_answer_and_why(arena, planted_mise):
    """`naparena check evil -v` with the tournament: the bot's folder and script shown by
    the organizer's word, mise's answer for the version linked to the log folder listed
    as named by the bot's files and not shown, with the reason."""
    script = evil(arena)
    (script.parent / ".tool-versions").write_text("python 6.6.6\n")
    config = {"tournament": {"name": "hostile", "seed": 3, "seeds": 1, "hands": 1, "table": 2},
              "bots": [{"alias": "evil", "name": "evil", "command": ["python3", "bots/evil/prober.py", "--brief"]},
                       {"name": "random"}], "variants": [{"name": "classic"}]}
    (arena / "t.toml").write_text(tomli_w.dumps(config))
    result = invoke("check", "evil", "--tournament", str(arena / "t.toml"), "--hands", "1", "-v")
    said = flat(result.output)
    assert result.exit_code == 0, said
    assert f"{script.parent} (the bot's folder: the command names {script} (the organizer's word))" in said
    assert "not shown, though the bot's own files name them" in said
    answer = f"{arena.parent / 'mise' / 'data'}/installs/python/6.6.6/bin/python3"
    assert f"{answer} (the version manager's answer for python3 from the bot's folder: a place of the run " \
           "or another bot's, which no seat may see)" in said, said


@needs_mise
def test_asking_mise_runs_none_of_the_bots_config(arena, planted_mise, monkeypatch):
    """A bot's mise.toml with a template that runs a command, and an `[env]` that sources
    a script of its own: asked from the bot's folder, mise runs neither, even where the
    organizer's environment trusts config files (CI, MISE_TRUSTED_CONFIG_PATHS). The
    control: mise asked with that whole environment runs the bot's command."""
    ran = arena.parent / "ran"
    script = evil(arena)
    (script.parent / "mise.toml").write_text(
        f'[env]\n_.source = "./env.sh"\n[tools]\npython = "{{{{ exec(command=\'touch {ran}\') }}}}6.6.6"\n')
    (script.parent / "env.sh").write_text(f"touch {ran}\n")
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("MISE_TRUSTED_CONFIG_PATHS", str(arena))
    found = bot_files.footprint(("python3", str(script)), (), (str(arena / "logs"),))
    assert found.argv[0] == "python3" and not ran.exists()
    subprocess.run(["mise", "which", "python3"], cwd=script.parent, capture_output=True, check=False)
    assert ran.exists()


# --- a runtime's layout where no runtime may be -------------------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_conda_layout_in_the_bots_folder_shows_it_nothing(arena, mode):
    """The bot's folder holds a conda environment (conda-meta/, a Python with its library)
    whose site-packages has a .pth naming the log folder, the home and /etc: the bot's
    own bytes, shown as its folder and nothing more."""
    env = arena / "bots" / "evil" / "env"
    python = organizer_python(env)
    if python is None:
        pytest.skip("no statically linked system Python to copy into a conda environment")
    (env / "conda-meta").mkdir()
    packages = next((env / "lib").glob("python3*")) / "site-packages"
    packages.mkdir()
    (packages / "evil.pth").write_text(f"{arena / 'logs'}\n{arena.parent / 'home'}\n/etc\n")
    script = evil(arena)
    found = bot_files.footprint((str(python), str(script)), (), (str(arena / "logs"),))
    assert all(p.startswith(str(script.parent)) for p in found.paths), found
    assert attack(arena, [str(python), str(script)], mode) == (set() if mode == "auto" else set(secrets(arena)))


@pytest.mark.parametrize("mode", ["auto", "off"])
@pytest.mark.parametrize("where", ["home", "arena"])
def test_a_python_layout_at_a_home_or_the_tournament_folder_reached_by_the_bots_link_shows_nothing(
        arena, mode, where):
    """The organizer's home (or the tournament folder) laid out as a Python installation
    (bin/python3, lib/python3.X/os.py, as one installed with --prefix=$HOME is), reached
    from the bot's venv through a link of the bot's (its pyvenv.cfg home): no runtime may
    be there, so the sandboxed bot cannot start, and no hint names the place; unsandboxed
    (the control), it starts and reads every secret."""
    place = arena.parent / "home" if where == "home" else arena
    python = organizer_python(place)
    if python is None:
        pytest.skip("no statically linked system Python to copy into a prefix")
    venv = arena / "bots" / "evil" / ".venv"
    (venv / "bin").mkdir(parents=True)
    os.symlink(place, arena / "bots" / "evil" / "py")
    (venv / "pyvenv.cfg").write_text(f"home = {arena / 'bots' / 'evil' / 'py' / 'bin'}\n")
    os.symlink("../../py/bin/python3", venv / "bin" / "python")
    script = evil(arena)
    command = [str(venv / "bin" / "python"), str(script)]
    found = bot_files.footprint(tuple(command), (), (str(arena / "logs"), str(arena / "t.toml")))
    assert all(p.startswith(str(script.parent)) for p in found.paths), found
    if mode == "off":
        assert attack(arena, command, mode) == set(secrets(arena))
        return
    with pytest.raises(ConfigError) as e:
        attack(arena, command, mode)
    hinted = re.findall(r'files = \["([^"]+)"\]', str(e.value))
    assert "failed its handshake" in str(e.value), str(e.value)
    assert all(h.startswith(str(script.parent)) or not h.startswith(str(place)) for h in hinted), hinted


# --- symlinks, and a folder swapped during the run -----------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_bot_folder_that_is_a_link_to_the_tournament_folder_shows_no_place_of_the_run(arena, mode):
    """bots/evil is a link to the tournament folder: the bot's link would make the
    organizer's folder its own (the other files there, the next tournament's file
    among them), so its folder is not shown, and the organizer is told why before play.
    Another bot in it would be in evil's folder: the organizer is told so too."""
    (arena / "bots" / "evil").rmdir()
    os.symlink(arena, arena / "bots" / "evil")
    shutil.copy(PROBER, arena / "prober.py")
    (arena / "final.toml").write_text("seed = 99\n")
    command = [PYTHON, str(arena / "bots" / "evil" / "prober.py"), f"@{arena / 'final.toml'}"]
    if mode == "auto":
        with pytest.raises(ConfigError, match="bot 'other' names bots/other/bot.py: lies in bot 'evil''s own path"):
            attack(arena, command, mode)
        with pytest.raises(ConfigError, match=f"{bot_files.FOLDER_LINKED}: a link makes it {arena}, which holds"):
            attack(arena, command, mode, other=False)
        return
    got = attack(arena, command, mode, other=False)
    assert got == set(secrets(arena))


def test_a_bot_folder_swapped_for_a_link_during_the_run_shows_no_place_of_the_run(arena):
    """An accomplice swaps bots/evil for a symlink to the tournament folder and back, in
    a loop, while the run plays: a seat either starts on the real folder, or is refused
    (the link is seen where the checked folder stood, or the tournament folder it makes
    the bot's is not shown), never shown the run's places nor the organizer's other files."""
    real = arena / "bots" / "evil-real"
    (arena / "bots" / "evil").rmdir()
    real.mkdir()
    shutil.copy(PROBER, real / "prober.py")
    shutil.copy(PROBER, arena / "prober.py")
    link = arena / "bots" / "evil"
    os.symlink(real, link)
    loop = (f"while :; do ln -sfn {arena} {link}.new && mv -T {link}.new {link}; "
            f"ln -sfn {real} {link}.new && mv -T {link}.new {link}; done")
    (arena / "final.toml").write_text("seed = 99\n")  # the next tournament's file: no place of this run
    wanted = {**secrets(arena), "next tournament": f"@{arena / 'final.toml'}"}
    swapper = subprocess.Popen(["sh", "-c", loop])
    try:
        command = [PYTHON, str(link / "prober.py"), *wanted.values()]
        try:
            reports = play(arena, command, "auto", other=False)
        except ConfigError as e:  # the handshake's seat met the link: refused, said so
            assert any(said in str(e) for said in ("changed while it was being shown", "which no seat may see",
                                                   bot_files.FOLDER_LINKED, "the seat sandbox hides")), str(e)
            reports = []
        assert swapper.poll() is None, "the swapping loop stopped"
    finally:
        swapper.kill()
        swapper.wait()
    got = {name for r in reports for name, arg in wanted.items() if arg in r and not str(r[arg]).startswith("OSError")}
    assert got <= {"other bot"}, got


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_hard_link_to_the_tournament_file_in_the_bots_folder_is_carved_out(arena, mode):
    """The same file by another name, deep in the bot's folder: it is the tournament
    file by identity, so the folder holding it is rebuilt without it."""
    script = evil(arena)
    (arena / "bots" / "evil" / "data" / "deep").mkdir(parents=True)
    play_file = arena / "t.toml"
    play_file.write_text("")  # play() writes it in place: the same inode, so the link stays the tournament file
    alias = arena / "bots" / "evil" / "data" / "deep" / "seed.toml"
    os.link(play_file, alias)
    reports = play(arena, [PYTHON, str(script), f"@{alias}", "@data/deep"], mode)
    assert reports and alias.stat().st_ino == play_file.stat().st_ino
    first = play_file.read_text().splitlines()[0]
    for r in reports:
        if mode == "auto":
            assert str(r[f"@{alias}"]).startswith("OSError") and r["@data/deep"] == [], r
        else:
            assert r[f"@{alias}"] == first and r["@data/deep"] == ["seed.toml"], r


# --- a resumed run's predictable folder ---------------------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_resumed_run_s_own_folder_named_in_an_exec_line_stays_hidden(arena, mode):
    """Run folders are predictable: the prober names this run's matches/ in an exec line
    and reads it at each seat of the resume; sandboxed it never sees a finished match."""
    run = arena / "logs" / f"resumed-{mode}"
    script = evil(arena, f'#!/usr/bin/env python3\n"""\nexec {run / MATCHES}\n"""\n')
    command = [PYTHON, str(script), f"@{run / MATCHES}"]
    play(arena, command, mode, run=run)
    played = sorted((run / MATCHES).glob("*.json"))
    for path in played[len(played) // 2:]:  # as if the run had been cut there
        path.unlink()
    (run / "standings.json").unlink(missing_ok=True)
    bot_files.footprint.cache_clear()  # `naparena resume` is a new process: nothing of the first run's is known
    reports = play(arena, command, mode, run=run, resume=True)
    seen = [r[f"@{run / MATCHES}"] for r in reports]
    assert seen
    if mode == "auto":
        assert all(str(s).startswith("OSError") for s in seen), seen
    else:
        assert any(isinstance(s, list) and s for s in seen), seen


# --- the places a seat may write ---------------------------------------------------------------

@pytest.mark.parametrize("rule", ["now", "before"])
def test_root_and_run_are_read_only_and_the_private_folders_are_bounded(arena, monkeypatch, rule):
    """`/` and `/run` take nothing (before, each took 40 MB under disk_mb = 16, bounded by
    nothing but memory); /tmp stops at disk_mb."""
    if rule == "before":
        monkeypatch.setattr(sandbox, "READ_ONLY", ())
    script = evil(arena)
    reports = play(arena, [PYTHON, str(script), "--write", "/", "40", "/run", "40", "/tmp", "40"], "auto",
                   seats={"disk_mb": 16})
    assert reports
    for r in reports:
        if rule == "now":
            assert r["write /"] == r["write /run"] == {"mb": 0, "error": "Read-only file system"}, r
        else:
            assert r["write /"] == r["write /run"] == {"mb": 40}, r
        assert r["write /tmp"]["mb"] <= 16 and r["write /tmp"]["error"] == "No space left on device"


# --- nothing inside names a hidden place ----------------------------------------------------------

def test_nothing_inside_the_sandbox_names_a_hidden_place(arena):
    """/proc/1/cmdline and the seat's mount table name what it is shown (the control: its
    own script is there), never the tournament file, the log folder or another bot's
    folder, though all three lie in folders its command shows."""
    shutil.copy(PROBER, arena / "prober.py")
    reports = play(arena, [PYTHON, str(arena / "prober.py")], "auto")
    assert reports
    for r in reports:
        for name in ("/proc/1/cmdline", "/proc/self/mountinfo"):
            text = r[name]
            assert not text.startswith("OSError")
            for place in (arena / "t.toml", arena / "logs", arena / "bots" / "other"):
                assert str(place) not in text, (name, place)
        assert str(arena / "prober.py") in r["/proc/1/cmdline"]
        assert str(arena / "prober.py") in r["/proc/self/mountinfo"]


# --- what the organizer names ----------------------------------------------------------------------

@pytest.mark.parametrize(("files", "said"), [
    (["bots/other/secret.txt"], "bot 'other''s own path"),
    (["bots/other"], "is bot 'other''s own path"),
    (["logs"], "is the log folder"),
    (["logs/earlier"], "lies in the log folder"),
    (["t.toml"], "is the tournament file"),
    (["bots/evil/t.toml"], "is the tournament file"),  # a symlink to it
    (["/"], "a place the sandbox makes itself"),
    (["../home"], "is or holds the home folder"),
])
def test_an_organizer_naming_a_place_no_seat_may_see_gets_one_clear_error(arena, files, said):
    script = evil(arena)
    os.symlink(arena / "t.toml", arena / "bots" / "evil" / "t.toml")
    # two hands: two boards, so no warning stands beside the one error
    config = {"tournament": {"name": "named", "seed": 1, "seeds": 1, "hands": 2, "table": 2},
              "seats": {"sandbox": "auto"},
              "bots": [{"name": "evil", "command": [PYTHON, str(script)], "files": files},
                       {"name": "other", "command": [PYTHON, "bots/other/bot.py"]}],
              "variants": [{"name": "classic"}]}
    (arena / "t.toml").write_text(tomli_w.dumps(config))
    result = invoke("run", str(arena / "t.toml"))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "bots[1].files" in lines[0] and said in lines[0], result.output
    assert "Traceback" not in result.output


def test_a_command_naming_another_bots_file_is_an_error(arena):
    script = evil(arena)
    config = {"tournament": {"name": "named", "seed": 1, "seeds": 1, "hands": 1, "table": 2},
              "seats": {"sandbox": "auto"},
              "bots": [{"name": "evil", "command": [PYTHON, str(script), "bots/other/secret.txt"]},
                       {"name": "other", "command": [PYTHON, "bots/other/bot.py"]}],
              "variants": [{"name": "classic"}]}
    (arena / "t.toml").write_text(tomli_w.dumps(config))
    result = invoke("run", str(arena / "t.toml"))
    assert result.exit_code == 2 and "bots[1].command" in result.output and "bot 'other'" in result.output


def test_check_v_says_who_asked_for_each_path_and_what_was_refused(arena):
    venv = evil_venv(arena)
    (site(venv) / "evil.pth").write_text(f"{arena / 'logs'}\n/etc\n")
    script = evil(arena)
    result = invoke("check", "--command", f"{venv / 'bin' / 'python'} {script}", "--hands", "1", "-v")
    said = flat(result.output)
    assert f"{arena / 'bots' / 'evil'} (the bot's folder: the command names {script} (the organizer's word))" in said
    assert "a Python installation on this machine: the command's program, through a link in the bot's folder" in said
    assert "not shown, though the bot's own files name them" in said
    assert f"{arena / 'logs'} ({site(venv) / 'evil.pth'} names it: a place of the run" in said or \
        f"{arena / 'logs'} ({site(venv) / 'evil.pth'} names it: neither" in said
    assert f"/etc ({site(venv) / 'evil.pth'} names it" in said
