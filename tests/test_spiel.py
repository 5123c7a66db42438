"""Nap in OpenSpiel (`python_nap`): OpenSpiel's own checks for Python games, the
observation API, the determinizing resampler, ISMCTS, and an OpenSpiel bot as a naparena bot."""

from __future__ import annotations

import pickle
import random

import pytest

pytest.importorskip("numpy", reason="the learning environments need the envs extra")
pyspiel = pytest.importorskip("pyspiel", reason="the OpenSpiel game needs the openspiel extra")

from open_spiel.python.observation import make_observation  # noqa: E402

from naparena.envs import spiel  # noqa: E402
from naparena.envs.encoding import action_name, encode  # noqa: E402
from naparena.envs.policy import SpielBot, spiel_bot  # noqa: E402
from naparena.envs.table import Table  # noqa: E402
from naparena.game.engine import Match  # noqa: E402
from naparena.game.rules import VARIANTS, default_table, make_rules  # noqa: E402
from tests.helpers import flat, invoke, write_tournament  # noqa: E402

NAMED = sorted(VARIANTS)


def _game(variant: str, players: int):
    return pyspiel.load_game(spiel.SHORT_NAME, {"variant": variant, "players": players})


def _tables():
    """Every named variant at its default table and at one other size it allows."""
    out = []
    for name in NAMED:
        rules = make_rules(name)
        first = default_table(rules)
        other = next(n for n in (3, 5, 2, 6, 7, 4) if n != first and _deals(rules, n))
        out += [(name, first), (name, other)]
    return out


def _deals(rules, players: int) -> bool:
    try:
        rules.check_players(players)
    except Exception:
        return False
    return True


@pytest.mark.parametrize(("variant", "players"), _tables())
def test_openspiel_random_simulation_and_serialization(variant, players):
    game = _game(variant, players)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def _dealt(game, seed: int = 0):
    state = game.new_initial_state()
    rng = random.Random(seed)
    while state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes())
        assert abs(sum(probs) - 1) < 1e-9
        state.apply_action(rng.choice(actions))
    return state


def _played(game, seed: int, decisions: int):
    state, rng = _dealt(game, seed), random.Random(seed)
    for _ in range(decisions):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def test_games_and_states_pickle_and_deserialize():
    game = _game("pagat", 3)
    state = _played(game, 4, 6)
    assert str(pickle.loads(pickle.dumps(game))) == str(game)
    assert str(pickle.loads(pickle.dumps(state))) == str(state)
    again_game, again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert str(again) == str(state) and again.history() == state.history()


def test_the_observation_api_gives_each_seat_its_own_view():
    game = _game("classic", 4)
    state = _played(game, 2, 9)
    recall = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    plain = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    for player in range(4):
        recall.set_from(state, player)
        plain.set_from(state, player)
        assert list(recall.tensor) == state.information_state_tensor(player)
        assert list(plain.tensor) == state.observation_tensor(player)
        assert recall.string_from(state, player) == state.information_state_string(player)
        assert len(recall.tensor) == game.information_state_tensor_size()
        hand = " ".join(spiel.cards.NAMES[c] for c in state.hand.hands[player])
        assert f"hand {hand} " in state.information_state_string(player)
    others = [state.information_state_string(p) for p in range(4)]
    assert len(set(others)) == 4


def test_one_observer_follows_any_state_it_is_shown():
    """OpenSpiel keeps one observer per game and shows it states in any order (a search
    jumps between its determinizations): each tensor must be the state's view encoded
    afresh, then its tricks in order."""
    game, rng = _game("classic", 4), random.Random(4)
    observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    states = [_played(game, seed, k) for seed in range(3) for k in (0, 6, 12)]
    for _ in range(60):
        state, player = rng.choice(states), rng.randrange(4)
        observer.set_from(state, player)
        view = state.view(player)
        head = observer.tensor[:spiel.OBS_SIZE]
        assert (head == encode(view)).all() if view is not None else not head.any()
        tricks = observer.tensor[spiel.OBS_SIZE:].reshape(spiel.MAX_TRICKS, -1)
        done = len(view.tricks) if view is not None else 0
        assert tricks[:done].sum() == done * 5 and not tricks[done:].any()  # the leader and four cards

def test_chance_actions_deal_what_a_match_seed_deals():
    rules = make_rules("hoyle")
    game = _game("hoyle", 5)
    state = game.new_initial_state()
    for action in spiel.chance_actions(rules, 5, 1234):
        state.apply_action(action)
    hand = Match(rules, 5, 1234).next_hand()
    assert state.hand.dealt == hand.dealt and state.hand.dealer == hand.dealer


