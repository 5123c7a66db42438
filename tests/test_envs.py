"""The learning environments (naparena.envs): the encoding and the action map against the
engine, PettingZoo's and Gymnasium's own checkers, and trained policies as bots."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="the learning environments need the envs extra")
pytest.importorskip("pettingzoo", reason="the learning environments need the envs extra")
pytest.importorskip("gymnasium", reason="the learning environments need the envs extra")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test, seed_test  # noqa: E402

from naparena.envs import encoding  # noqa: E402
from naparena.envs.aec import NapEnv  # noqa: E402
from naparena.envs.policy import PolicyBot, linear_policy, load_linear_policy, policy_bot  # noqa: E402
from naparena.envs.single import NapSeatEnv  # noqa: E402
from naparena.envs.table import Table  # noqa: E402
from naparena.game.cards import NAMES  # noqa: E402
from naparena.game.engine import DECISION_KINDS, Match  # noqa: E402
from naparena.game.rules import VARIANTS, make_rules  # noqa: E402
from tests.helpers import invoke, write_tournament  # noqa: E402

# Named and custom variants at several table sizes: every decision kind comes up.
TABLES = [
    ("classic", None, 4), ("peep", None, 3), ("purchase", None, 5), ("ecarte", None, 2),
    ("sir-garnet", None, 4), ("floater", None, 6), ("seven-card", None, 7), ("hoyle", None, 6),
    ("peel", {"deal": "2-3", "pack": "auto", "dealer_ante": 2}, 3),
]


def _random_playthrough(rules, players: int, seed: int, kinds: set[str]) -> None:
    """Play a match with random legal actions; at every decision the mask must be exactly
    the engine's legal answers, one action each, and decode back to them."""
    rng = random.Random(seed)
    table = Table(rules, players, 3, seed)
    while not table.over:
        hand, decision = table.hand, table.decision()
        kinds.add(hand.kind)
        mask = decision.mask()
        assert mask.sum() == len(hand.legal())
        decoded = [decision.answer(a) for a in np.flatnonzero(mask)]
        assert sorted(map(repr, decoded)) == sorted(map(repr, hand.legal()))
        held = hand.hands[hand.to_act]  # the documented map, answer by answer
        assert decision.actions == sorted(encoding.action_of(hand.kind, held, a) for a in hand.legal())
        table.act(rng.choice(decision.actions))


def test_the_mask_is_the_engines_legal_answers_for_every_decision_kind():
    kinds: set[str] = set()
    for variant, overrides, players in TABLES:
        rules = make_rules(variant, overrides)
        for seed in range(12):
            _random_playthrough(rules, players, seed, kinds)
    assert kinds == set(DECISION_KINDS)


def test_the_observation_is_the_seats_view_and_nothing_else():
    table = Table(make_rules("classic"), 4, 1, seed=5)
    seat = table.to_act
    obs = encoding.encode(table.hand.acting_view())
    assert obs.shape == (encoding.OBS_SIZE,) and obs.dtype == np.float32
    assert obs.min() >= 0 and obs.max() <= 1
    start, size = encoding.BLOCKS["hand"]
    assert list(np.flatnonzero(obs[start:start + size])) == list(table.hand.hands[seat])
    # Before a card is played or seen, no other block names a card.
    for block in ("seen", "trick", "played"):
        start, size = encoding.BLOCKS[block]
        assert not obs[start:start + size].any(), block


def test_seats_are_counted_from_the_observer():
    rules = make_rules("classic")
    table = Table(rules, 4, 1, seed=11)
    first = table.to_act
    table.act(table.decision().actions[0])  # the first seat bids (or passes)
    second = table.to_act
    view = table.hand.acting_view()
    obs = encoding.encode(view)
    start = encoding.BLOCKS["bids"][0]
    width = len(encoding.BID_NAMES)
    slot = (first - second) % 4
    bid = view.bids[0][1]
    assert obs[start + slot * width + encoding.BID_NAMES.index(bid)] == 1


def test_the_tables_observation_is_a_fresh_array():
    table = Table(make_rules("classic"), 4, 1, seed=5)
    seat = table.to_act
    first = table.observation(seat)
    first[:] = 0  # a learner keeping or writing its observation changes nothing in the table
    assert np.array_equal(table.observation(seat), encoding.encode(table.acting_view()))
    mask = table.mask(seat)
    mask[:] = 0
    assert table.mask(seat).sum() == len(table.hand.legal())


