"""Chips are conserved in every column under `kitty_at_end = "split"`: the kitty left at the
end of a match is shared equally (docs/RULES.md, "The kitty"), so each seat's share is
part of its result. The standings book it, the match summary holds it, `verify` replays
it, and the environments' rewards (which add the share to the last hand) add up to the
same chips, as docs/ENVIRONMENTS.md says. Once the shares appeared in no column."""

from __future__ import annotations

import json
import tomllib

import pytest
import tomli_w

from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.records.verify import verify_run
from naparena.arena.session import Session
from tests.helpers import write_tournament


def played(tmp_path, kitty_at_end: str):
    file = write_tournament(tmp_path / kitty_at_end, name=kitty_at_end, seeds=2, hands=12, table=3,
                            bots=("random", "example", "heuristic"))
    # floater: every player antes 1 before each deal, and failed bids pay into the kitty.
    data = tomllib.loads(file.read_text())
    data["variants"] = [{"name": "pot", "base": "floater", "kitty_at_end": kitty_at_end}]
    file.write_text(tomli_w.dumps(data))
    run_dir = tmp_path / "logs" / kitty_at_end
    Session.open(file, run_dir, workers=1).play()
    logs = [json.loads(f.read_bytes()) for f in sorted((run_dir / MATCHES).iterdir())]
    return run_dir, logs, json.loads((run_dir / STANDINGS).read_bytes())


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    return played(tmp_path_factory.mktemp("split"), "split")


def shared(log: dict) -> int:
    """Chips the end of this match shared out of the kitty."""
    hands = log["hands"]
    return hands[-1]["kitty"] - log["summary"]["kitty"]


def test_the_split_shares_are_in_the_seats_chips_and_every_match_adds_up(split):
    _, logs, _ = split
    assert sum(shared(log) for log in logs) > 0, "no kitty was left to share: the test would prove nothing"
    for log in logs:
        summary, players = log["summary"], len(log["bots"])
        played_chips = [sum(h["chips"][s] for h in log["hands"]) for s in range(players)]
        share = shared(log) // players
        assert [s["chips"] for s in summary["seats"]] == [c + share for c in played_chips]
        assert sum(s["chips"] for s in summary["seats"]) + summary["kitty"] == 0
        assert summary["final"] == [s["chips"] + log["stack"] for s in summary["seats"]]


def test_the_standings_conserve_chips_under_split(split):
    _, _, standings = split
    table = standings["variants"]["pot"]
    assert sum(row["chips"] for row in table["bots"]) + table["kitty"] == 0


def test_verify_replays_the_shares(split):
    run_dir, _, _ = split
    _, _, problems, _ = verify_run(run_dir)
    assert problems == []


def test_the_environments_rewards_add_up_to_the_chips_the_run_booked(split):
    pytest.importorskip("gymnasium")
    from naparena.envs.replay import replay
    run_dir, logs, _ = split
    checked = 0
    for index, log in enumerate(logs):
        if not shared(log) // len(log["bots"]):
            continue
        for seat in range(len(log["bots"])):
            again = replay(run_dir, index, seat)
            try:
                again.play()
            finally:
                again.env.close()
            reward = again.info.get("reward", 0) + sum(again.rewards)
            assert reward == log["summary"]["seats"][seat]["chips"], (index, seat)
            checked += 1
    assert checked


def test_carried_keeps_the_kitty_on_the_table_and_out_of_the_seats(tmp_path):
    """Control: under "carried" the same chips stay in the kitty column, and still add up."""
    _, logs, standings = played(tmp_path, "carried")
    assert any(log["summary"]["kitty"] for log in logs)
    for log in logs:
        players = len(log["bots"])
        assert [s["chips"] for s in log["summary"]["seats"]] == \
            [sum(h["chips"][s] for h in log["hands"]) for s in range(players)]
    table = standings["variants"]["pot"]
    assert table["kitty"] > 0 and sum(row["chips"] for row in table["bots"]) + table["kitty"] == 0
