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


# --- the jq bot of the protocol tutorial, run as the page writes it -----------------------------

TUTORIAL = EXAMPLES.parent / "docs" / "tutorials" / "protocol-bot.md"


def _tutorial_blocks(lang: str) -> list[str]:
    import re
    return re.findall(rf"^```{lang}\n(.*?)^```", TUTORIAL.read_text(), re.M | re.S)


def test_the_jq_example_is_the_tutorials_own_code():
    first, final = _tutorial_blocks("jq")
    assert final == (EXAMPLES / "jq" / "napbot.jq").read_text()
    assert "contracts" in final and "legal[0]" in first


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("jq"), reason="no jq (apt install jq)")
def test_the_tutorials_jq_bots_pass_check_and_play_a_tournament(tmp_path, monkeypatch):
    first, final = _tutorial_blocks("jq")
    (tmp_path / "first.jq").write_text(first)
    (tmp_path / "napbot.jq").write_text(final)
    [toml] = [b for b in _tutorial_blocks("toml") if "napbot.jq" in b]
    (tmp_path / "jq.toml").write_text(toml.replace("hands = 20", "hands = 6\ntimeout = 30.0"))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for program in ("first.jq", "napbot.jq"):
        checked = runner.invoke(app, ["check", "--command", f"jq -nc --unbuffered -f {program}", "--hands", "3",
                                      "--timeout", "30"])
        assert checked.exit_code == 0, checked.output
        assert f"{program}: every decision legal in 12 variants" in checked.output
    ran = runner.invoke(app, ["run", "jq.toml", "--json", "--workers", "1"])
    assert ran.exit_code == 0, ran.output
    result = json.loads(ran.output[ran.output.index("{"):])
    for variant in ("classic", "floater"):
        rows = {r["bot"]: r for r in result["variants"][variant]["bots"]}
        assert rows["napbot-jq"]["faults"] == {} and rows["napbot-jq"]["hands"] > 0
    bids = [c for c in json.loads(next((tmp_path / "logs").glob("*/matches/000000.json")).read_text())["hands"]
            if c.get("bidder") is not None]
    assert bids, "somebody bid"


def test_a_jq_bot_that_answers_out_of_legal_is_caught(tmp_path, monkeypatch):
    """The check above can fail: the tutorial's first bot, answering a card it does not hold."""
    if not shutil.which("jq"):
        pytest.skip("no jq (apt install jq)")
    first, _ = _tutorial_blocks("jq")
    (tmp_path / "bad.jq").write_text(first.replace("$message.view.legal[0]",
                                                   'if $message.view.kind == "play" then 99 '
                                                   "else $message.view.legal[0] end"))
    monkeypatch.chdir(tmp_path)
    checked = CliRunner().invoke(app, ["check", "--command", "jq -nc --unbuffered -f bad.jq", "--hands", "2",
                                       "--timeout", "30"])
    assert checked.exit_code == 1, checked.output
    assert "every decision legal" not in checked.output
