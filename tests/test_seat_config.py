"""Seat processes in the tournament file and on the command line: isolation, external
bots, [seats] limits; bad input named by file and key; the handshake checked before play."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from naparena.arena.records.rundir import config_hash
from naparena.arena.setup.reader import parse_tournament
from naparena.arena.setup.settings import Confinement, Isolation, Scheduler
from naparena.arena.setup.tournament import with_isolation
from naparena.cli import app
from naparena.errors import ConfigError

ROGUE = Path(__file__).resolve().parent / "seat_programs" / "rogue.py"
BASE = {"tournament": {"name": "t"}, "variants": [{"name": "classic"}]}


def parse(bots: list, **extra):
    return parse_tournament({**BASE, "bots": bots, **extra}, "t.toml")


@pytest.mark.parametrize("bots, extra, key, words", [
    ([{"name": "x", "command": "node x.js"}], {}, "bots[1].command", "non-empty array of non-empty strings"),
    ([{"name": "x", "command": []}], {}, "bots[1].command", "non-empty array"),
    ([{"name": "x", "command": ["node", ""]}], {}, "bots[1].command", "non-empty strings"),
    ([{"name": "random", "isolation": "thread"}], {}, "bots[1].isolation", '"inline" or "process"'),
    ([{"name": "random", "isolation": ["process"]}], {}, "bots[1].isolation", '"inline" or "process", got an array'),
    ([{"name": "x", "command": ["x"], "isolation": "inline"}], {}, "bots[1].isolation",
     "always runs in its own process"),
    ([{"name": "a b", "command": ["x"]}], {}, "bots[1].name", "short name"),
    ([{"name": "random"}], {"seats": {"memory_mb": -1}}, "seats.memory_mb", "0 (no limit) or more"),
    ([{"name": "random"}], {"seats": {"disk_mb": -5}}, "seats.disk_mb", "0 (no limit) or more"),
    ([{"name": "random"}], {"seats": {"disk_mb": "256"}}, "seats.disk_mb", "must be a whole number"),
    ([{"name": "x", "command": ["x"], "files": "w.bin"}], {}, "bots[1].files", "array of paths"),
    ([{"name": "x", "command": ["x"], "files": ["no-such-weights.bin"]}], {}, "bots[1].files[0]", "does not exist"),
    ([{"name": "random"}], {"seats": {"start_timeout": 0}}, "seats.start_timeout", "more than 0"),
    ([{"name": "random"}], {"seats": {"sandbox": "bubblewrap"}}, "seats.sandbox", '"auto", "required", "off"'),
    ([{"name": "random"}], {"seats": {"sandbox": []}}, "seats.sandbox", "array"),
    ([{"name": "random"}], {"seats": {"memroy_mb": 1}}, "seats.memroy_mb", "did you mean 'memory_mb'"),
    ([{"name": "random"}], {"seats": 3}, "seats", "must be a table"),
])
def test_bad_seat_settings_name_the_key(bots, extra, key, words):
    with pytest.raises(ConfigError) as caught:
        parse(bots, **extra)
    assert caught.value.key == key and words in caught.value.message


def test_a_bad_isolation_in_the_file_is_its_one_line_error_naming_the_key(tmp_path):
    with pytest.raises(ConfigError) as caught:
        parse([{"name": "random"}], tournament={"name": "t", "isolation": "bogus"})
    assert str(caught.value) == 't.toml: tournament.isolation: must be "inline" or "process", got "bogus"'


def test_the_settings_are_typed_once_read():
    t = parse([{"name": "random", "isolation": "process"}],
              tournament={"name": "t", "isolation": "inline", "scheduler": "local:3"})
    assert t.isolation is Isolation.INLINE and t.bots[0].isolation is Isolation.PROCESS
    assert t.scheduler == Scheduler("local:3", "local") and t.scheduler.local_workers == 3
    assert parse([{"name": "random"}], tournament={"name": "t", "scheduler": "none"}).scheduler == Scheduler("", "pool")
    # ...and written back as the words of the file, so logs and hashes do not change.
    config = t.as_dict()
    written = (config["isolation"], config["scheduler"], config["bots"][0]["isolation"])
    assert written == ("inline", "local:3", "process") and all(type(v) is str for v in written)


@pytest.mark.parametrize("command", ["run", "resume", "check"])
def test_a_bad_isolation_on_the_command_line_is_typers_choice_error(command):
    target = "random" if command == "check" else "t.toml"
    result = CliRunner().invoke(app, [command, target, "--isolation", "bogus"])
    assert result.exit_code == 2
    assert "Invalid value for '--isolation'" in result.output and "'inline', 'process'" in result.output
    assert result.output.count("Error") == 1
    help_text = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
    assert "[inline|process]" in help_text or "<inline|process>" in help_text


def test_isolation_is_settled_per_bot_and_by_the_command_line():
    t = parse([{"name": "random"}, {"name": "bold", "isolation": "process"},
               {"name": "ext", "command": ["./bot"]}], tournament={"name": "t", "isolation": "inline"})
    assert [t.isolation_of(b) for b in t.bots] == ["inline", "process", "process"]
    forced = with_isolation(t, "process")
    assert [forced.isolation_of(b) for b in forced.bots] == ["process"] * 3
    inline = with_isolation(t, "inline")
    assert [inline.isolation_of(b) for b in inline.bots] == ["inline", "inline", "process"]
    # How bots run changes no result, so it is not part of the run's identity (resume).
    assert config_hash(t) == config_hash(forced) == config_hash(inline)
    assert config_hash(t) != config_hash(parse([{"name": "random"}, {"name": "bold"},
                                                {"name": "ext", "command": ["./other"]}]))


def test_seat_limits_parse_into_a_confinement():
    t = parse([{"name": "random"}], seats={"memory_mb": 512, "sandbox": ["env", "A=1"], "start_timeout": 3})
    assert t.seats == Confinement(memory_mb=512, sandbox=("env", "A=1"), start_timeout=3.0)
    assert Confinement.from_dict(t.seats.as_dict()) == t.seats


def _file(tmp_path: Path, command: list[str], params: str = "{}") -> Path:
    path = tmp_path / "t.toml"
    path.write_text(f'[tournament]\nname = "t"\nhands = 2\nlog_dir = "logs"\n'
                    f'[[bots]]\nname = "ext"\ncommand = {json.dumps(command)}\nparams = {params}\n'
                    '[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n')
    return path


def test_a_command_that_cannot_start_is_a_bad_tournament_file(tmp_path):
    path = _file(tmp_path, ["./no-such-bot"])
    result = CliRunner().invoke(app, ["run", str(path)])
    assert result.exit_code == 2
    assert "bots[1].command" in result.output and "no-such-bot" in result.output
    assert not (tmp_path / "logs").exists(), "nothing was played"


def test_a_parameter_the_bot_does_not_accept_is_a_bad_tournament_file(tmp_path):
    path = _file(tmp_path, [sys.executable, str(ROGUE)], "{ speed = 3 }")
    result = CliRunner().invoke(app, ["run", str(path)])
    assert result.exit_code == 2
    assert "bots[1].params" in result.output and "does not accept parameter 'speed'" in " ".join(result.output.split())


def test_bots_lists_external_bots_with_their_handshake(tmp_path):
    good = _file(tmp_path, [sys.executable, str(ROGUE)])
    text = good.read_text() + '[[bots]]\nname = "gone"\ncommand = ["./missing"]\n'
    good.write_text(text)
    result = CliRunner().invoke(app, ["bots", "--tournament", str(good)])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "rogue" in flat and "sha256:" in flat and "failed" in flat


def test_serve_speaks_the_protocol_on_stdin_and_stdout(tmp_path):
    import subprocess
    hello = b'{"type":"hello","protocol":1,"params":{"aggression":1.0}}\n{"type":"shutdown"}\n'
    done = subprocess.run([sys.executable, "-m", "naparena", "serve", "heuristic"], input=hello,
                          capture_output=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["name"] == "heuristic" and answer["params"] == {"aggression": 1.0}
    refused = subprocess.run([sys.executable, "-m", "naparena", "serve", "heuristic"], cwd=tmp_path,
                             input=b'{"type":"hello","protocol":1,"params":{"nope":1}}\n',
                             capture_output=True, timeout=120)
    assert refused.returncode == 2 and json.loads(refused.stdout)["type"] == "error"
