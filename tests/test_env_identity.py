"""The environments are the engine, not a copy: the hands `naparena run` played and logged
are played again through the PettingZoo, Gymnasium and OpenSpiel faces, from the same
seeds, and every deal, every set of legal answers and every settlement is the log's."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import orjson
import pytest
import tomli_w

np = pytest.importorskip("numpy", reason="the learning environments need the envs extra")
pytest.importorskip("pettingzoo", reason="the learning environments need the envs extra")
pytest.importorskip("gymnasium", reason="the learning environments need the envs extra")

from naparena.arena.records.logs import load_match  # noqa: E402
from naparena.arena.setup.schedule import board_seeds, bot_seed  # noqa: E402
from naparena.envs.aec import NapEnv  # noqa: E402
from naparena.envs.encoding import action_of  # noqa: E402
from naparena.envs.replay import replay  # noqa: E402
from naparena.envs.single import NapSeatEnv  # noqa: E402
from naparena.envs.vector import NapVectorEnv  # noqa: E402
from naparena.game.engine import BID, PLAY, Match  # noqa: E402
from naparena.game.rules import VARIANTS, Rules, make_rules  # noqa: E402
from tests.helpers import invoke  # noqa: E402

SEED = 41
# Two runs: duplicate boards at a table of three, fresh deals per seating at a table of five;
# between them every decision kind, named variants and a custom one.
RUNS = {
    "three": {"table": 3, "duplicate": True, "bots": ["heuristic", "random", "bold"],
              "variants": [{"name": "classic"}, {"name": "peep"}, {"name": "sir-garnet"}, {"name": "floater"},
                           {"name": "my-peel", "base": "peel", "deal": "2-3", "pack": "auto", "dealer_ante": 2}]},
    "five": {"table": 5, "duplicate": False, "bots": ["heuristic", "random", "cautious"],
             "variants": [{"name": "purchase"}, {"name": "seven-card"}, {"name": "misere"}, {"name": "pagat"}]},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict, Path]]:
    """(tournament settings, run directory) of both runs."""
    out = []
    for name, run in RUNS.items():
        folder = tmp_path_factory.mktemp(name)
        settings = {"name": name, "seed": SEED, "seeds": 1, "hands": 4, "table": run["table"],
                    "duplicate": run["duplicate"], "workers": 2, "timeout": 5.0}
        path = folder / f"{name}.toml"
        path.write_text(tomli_w.dumps({"tournament": settings, "bots": [{"name": b} for b in run["bots"]],
                                       "variants": run["variants"]}))
        result = invoke("run", path, "--log-dir", folder / "logs")
        assert result.exit_code == 0, result.output
        (run_dir,) = (folder / "logs").iterdir()
        out.append((settings, run_dir))
    return out


@pytest.fixture(scope="module")
def logs(runs) -> list[tuple[dict, dict]]:
    """(tournament settings, match log) of every match both runs played."""
    return [(settings, load_match(match)) for settings, run_dir in runs
            for match in sorted((run_dir / "matches").glob("*.json"))]


def plain(data: Any) -> Any:
    return orjson.loads(orjson.dumps(data))


def boards_of(log: dict) -> tuple[int, ...] | None:
    return board_seeds(log["seed"], log["match"]["hands"]) if log["match"].get("boards") else None


def decisions(log: dict) -> list[list[tuple[int, str, tuple, tuple, Any]]]:
    """Per hand, every decision as the log has it: (seat, kind, cards held, legal answers,
    answer), found by giving a fresh match the logged answers in order."""
    rules, players = Rules.from_dict(log["rules"]), len(log["bots"])
    match = Match(rules, players, log["seed"], log.get("stack", 0), boards_of(log))
    out = []
    for logged in log["hands"]:
        assert "faults" not in logged  # well-behaved bots: every answer is in the log
        hand, steps = match.next_hand(), []
        bids, pre = deque(logged["bids"]), deque(logged.get("pre", ()))
        plays = deque(c for _, trick, _ in logged["tricks"] for _, c in trick)
        plays.extend(c for _, c in logged.get("trick", ()))
        while not hand.over:
            kind, seat = hand.kind, hand.to_act
            if kind == BID:
                while bids[0][0] != seat:
                    bids.popleft()  # Sir Garnet's forced Nap: logged as a bid, never asked
                answer = bids.popleft()[1]
            elif kind == PLAY:
                answer = plays.popleft()
            else:
                answer = pre.popleft()[2]
                answer = tuple(answer) if isinstance(answer, list) else answer
            steps.append((seat, kind, hand.hands[seat], hand.legal(), answer))
            hand.apply(answer)
        match.finish(hand)
        assert plain(hand.record()) == logged
        out.append(steps)
    return out


def test_the_runs_cover_every_decision_kind_at_both_tables(logs):
    assert {len(log["bots"]) for _, log in logs} == {3, 5}
    kinds = {kind for _, log in logs for steps in decisions(log) for _, kind, _, _, _ in steps}
    assert kinds == {"bid", "play", "peep", "floater_peep", "exchange", "garnet", "garnet_discard",
                     "peep_exchange", "floater_discard", "trumps"}


def test_pettingzoo_deals_offers_and_settles_what_the_run_logged(logs):
    for _, log in logs:
        players = len(log["bots"])
        env = NapEnv(Rules.from_dict(log["rules"]), players, hands=len(log["hands"]), stack=log.get("stack", 0))
        env.reset(seed=log["seed"], options={"boards": boards_of(log)})
        for logged, steps in zip(log["hands"], decisions(log)):
            assert env.table is not None
            assert plain(env.table.hand.dealt) == logged["deal"] and env.table.hand.dealer == logged["dealer"]
            chips = [0] * players
            for seat, kind, held, legal, answer in steps:
                assert env.agent_selection == f"seat_{seat}"
                mask = env.observe(env.agent_selection)["action_mask"]
                assert list(np.flatnonzero(mask)) == sorted(action_of(kind, held, a) for a in legal)
                env.step(action_of(kind, held, answer))
                for s in range(players):
                    chips[s] += env.rewards[f"seat_{s}"]
            assert plain(env.table.records[-1]) == logged
            assert chips == logged["chips"]  # no variant here shares the kitty at the end


def test_gymnasium_with_the_runs_bots_plays_the_runs_hands(logs):
    for settings, log in logs:
        players, index = len(log["bots"]), log["match"]["index"]
        learner = index % players  # a different seat learns in different matches
        others = [b for s, b in enumerate(log["bots"]) if s != learner]
        env = NapSeatEnv(Rules.from_dict(log["rules"]), players, seat=learner, hands=len(log["hands"]),
                         opponents=[{"name": b["name"], "params": b["params"]} for b in others])
        mine = deque(step for steps in decisions(log) for step in steps if step[0] == learner)
        seeds = {s: bot_seed(settings["seed"], index, s) for s in range(players) if s != learner}
        obs, info = env.reset(seed=log["seed"], options={"boards": boards_of(log), "bot_seeds": seeds})
        done, total = False, info["reward"]
        while not done:
            _, kind, held, legal, answer = mine.popleft()
            assert list(np.flatnonzero(obs["action_mask"])) == sorted(action_of(kind, held, a) for a in legal)
            obs, reward, done, _, info = env.step(action_of(kind, held, answer))
            total += reward
        assert not mine
        assert plain(info["records"]) == log["hands"]
        assert total == sum(h["chips"][learner] for h in log["hands"])


def test_batched_tables_with_the_runs_bots_play_the_runs_hands(logs):
    """Every logged match at once per variant: one `NapVectorEnv` table a match, the
    learner in a different seat at each, the run's bots and seeds around it (a lineup a
    table), stepped with the learner's logged answers; each table settles its match's
    hands record for record. Tables of one batch finish at different steps: a finished
    table's next action is ignored (it is dealt again), and it is not looked at again."""
    by_variant: dict[str, list[tuple[dict, dict]]] = {}
    for settings, log in logs:
        by_variant.setdefault(f"{log['variant']}/{len(log['bots'])}", []).append((settings, log))
    batches = 0
    for group in by_variant.values():
        first = group[0][1]
        players, hands = len(first["bots"]), len(first["hands"])
        seats = [log["match"]["index"] % players for _, log in group]
        lineups = [[{"name": b["name"], "params": b["params"]} for s, b in enumerate(log["bots"]) if s != seat]
                   for (_, log), seat in zip(group, seats)]
        env = NapVectorEnv(len(group), Rules.from_dict(first["rules"]), players, seat=seats, hands=hands,
                           lineups=lineups, stack=first.get("stack", 0))
        mine = [deque(step for steps in decisions(log) for step in steps if step[0] == seat)
                for (_, log), seat in zip(group, seats)]
        obs, info = env.reset(seed=[log["seed"] for _, log in group], options={
            "boards": [boards_of(log) for _, log in group],
            "bot_seeds": [{s: bot_seed(settings["seed"], log["match"]["index"], s) for s in range(players) if s != seat}
                          for (settings, log), seat in zip(group, seats)]})
        totals, done = list(info["reward"]), [False] * len(group)
        while not all(done):
            actions = []
            for i, steps in enumerate(mine):
                if done[i]:
                    actions.append(0)
                    continue
                _, kind, held, legal, answer = steps.popleft()
                assert list(np.flatnonzero(obs["action_mask"][i])) == sorted(action_of(kind, held, a) for a in legal)
                actions.append(action_of(kind, held, answer))
            obs, rewards, terminated, _, _ = env.step(np.array(actions))
            for i, (_, log) in enumerate(group):
                if done[i]:
                    continue
                totals[i] += rewards[i]
                if terminated[i]:
                    assert not mine[i]
                    assert plain(env.tables[i].table.records) == log["hands"]
                    assert totals[i] == sum(h["chips"][seats[i]] for h in log["hands"])
                    done[i] = True
        env.close()
        batches += 1
    assert batches == sum(len(run["variants"]) for run in RUNS.values())