@pytest.mark.parametrize(("variant", "players"), [("classic", 4), ("seven-card", 5), ("peel", 2), ("misere", 3)])
def test_resampling_keeps_what_the_seat_knows_and_deals_the_rest_afresh(variant, players):
    game = _game(variant, players)
    changed = False
    for seed in range(6):
        state = _played(game, seed, 3 + 2 * seed)
        if state.is_terminal():
            continue
        player = state.current_player()
        for draw in range(4):
            other = state.resample_from_infostate(player, random.Random(draw).random)
            assert other.information_state_string(player) == state.information_state_string(player)
            assert other.legal_actions() == state.legal_actions()
            changed |= other.hand.dealt != state.hand.dealt
    assert changed


def test_ismcts_plays_a_hand_to_the_end():
    game = _game("classic", 3)
    state = _dealt(game, 5)
    bots = [spiel.ismcts_bot(game, seed=s, simulations=20) for s in range(3)]
    while not state.is_terminal():
        state.apply_action(bots[state.current_player()].step(state))
    assert state.returns() == [float(c) for c in state.hand.chips]
    assert state.hand.result in ("made", "lost", "passed")


def test_an_openspiel_bot_plays_at_a_naparena_table():
    cls = spiel_bot("ismcts-test", lambda game, seed: spiel.ismcts_bot(game, seed, simulations=10))
    assert issubclass(cls, SpielBot)
    table = Table(make_rules("classic"), 3, 2, seed=21)
    bots = [cls(random.Random(s), s) for s in range(3)]
    while not table.over:
        view = table.hand.acting_view()
        table.answer(getattr(bots[view.seat], view.kind)(view))
    assert all(not r.get("faults") for r in table.records)


def test_an_openspiel_bot_refuses_a_variant_it_cannot_determinize():
    cls = spiel_bot("ismcts-test", lambda game, seed: spiel.ismcts_bot(game, seed, simulations=10))
    table = Table(make_rules("purchase"), 3, 1, seed=2)
    while table.hand.kind != "bid":
        table.act(table.decision().actions[0])
    with pytest.raises(ValueError, match="hidden exchanges"):
        cls(random.Random(0), table.to_act).bid(table.hand.acting_view())


def test_resampling_respects_a_wellington_opening_lead():
    """Classic's Wellington bidder leads the lowest card of a suit: a deal that gives him a
    lower one could not have led it, and the replay would refuse it."""
    game = _game("classic", 4)
    checked = 0
    for seed in range(40):
        state = _dealt(game, seed)
        for _ in range(4):  # the first seat bids Nap, the next Wellington, the rest pass
            names = [action_name(a) for a in state.legal_actions()]
            want = "nap" if "nap" in names and "wellington" not in names else "wellington"
            choice = want if want in names else "pass"
            state.apply_action(state.legal_actions()[names.index(choice)])
        if state.hand.contract != "wellington":
            continue
        state.apply_action(state.legal_actions()[-1])  # the bidder's opening lead
        defender = state.current_player()
        for draw in range(25):
            again = state.resample_from_infostate(defender, random.Random(draw).random)
            assert again.information_state_string(defender) == state.information_state_string(defender)
        checked += 1
    assert checked >= 3


def _every_table():
    """The 71 tables: every named variant at every size it deals."""
    return [(name, n) for name in NAMED for n in range(2, 8) if _deals(make_rules(name), n)]


def _bound_faults(game, rng: random.Random, games: int, declared: dict | None = None) -> list[str]:
    """What OpenSpiel's API test checks of a game's sizes (`test_sequence_lengths`: the
    history, the move number and the chance nodes of every state within the declared
    bounds), and the decisions, returns and tensor sizes, on `games` random games."""
    d = declared or {
        "history": game.max_history_length(), "moves": game.max_move_number(),
        "chance": game.max_chance_nodes_in_history(), "decisions": game.max_game_length(),
        "low": game.min_utility(), "high": game.max_utility()}
    faults: list[str] = []

    def check(state) -> None:
        history = state.full_history()
        chance = sum(1 for item in history if item.player == pyspiel.PlayerId.CHANCE)
        for name, value in (("history", len(history)), ("moves", state.move_number()),
                            ("chance", chance), ("decisions", len(history) - chance)):
            if value > d[name]:
                faults.append(f"{name} {value} > {d[name]}")

    info_size, obs_size = game.information_state_tensor_size(), game.observation_tensor_size()
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            check(state)
            if not state.is_chance_node():
                player = state.current_player()
                if len(state.information_state_tensor(player)) != info_size:
                    faults.append("information-state tensor size")
                if len(state.observation_tensor(player)) != obs_size:
                    faults.append("observation tensor size")
            state.apply_action(rng.choice(state.legal_actions()))
        check(state)
        faults += [f"return {r} outside [{d['low']}, {d['high']}]" for r in state.returns()
                   if not d["low"] <= r <= d["high"]]
    return faults