@pytest.mark.parametrize(("variant", "overrides", "players"), TABLES)
def test_pettingzoo_api_and_seed_tests_pass(variant, overrides, players):
    with warnings.catch_warnings():
        # PettingZoo warns of every Dict observation space, its classic card games' included.
        warnings.simplefilter("ignore", UserWarning)
        api_test(NapEnv(variant, players, hands=2, overrides=overrides), num_cycles=300)
        seed_test(lambda: NapEnv(variant, players, hands=2, overrides=overrides), num_cycles=300)


@pytest.mark.parametrize(("variant", "players"), [("classic", 4), ("sir-garnet", 3), ("purchase", 5)])
def test_the_lean_observation_passes_pettingzoos_tests_and_is_the_vector_then_the_mask(variant, players):
    api_test(NapEnv(variant, players, hands=2, observation="lean"), num_cycles=200)
    seed_test(lambda: NapEnv(variant, players, hands=2, observation="lean"), num_cycles=200)
    rich, lean = NapEnv(variant, players, hands=2), NapEnv(variant, players, hands=2, observation="lean")
    rich.reset(seed=5)
    lean.reset(seed=5)
    rng, steps = np.random.default_rng(5), 0
    for agent in rich.agent_iter():
        assert lean.agent_selection == agent
        full, _, done, _, info = rich.last()
        flat, _, _, _, lean_info = lean.last()
        assert flat.shape == (encoding.LEAN_SIZE,) and flat.dtype == np.float32
        assert (flat[:encoding.OBS_SIZE] == full["observation"]).all()
        assert (flat[encoding.OBS_SIZE:] == full["action_mask"]).all()
        assert "view" not in lean_info and ("view" in info or done)
        action = None if done else int(rng.choice(np.flatnonzero(full["action_mask"])))
        rich.step(action)
        lean.step(action)
        steps += 1
    assert steps > 10 and lean.table.records == rich.table.records


def test_an_unknown_observation_or_render_mode_is_refused():
    with pytest.raises(ValueError, match="observation 'tiny'; known: rich, lean"):
        NapEnv("classic", 4, observation="tiny")
    with pytest.raises(ValueError, match="render_mode 'rgb_array'"):
        NapSeatEnv("classic", 4, render_mode="rgb_array")


def _masked_random_match(env: NapEnv, seed: int) -> dict[str, float]:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    return totals


@pytest.mark.parametrize(("variant", "overrides", "players", "hands"), [
    ("classic", None, 4, 5), ("floater", None, 3, 6), ("peel", None, 2, 4),
    ("floater", {"kitty_at_end": "split"}, 4, 6),  # the kitty's shares come with the last hand
])
def test_pettingzoo_rewards_add_up_to_the_matchs_chips(variant, overrides, players, hands):
    env = NapEnv(variant, players, hands=hands, overrides=overrides)
    totals = _masked_random_match(env, seed=3)
    assert env.table is not None
    final = env.table.match.chips
    assert [totals[f"seat_{s}"] for s in range(players)] == final
    assert len(env.table.records) == hands


def test_reset_deals_what_a_match_seed_deals():
    env = NapEnv("pagat", 5)
    env.reset(seed=99)
    hand = Match(make_rules("pagat"), 5, 99).next_hand()
    assert env.table is not None
    assert env.table.hand.dealt == hand.dealt and env.table.hand.dealer == hand.dealer


def test_a_masked_out_action_is_the_engines_fault():
    env = NapEnv("classic", 3)
    env.reset(seed=1)
    while env.table is not None and env.table.hand.kind != "play":
        obs = env.observe(env.agent_selection)
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))  # bid: the hand is played
    if env.table.over:
        pytest.skip("this seed's hand ended in the bidding")  # pragma: no cover - seed 1 plays
    seat = env.table.to_act
    illegal = next(a for a in range(encoding.NUM_ACTIONS) if a not in env.table.decision().actions)
    env.step(illegal)
    record = env.table.records[-1]
    assert record["result"] == "revoke" and record["revoke"] == seat
    assert record["faults"][0][2] == "play"


@pytest.mark.parametrize(("kwargs"), [
    {},
    {"variant": "peep", "players": 3, "seat": 1, "opponents": ["heuristic", "cautious"], "hands": 3},
    {"variant": "classic", "players": 6, "seat": 2, "opponents": ["bold"], "hands": 2},
    {"variant": "misere", "overrides": {"deal": "1"}, "players": 5, "opponents": ["random"]},
])
def test_gymnasium_check_env_passes(kwargs):
    for extra in ({}, {"observation": "lean", "render_mode": "ansi"}):
        env = NapSeatEnv(**kwargs, **extra)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "no spec": made directly, not by gymnasium.make
            check_env(env, skip_render_check=not extra)
        env.close()