def test_openspiel_deals_offers_and_settles_the_runs_first_hands(logs):
    pyspiel = pytest.importorskip("pyspiel", reason="the OpenSpiel game needs the openspiel extra")
    from naparena.envs import spiel

    played = 0
    for _, log in logs:
        rules, players = Rules.from_dict(log["rules"]), len(log["bots"])
        if log["variant"] not in VARIANTS or make_rules(log["variant"]) != rules:
            continue  # OpenSpiel has the named variants
        game = pyspiel.load_game(spiel.SHORT_NAME, {"variant": log["variant"], "players": players})
        state = game.new_initial_state()
        for action in spiel.chance_actions(rules, players, log["seed"], boards_of(log)):
            state.apply_action(action)
        logged, steps = log["hands"][0], decisions(log)[0]
        assert plain(state.hand.dealt) == logged["deal"]
        for seat, kind, held, legal, answer in steps:
            assert state.current_player() == seat
            assert state.legal_actions() == sorted(action_of(kind, held, a) for a in legal)
            state.apply_action(action_of(kind, held, answer))
        assert state.is_terminal()
        record = {**plain(state.hand.record()), "cut": logged["cut"]}
        assert record == logged
        assert state.returns() == [float(c) for c in logged["chips"]]
        played += 1
    assert played >= 10