@pytest.mark.parametrize(("variant", "players"), _every_table())
def test_openspiel_sizes_hold_on_every_table(variant, players):
    game = _game(variant, players)
    assert game.max_chance_nodes_in_history() >= 1 + make_rules(variant).pack_size(players)
    assert game.information_state_tensor_shape() == [game.information_state_tensor_size()]
    assert game.observation_tensor_shape() == [game.observation_tensor_size()]
    assert _bound_faults(game, random.Random(players), games=2) == []


def test_the_bounds_check_catches_a_game_that_under_declares_its_deal():
    """The control: hoyle at two deals the whole pack (53 chance nodes); the sizes the
    game declared before counting the deal (24 decisions, so 24 chance nodes and a
    history of 48) fail the same check."""
    game = _game("hoyle", 2)
    old = {"history": 48, "moves": 48, "chance": 24, "decisions": 24,
           "low": game.min_utility(), "high": game.max_utility()}
    faults = _bound_faults(game, random.Random(0), games=1, declared=old)
    assert "chance 53 > 24" in faults and any(f.startswith("history") for f in faults)


# --- an OpenSpiel bot declares the variants it plays -------------------------------------

SPIEL_DROP_IN = '''
import pyspiel
from naparena import hookimpl
from naparena.envs.policy import spiel_bot


class FirstLegal(pyspiel.Bot):
    """The cheapest OpenSpiel bot: its first legal action."""

    def __init__(self):
        pyspiel.Bot.__init__(self)

    def step(self, state):
        return state.legal_actions()[0]

    def restart_at(self, state):
        pass


First = spiel_bot("spiel-first", lambda game, seed: FirstLegal())


@hookimpl
def register_bots(register):
    register(First)
'''

DECLINED = ("ecarte", "floater", "peep", "purchase", "sir-garnet")


def test_an_openspiel_bot_declares_the_variants_it_does_not_play():
    cls = spiel_bot("spiel-declares", lambda game, seed: None)
    declined = [name for name in NAMED if cls.not_played(make_rules(name)) is not None]
    assert declined == list(DECLINED)
    assert "hidden exchanges" in cls.not_played(make_rules("purchase"))
    custom = make_rules("classic", {"dealer_ante": 2})
    assert "custom variant" in cls.not_played(custom)


def test_check_reports_declined_variants_as_not_played_not_faults(tmp_path):
    write_tournament(tmp_path, drop_ins={"first": SPIEL_DROP_IN}, example=False)
    result = invoke("check", "spiel-first", "--bots-dir", tmp_path / "bots", "--hands", "1")
    text = flat(result.output)
    assert result.exit_code == 0, text
    assert "every decision legal in 7 variants" in text
    assert "not played (the bot declines them): " + ", ".join(v for v in VARIANTS if v in DECLINED) in text
    for name in DECLINED:
        assert f"not played in {name}: an OpenSpiel bot plays" in text


def test_a_tournament_refuses_a_bot_in_a_variant_it_declines(tmp_path):
    path = write_tournament(tmp_path, bots=("spiel-first", "random"), variants=("classic", "purchase"),
                            drop_ins={"first": SPIEL_DROP_IN}, example=False, seeds=1, hands=2, table=3)
    result = invoke("run", path, "--log-dir", tmp_path / "logs")
    text = flat(result.output)
    assert result.exit_code == 2, text
    assert (f"{path}: bots[1].name: bot 'spiel-first' does not play variant 'purchase' (variants[2]): "
            "an OpenSpiel bot plays the named variants without hidden exchanges") in text
    assert "Traceback" not in text and not (tmp_path / "logs").exists()
    control = write_tournament(tmp_path, file="ok", bots=("spiel-first", "random"), variants=("classic",),
                               drop_ins={"first": SPIEL_DROP_IN}, example=False, seeds=1, hands=2, table=3)
    assert invoke("run", control, "--log-dir", tmp_path / "ok-logs").exit_code == 0


def test_check_in_a_seat_process_declines_the_same_variants(tmp_path):
    from naparena.arena.setup.settings import Isolation
    from naparena.bots.plugins import load_registry
    from naparena.tools.check import check_bot

    write_tournament(tmp_path, drop_ins={"first": SPIEL_DROP_IN}, example=False)
    registry = load_registry(tmp_path / "bots")
    (report,) = check_bot(registry, "spiel-first", hands=1, variants=["purchase"], isolation=Isolation.PROCESS)
    assert report.ok and report.hands == 0 and "hidden exchanges" in report.not_played
