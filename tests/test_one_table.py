"""One table for every entry point (issue 32, item 1): the places that used to play a hand
each their own way disagreed; each disagreement is a test here, and the lean loop is shown
to write the same bytes as the careful one."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from naparena import Bot
from naparena.errors import ConfigError, RulesError
from naparena.testing import play_hand, view
from tests.helpers import naparena

SLOW_ONCE = '''
import time
from naparena import Bot, hookimpl

SLEPT = []

class SlowOnce(Bot):
    """Takes 1.5 s over its first decision in this process, then answers at once."""
    name = "slowonce"

    def bid(self, view):
        if not SLEPT:
            SLEPT.append(1.5)
            time.sleep(1.5)
        return "pass"

    def play(self, view):
        return view.legal[0]


@hookimpl
def register_bots(register):
    register(SlowOnce)
'''

HOOKED = '''
from naparena import Bot, hookimpl

class Hooked(Bot):
    """Keeps what start_match told it."""
    name = "hooked"

    def start_match(self, info):
        self.info = info

    def bid(self, view):
        return view.legal[0]

    def play(self, view):
        return view.legal[0]


@hookimpl
def register_bots(register):
    register(Hooked)
'''


def test_check_with_a_tournament_file_keeps_the_files_time_out(tmp_path: Path) -> None:
    """1. `check --tournament` plays the bot under the file's `timeout`, not the flag's default."""
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "slow_once.py").write_text(SLOW_ONCE)
    path = tmp_path / "t.toml"
    path.write_text('[tournament]\nname = "t"\nseed = 3\nhands = 2\ntable = 2\ntimeout = 30.0\n'
                    '[[bots]]\nname = "slowonce"\n[[bots]]\nname = "random"\n[[variants]]\nname = "classic"\n')
    result = naparena("check", "slowonce", "--tournament", path, "--hands", 1, cwd=tmp_path)
    assert "time-out" not in result.stdout, result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_gymnasium_env_tells_start_match_what_a_run_tells_it(tmp_path: Path) -> None:
    """2. The env's `start_match` info holds every documented key, `first_hand` among them."""
    pytest.importorskip("gymnasium")
    from naparena.envs.single import NapSeatEnv
    from naparena.game.rules import make_rules
    from naparena.table import match_info

    (tmp_path / "hooked.py").write_text(HOOKED)
    env = NapSeatEnv(players=3, opponents=["hooked"], hands=2, bots_dir=str(tmp_path))
    env.reset(seed=5)
    info = env.bots[1].info
    assert info["first_hand"] == 0
    assert info.keys() == match_info(0, 1, ["a", "b", "c"], make_rules("classic"), 2, 1.0).keys()
    assert info["seats"] == ["learner", "hooked@1", "hooked@2"] and info["seat"] == 1
    env.close()


class Recorder(Bot):
    """Notes every lifecycle call it gets."""

    def __init__(self, rng: random.Random, seat: int):
        super().__init__(rng, seat)
        self.calls: list[str] = []

    def start_match(self, info: dict[str, Any]) -> None:
        self.calls.append("start_match")

    def start_hand(self, view: Any) -> None:
        self.calls.append("start_hand")

    def end_hand(self, record: dict[str, Any]) -> None:
        self.calls.append("end_hand")

    def end_match(self) -> None:
        self.calls.append("end_match")

    def bid(self, view: Any) -> Any:
        return view.legal[0]

    def play(self, view: Any) -> Any:
        return view.legal[0]


def test_testing_play_hand_calls_every_lifecycle_hook_as_a_run_does() -> None:
    """3. `naparena.testing.play_hand` plays at the same table: the hooks are called, in order."""
    bot = Recorder(random.Random(1), 0)
    play_hand([bot, "random", "random", "random"], seed=3)
    assert bot.calls == ["start_match", "start_hand", "end_hand", "end_match"]


def test_the_env_refuses_an_isolation_the_tournament_file_refuses(tmp_path: Path) -> None:
    """4. `isolation = "proces"` is refused by the env with the file's own words."""
    pytest.importorskip("gymnasium")
    from naparena.arena.setup.reader import load_tournament
    from naparena.envs.single import NapSeatEnv

    path = tmp_path / "t.toml"
    path.write_text('[tournament]\nname = "t"\nseed = 3\nhands = 2\ntable = 2\n'
                    '[[bots]]\nname = "random"\nisolation = "proces"\n[[bots]]\nname = "random"\nalias = "r2"\n'
                    '[[variants]]\nname = "classic"\n')
    with pytest.raises(ConfigError) as in_file:
        load_tournament(path)
    with pytest.raises(ConfigError) as in_env:
        NapSeatEnv(players=2, opponents=[{"name": "random", "isolation": "proces"}])
    assert in_env.value.message == in_file.value.message
    assert in_env.value.key.endswith(".isolation") and 'got "proces"' in str(in_env.value)


def test_a_misspelt_variant_is_one_error_everywhere_and_the_overrides_have_one_name() -> None:
    """5. `testing.view` and the envs name an unknown variant alike, and take `overrides=`."""
    with pytest.raises(RulesError, match=r"did you mean 'classic'"):
        view("AS KS QS 2H 3C", kind="bid", variant="clasic")
    with pytest.raises(RulesError, match=r"did you mean 'classic'"):
        play_hand(["random"] * 4, variant="clasic")
    v = view("AS KS QS JS 10S", kind="bid", overrides={"bids": ["nap"]})
    assert "three" not in v.legal
    with pytest.warns(DeprecationWarning, match="overrides="):
        old = view("AS KS QS JS 10S", kind="bid", rules_overrides={"bids": ["nap"]})
    assert old.legal == v.legal
    pytest.importorskip("pettingzoo")
    from naparena.envs.aec import NapEnv
    with pytest.raises(RulesError, match=r"did you mean 'classic'"):
        NapEnv("clasic")


@pytest.mark.parametrize("variant,players", [("classic", 4), ("pagat", 5), ("classic", 3)])
def test_the_lean_loop_writes_the_careful_loops_bytes(monkeypatch: pytest.MonkeyPatch, variant: str,
                                                       players: int) -> None:
    """The lean loop is the careful one with nothing to call but decisions: same log, byte for byte."""
    from naparena.arena.match.job import Job, seat_record
    from naparena.arena.match.play import play_job
    from naparena.bots.plugins import load_registry
    from naparena.game.rules import make_rules
    from naparena.table import Table

    registry = load_registry(None)
    seats = tuple(seat_record(f"b{i}", name, {}, i) for i, name in enumerate(["heuristic", "random"] * 4))[:players]
    job = Job(index=2, seed=11, variant=variant, rules=make_rules(variant), seats=seats, hands=40)
    lean = bytes(play_job(job, registry))
    called: list[Table] = []

    def never(self: Table) -> bool:
        called.append(self)
        return False
    monkeypatch.setattr(Table, "lean", never)
    careful = bytes(play_job(job, registry))
    assert called, "the careful loop played"
    assert careful == lean


def test_check_plays_at_the_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`check`'s inline path plays its hands at the table (its hooks reach the bot)."""
    from naparena.bots.plugins import load_registry
    from naparena.table import Table
    from naparena.tools.check import check_bot

    played: list[Table] = []
    real = Table.play

    def play(self: Table, *args: Any, **kwargs: Any) -> None:
        played.append(self)
        real(self, *args, **kwargs)
    monkeypatch.setattr(Table, "play", play)
    check_bot(load_registry(Path(tmp_path)), "random", hands=1, variants=["classic"])
    assert played