def test_one_call_replays_a_logged_match_from_the_run_directory(runs):
    """`replay(run_dir, match, seat)`: the run's deals and seeded bots around the seat, its
    logged answers as actions; stepping them settles the logged hands, every one."""
    replayed = 0
    for _, run_dir in runs:
        for path in sorted((run_dir / "matches").glob("*.json")):
            log, index = load_match(path), int(path.stem)
            seat = index % len(log["bots"])
            again = replay(run_dir, index, seat)
            assert plain(again.play()) == log["hands"]
            assert again.info["reward"] + sum(again.rewards) == sum(h["chips"][seat] for h in log["hands"])
            again.env.close()
            replayed += 1
    assert replayed >= sum(len(run["variants"]) for run in RUNS.values())  # a match a variant at least


def test_without_the_runs_bot_seeds_the_same_answers_do_not_replay_the_match(runs):
    """The control: the other seats' bots seeded otherwise (random and the heuristics'
    tie-breaks) answer otherwise, and the logged answers no longer fit."""
    differ = 0
    for _, run_dir in runs:
        for path in sorted((run_dir / "matches").glob("*.json")):
            log, index = load_match(path), int(path.stem)
            seat = index % len(log["bots"])
            again = replay(run_dir, index, seat)
            boards = board_seeds(log["seed"], log["match"]["hands"]) if log["match"].get("boards") else None
            again.obs, again.info = again.env.reset(seed=log["seed"], options={"boards": boards})
            differ += plain(again.play()) != log["hands"]
            again.env.close()
    assert differ > 0
