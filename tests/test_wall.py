"""The wall's parts on their own, without bubblewrap: which folders are runtime
installations (the only places a bot's own bytes may show), and how a seat's view is
drawn (opened by descriptor, the run's places carved out by identity, homes refused)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from naparena.arena.match import bot_files
from naparena.arena.match.wall import Refused, View


def make(root: Path, *files: str) -> Path:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


@pytest.mark.parametrize(("files", "kind"), [
    (["bin/python3.12", "lib/python3.12/os.py"], "a Python installation"),
    (["bin/python", "conda-meta/history"], "a conda environment"),
    (["bin/node", "include/node/node.h"], "a Node installation"),
    (["bin/java", "lib/modules"], "a Java installation"),
    (["bin/tool", "lib/libtool.so"], None),             # a prefix, but no interpreter's own landmark
    (["bin/python3", "lib/python3.12/site-packages/x.py"], None),  # ~/.local: packages, no standard library
])
def test_a_runtime_installation_is_known_by_its_interpreters_own_landmarks(tmp_path, files, kind):
    prefix = make(tmp_path / "prefix", *files)
    found = bot_files.runtime_installation(str(prefix / "bin" / Path(files[0]).name))
    assert (found[1] if found else None) == kind
    if kind:
        assert found[0] == str(prefix)


def test_a_venv_is_a_runtime_only_when_its_home_is_one(tmp_path):
    python = make(tmp_path / "python", "bin/python3.12", "lib/python3.12/os.py")
    venv = make(tmp_path / "venv", "bin/python")
    (venv / "pyvenv.cfg").write_text(f"home = {python / 'bin'}\n")
    assert bot_files.runtime_installation(str(venv / "bin" / "python")) == (str(venv), "a Python virtual environment")
    (venv / "pyvenv.cfg").write_text(f"home = {tmp_path / 'nowhere' / 'bin'}\n")  # the control
    assert bot_files.runtime_installation(str(venv / "bin" / "python")) is None


def test_a_pth_file_shows_a_runtime_installation_and_nothing_else(tmp_path, monkeypatch):
    """A bot's venv .pth naming another Python's site-packages shows that Python (a
    runtime installation); naming a plain folder, the organizer's home or /etc, nothing."""
    monkeypatch.setenv("HOME", str(make(tmp_path / "home", "secret.txt")))
    other = make(tmp_path / "opt" / "py", "bin/python3.12", "lib/python3.12/os.py", "lib/python3.12/site-packages/a.py")
    plain = make(tmp_path / "plain", "data.txt")
    bot = tmp_path / "bot"
    make(bot, "bot.py")
    python = make(tmp_path / "base", "bin/python3.12", "lib/python3.12/os.py")
    venv = bot / ".venv"
    make(venv, "lib/python3.12/site-packages/.keep")
    (venv / "bin").mkdir()
    os.symlink(python / "bin" / "python3.12", venv / "bin" / "python")
    (venv / "pyvenv.cfg").write_text(f"home = {python / 'bin'}\n")
    (venv / "lib/python3.12/site-packages/evil.pth").write_text(
        f"{other / 'lib/python3.12/site-packages'}\n{plain}\n{tmp_path / 'home'}\n/etc\n")
    found = bot_files.footprint((str(venv / "bin" / "python"), str(bot / "bot.py")))
    assert str(other) in found.paths and str(python) in found.paths and str(bot) in found.paths
    refused = [p for p, _ in found.refused]
    assert str(plain) in refused and str(tmp_path / "home") in refused and "/etc" in refused
    assert not any(p in found.paths for p in (str(plain), str(tmp_path / "home"), "/etc"))


def test_a_view_rebuilds_a_folder_holding_a_hidden_place_without_naming_it(tmp_path):
    make(tmp_path / "arena", "bot.py", "t.toml", "logs/run/m.json", "data/x.txt")
    arena = tmp_path / "arena"
    view = View.of([str(arena)], hidden=[str(arena / "t.toml"), str(arena / "logs")])
    try:
        args = " ".join(view.args())
        assert "t.toml" not in args and "logs" not in args
        assert f"--dir {arena}" in args and f"{arena / 'bot.py'}" in args and f"{arena / 'data'}" in args
    finally:
        view.close()
    whole = View.of([str(arena)])  # the control: nothing hidden, the folder bound whole
    try:
        assert whole.args() == ["--ro-bind-fd", str(whole.fds[0]), str(arena)]
    finally:
        whole.close()


@pytest.mark.parametrize("shown", ["arena/logs", "arena/logs/run", "alias/run", "arena/../arena/logs"])
def test_a_view_refuses_a_hidden_place_by_any_name(tmp_path, shown):
    make(tmp_path / "arena", "logs/run/m.json")
    os.symlink(tmp_path / "arena" / "logs", tmp_path / "alias")
    with pytest.raises(Refused, match="which no seat may see"):
        View.of([str(tmp_path / shown)], hidden=[str(tmp_path / "arena" / "logs")])


def test_a_view_refuses_a_home_folder_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(make(tmp_path / "home", "secret.txt")))
    with pytest.raises(Refused, match="home folder"):
        View.of([str(tmp_path / "home")])
    View.of([str(tmp_path / "home" / "secret.txt")]).close()  # inside it: shown
