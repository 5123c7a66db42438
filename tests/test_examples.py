"""The example bots in other languages (examples/js, examples/c) play real tournaments on
two workers and pass `naparena check`, when their toolchain is on the machine."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from naparena.cli import app

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CC = shutil.which("cc") or shutil.which("gcc")


def _prepare(lang: str, tmp_path: Path) -> Path:
    """The example's folder copied, built if it is C; its tournament shortened."""
    folder = tmp_path / lang
    shutil.copytree(EXAMPLES / lang, folder)
    if lang == "c":
        subprocess.run([CC, "-O2", "-o", str(folder / "napbot"), str(folder / "napbot.c")], check=True)
    text = (folder / "tournament.toml").read_text()
    text = text.replace("hands = 200", "hands = 40")
    text = text.replace("table = 4", "table = 4\nworkers = 2\ntimeout = 30.0\nlog_dir = \"logs\"")
    text += '\n[[variants]]\nname = "floater"\n'  # antes, a floater and a trumps decision too
    (folder / "tournament.toml").write_text(text)
    return folder / "tournament.toml"


@pytest.mark.parametrize("lang, name", [
    pytest.param("js", "napbot-js", marks=pytest.mark.skipif(not shutil.which("node"), reason="no node")),
    pytest.param("c", "napbot-c", marks=pytest.mark.skipif(not CC, reason="no C compiler")),
])
def test_an_example_bot_completes_a_tournament_and_passes_check(tmp_path, monkeypatch, lang, name):
    config = _prepare(lang, tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    checked = runner.invoke(app, ["check", name, "--tournament", str(config), "--hands", "10", "--timeout", "30"])
    assert checked.exit_code == 0, checked.output
    assert f"{name}: every decision legal in 12 variants" in checked.output

    ran = runner.invoke(app, ["run", str(config), "--json"])
    assert ran.exit_code == 0, ran.output
    result = json.loads(ran.output[ran.output.index("{"):])
    assert result["matches"] > 0 and result["skipped"] == []
    for variant in ("classic", "floater"):
        rows = {r["bot"]: r for r in result["variants"][variant]["bots"]}
        assert rows[name]["faults"] == {} and rows[name]["crashes"] == 0
        assert rows[name]["hands"] > 0
    run_dir = next((tmp_path / "logs").iterdir())
    bot = json.loads((run_dir / "manifest.json").read_text())["bots"][name]
    assert bot["source"] == "command" and bot["isolation"] == "process"
    assert bot["command"] == json.loads(json.dumps(
        ["node", "napbot.js"] if lang == "js" else ["./napbot"]))
    assert bot["version"].startswith("sha256:")
    verified = runner.invoke(app, ["verify", str(run_dir)])
    assert verified.exit_code == 0, verified.output