def test_gymnasium_renders_the_table_as_text(capsys):
    env = NapSeatEnv("classic", 4, render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    hands = "  ".join(f"{s}:" + " ".join(NAMES[c] for c in held) for s, held in enumerate(env.table.hand.hands))
    assert text.startswith("hand 0 bid seat 0 | ") and hands in text
    human = NapSeatEnv("classic", 4, render_mode="human")
    obs, _ = human.reset(seed=3)
    human.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert capsys.readouterr().out.startswith("hand 0 ")
    assert NapSeatEnv("classic", 4).render() is None


def _gym_episode(env: NapSeatEnv, seed: int) -> tuple[float, list[dict]]:
    obs, info = env.reset(seed=seed)
    total, done = float(info["reward"]), False
    rng = np.random.default_rng(seed)
    while not done:
        assert obs["action_mask"].any()
        obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        total += reward
    return total, info["records"]


def test_gymnasium_rewards_are_the_learners_chips_and_seeds_repeat():
    env = NapSeatEnv("classic", 4, seat=3, opponents=["heuristic", "random", "bold"], hands=4)
    total, records = _gym_episode(env, 8)
    assert total == sum(r["chips"][3] for r in records)
    again, records_again = _gym_episode(env, 8)
    assert (again, records_again) == (total, records)


@pytest.mark.slow
def test_gymnasium_opponents_in_seat_processes_and_external_programs(bots_dir):
    example = Path(__file__).resolve().parent.parent / "examples" / "js" / "napbot.js"
    node = shutil.which("node")
    opponents: list = [{"name": "example", "isolation": "process"}]  # a drop-in, in its own process
    if node:
        opponents.append({"name": "napbot-js", "command": [node, str(example)]})
    else:
        opponents.append({"name": "heuristic", "isolation": "process"})
    env = NapSeatEnv("classic", 3, opponents=opponents, hands=3, bots_dir=str(bots_dir(example=True)))
    total, records = _gym_episode(env, 4)
    assert total == sum(r["chips"][0] for r in records)
    assert not any(r.get("faults") for r in records)
    env.close()


def test_an_unknown_opponent_is_refused_before_play():
    with pytest.raises(Exception, match="nobody"):
        NapSeatEnv("classic", 3, opponents=["nobody"])


# --- policies as bots ----------------------------------------------------------------------

def test_a_policy_answers_through_the_action_map():
    # A linear scorer that prefers the highest card and the lowest bid action index.
    weights = np.zeros((encoding.NUM_ACTIONS, encoding.OBS_SIZE), np.float32)
    bias = np.zeros(encoding.NUM_ACTIONS, np.float32)
    bias[:52] = np.arange(52) % 13  # rank
    bias[encoding.BID] = 100  # always pass
    cls = policy_bot("linear-test", linear_policy(weights, bias))
    assert issubclass(cls, PolicyBot) and cls.name == "linear-test"
    table = Table(make_rules("classic"), 3, 1, seed=2)
    bot = cls(random.Random(0), table.to_act)
    view = table.hand.acting_view()
    assert bot.bid(view) == "pass"


POLICY_DROP_IN = '''
import numpy as np
from naparena import hookimpl
from naparena.envs.policy import policy_bot

def highest(obs, mask):
    legal = np.flatnonzero(mask)
    return int(legal[-1])  # the highest legal action: a card, a bid, a yes

Highest = policy_bot("highest-action", highest, "plays its highest legal action")

@hookimpl
def register_bots(register):
    register(Highest)
'''


def test_a_policy_drop_in_plays_a_tournament_and_check(tmp_path, run_session):
    path = write_tournament(tmp_path, bots=("highest-action", "random"), seeds=1, hands=6, table=3,
                            variants=("classic", "peep"), drop_ins={"policy": POLICY_DROP_IN}, example=False)
    _, standings = run_session(path, workers=1)
    assert standings
    result = invoke("check", "highest-action", "--bots-dir", tmp_path / "bots")
    assert result.exit_code == 0, result.output


# --- docs/ENVIRONMENTS.md --------------------------------------------------------------------

DOC = Path(__file__).resolve().parent.parent / "docs" / "ENVIRONMENTS.md"


def _doc_rows(first_header: str) -> list[list[str]]:
    lines = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first_header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
    return rows


def test_the_documented_observation_table_is_the_encoding():
    rows = _doc_rows("| block | start | size |")
    assert [(name, int(start), int(size)) for name, start, size, _ in rows] == \
        [(name, start, size) for name, (start, size) in encoding.BLOCKS.items()]
    assert f"`float32` vector of {encoding.OBS_SIZE} values" in DOC.read_text()


def test_the_documented_action_map_is_the_encoding():
    rows = _doc_rows("| actions | decision kinds | answer |")
    firsts = [int(cell.replace(",", "–").split("–")[0]) for cell, _, _ in rows]
    assert firsts == [encoding.CARD, encoding.BID, encoding.NO, encoding.KEEP, encoding.SUIT_ACTION,
                      encoding.EXCHANGE_ACTION, encoding.GARNET_ACTION]
    assert rows[-1][0] == f"{encoding.GARNET_ACTION}–{encoding.NUM_ACTIONS - 1}"
    text = " ".join(DOC.read_text().split())
    assert ", ".join(f"`{b}`" for b in encoding.BID_NAMES) in text


def _quick_start(framework: str) -> str:
    text = DOC.read_text()
    section = text.split(f"## Quick start: {framework}", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize("framework", ["PettingZoo", "Gymnasium", "many tables at once", "OpenSpiel"])
def test_each_quick_start_is_at_most_fifteen_lines(framework):
    assert len(_quick_start(framework).strip().splitlines()) <= 15


def test_the_pettingzoo_quick_start_runs(capsys):
    exec(compile(_quick_start("PettingZoo"), "quick start", "exec"), {})
    chips = eval(capsys.readouterr().out)
    assert len(chips) == 4 and sum(chips) == 0  # pagat has no kitty: what one seat wins, others lose


def test_the_batched_quick_start_runs(capsys):
    exec(compile(_quick_start("many tables at once"), "quick start", "exec"), {})
    assert float(capsys.readouterr().out) != 0.0  # 100 steps at 64 tables: hands were settled


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["Gymnasium", "OpenSpiel"])
def test_the_other_quick_starts_run(framework, capsys):
    if framework == "OpenSpiel":
        pytest.importorskip("pyspiel", reason="the OpenSpiel game needs the openspiel extra")
    exec(compile(_quick_start(framework), "quick start", "exec"), {})
    assert capsys.readouterr().out.strip()


# --- the learning example ----------------------------------------------------------------------

LEARNING = Path(__file__).resolve().parent.parent / "examples" / "learning"


def test_the_shipped_policy_beats_random_with_an_interval_that_excludes_zero(tmp_path, run_session):
    """The README's claim, from the committed policy.npz and tournament file as shipped."""
    _, standings = run_session(LEARNING / "tournament.toml", log_dir=str(tmp_path))
    learned = next(r for r in standings["ranking"] if r["bot"] == "learned")
    assert learned["ci95"][0] > 0 and learned["rank"] == 1


def test_the_training_script_saves_a_policy_a_bot_plays(tmp_path):
    out = tmp_path / "policy.npz"
    done = subprocess.run([sys.executable, str(LEARNING / "train.py"), "--episodes", "200", "--batch", "50",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    cls = policy_bot("trained-here", load_linear_policy(str(out)))
    table = Table(make_rules("classic"), 4, 2, seed=3)
    bots = [cls(random.Random(s), s) for s in range(4)]
    while not table.over:
        view = table.hand.acting_view()
        table.answer(getattr(bots[view.seat], view.kind)(view))
    assert not any(r.get("faults") for r in table.records)


def test_in_a_vector_env_the_terminal_step_masks_every_action_and_the_next_resets():
    """The documented special case: Gymnasium's vector envs reset a finished episode at
    the next step (their default), so the observation of the terminal step has no legal
    action; the action sent with the next step is ignored, whatever it is."""
    import gymnasium as gym

    envs = gym.vector.SyncVectorEnv([lambda: NapSeatEnv("classic", 4) for _ in range(2)])
    obs, _ = envs.reset(seed=1)
    rng, ended = np.random.default_rng(0), 0
    for _ in range(40):
        rows = obs["action_mask"]
        actions = [int(rng.choice(np.flatnonzero(row))) if row.any() else encoding.NUM_ACTIONS - 1 for row in rows]
        obs, _, terminated, _, _ = envs.step(actions)
        for i in np.flatnonzero(terminated):
            assert not obs["action_mask"][i].any()
            ended += 1
        assert all(obs["action_mask"][i].any() for i in np.flatnonzero(~terminated))
    assert ended >= 4
    envs.close()


def test_a_policy_for_some_decision_kinds_leaves_the_rest_to_its_base_bot():
    from naparena.bots.reference import HeuristicBot

    def always_pass(obs, mask):
        assert mask[encoding.BID]  # asked only at bids, where passing is legal here
        return encoding.BID  # "pass"

    cls = policy_bot("passer", always_pass, kinds=("bid",), base=HeuristicBot)
    assert cls.params == HeuristicBot.params and cls.name == "passer"
    table = Table(make_rules("classic"), 4, 1, seed=6)
    bots = [cls(random.Random(s), s) for s in range(4)]
    plays = 0
    while not table.over:
        view = table.hand.acting_view()
        answer = getattr(bots[view.seat], view.kind)(view)
        if view.kind == "bid":
            assert answer == "pass"
        else:  # the base bot's own answer, parameters and all
            assert answer == HeuristicBot(random.Random(view.seat), view.seat).play(view)
            plays += 1
        table.answer(answer)
    assert table.records[-1]["bids"] and (plays > 0 or table.records[-1]["result"] == "passed")
    with pytest.raises(ValueError, match="unknown decision kinds"):
        policy_bot("bad", always_pass, kinds=("bid", "shuffle"))


def _bidding_helpers():
    sys.path.insert(0, str(LEARNING / "bots"))
    try:
        import _bidding
    finally:
        sys.path.remove(str(LEARNING / "bots"))
    return _bidding


def test_the_bidder_training_script_saves_a_network_that_bids(tmp_path):
    out, curve = tmp_path / "bidder.npz", tmp_path / "curve.json"
    done = subprocess.run([sys.executable, str(LEARNING / "train_bidder.py"), "--deals", "120", "--batch", "32",
                           "--eval-hands", "40", "--eval-every", "60", "--out", str(out), "--curve", str(curve)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    points = json.loads(curve.read_text())
    assert [p["deals"] for p in points] == [60, 120] and all("ci95_half" in p for p in points)
    bidding = _bidding_helpers()
    net = bidding.Network.load(out)
    rules = make_rules("classic")
    table = Table(rules, 4, 1, seed=9)
    view = table.hand.acting_view()
    obs, mask = encoding.encode(view), encoding.Decision.of(view).mask()
    values = net.forward(bidding.features(obs, rules)[None])[1][0]
    legal = [encoding.BID_NAMES.index(b) for b in view.legal]
    assert net.policy(rules)(obs, mask) == encoding.BID + max(legal, key=lambda b: values[b])


def test_the_learned_bidder_is_checked_in_classic_and_declines_the_rest():
    result = invoke("check", "learned-bidder", "--bots-dir", LEARNING / "bots", "--hands", "2")
    text = " ".join(result.output.split())
    assert result.exit_code == 0, text
    others = [v for v in VARIANTS if v != "classic"]
    assert "every decision legal in 1 variants" in text
    assert "not played (the bot declines them): " + ", ".join(others) in text


def test_the_learned_player_answers_every_decision_legally_in_classic_and_declines_the_rest():
    result = invoke("check", "learned-player", "--bots-dir", LEARNING / "bots", "--hands", "2")
    text = " ".join(result.output.split())
    assert result.exit_code == 0, text
    assert "every decision legal in 1 variants" in text
    assert "not played (the bot declines them): " + ", ".join(v for v in VARIANTS if v != "classic") in text


def test_the_player_training_script_saves_a_network_that_plays(tmp_path):
    out, curve = tmp_path / "player.npz", tmp_path / "curve.json"
    done = subprocess.run([sys.executable, str(LEARNING / "train_player.py"), "--imitate", "2", "--improve", "2",
                           "--steps", "4", "--tables", "8", "--hidden", "16", "--minibatch", "16",
                           "--eval-hands", "16", "--eval-every", "2", "--out", str(out), "--curve", str(curve)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    points = json.loads(curve.read_text())
    assert [(p["update"], p["phase"]) for p in points] == [(2, "imitation"), (4, "ppo")]
    sys.path.insert(0, str(LEARNING / "bots"))
    try:
        import _player
    finally:
        sys.path.remove(str(LEARNING / "bots"))
    net = _player.Network.load(out)
    table = Table(make_rules("classic"), 4, 1, seed=9)
    view = table.hand.acting_view()
    mask = encoding.Decision.of(view).mask()
    assert mask[net.policy()(encoding.encode(view), mask)] == 1  # a legal action


@pytest.mark.slow
def test_the_shipped_bidder_beats_heuristic_with_an_interval_above_zero(tmp_path, run_session):
    """The README's claim, from the committed bidder.npz and bidder.toml as shipped."""
    _, standings = run_session(LEARNING / "bidder.toml", log_dir=str(tmp_path))
    pair = next(p for p in standings["variants"]["classic"]["pairs"]
                if {p["a"], p["b"]} == {"learned-bidder", "heuristic"})
    sign = 1 if pair["a"] == "learned-bidder" else -1
    low, high = sorted(sign * x for x in pair["ci95"])
    assert low > 0, pair
