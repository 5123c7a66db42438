"""The batched environments (naparena.envs.vector): the same games as the single ones,
table for table, at every named variant and table size; Gymnasium's VectorEnv
conventions (spaces, seeding, the three autoreset modes, infos, wrappers, make_vec);
and masks checked against the engine's legal answers, with the control that a wrong
mask is caught."""

from __future__ import annotations

import random
import warnings

import pytest

np = pytest.importorskip("numpy", reason="the learning environments need the envs extra")
gym = pytest.importorskip("gymnasium", reason="the learning environments need the envs extra")
pytest.importorskip("pettingzoo", reason="the learning environments need the envs extra")

from gymnasium.utils import seeding  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402

from naparena.envs import encoding, vector  # noqa: E402
from naparena.envs.aec import NapEnv  # noqa: E402
from naparena.envs.single import NapSeatEnv  # noqa: E402
from naparena.envs.vector import NapSelfPlay, NapVectorEnv  # noqa: E402
from naparena.errors import RulesError  # noqa: E402
from naparena.game.rules import VARIANTS, make_rules  # noqa: E402


def _sizes(variant: str) -> list[int]:
    out = []
    for players in range(2, 8):
        try:
            make_rules(variant).check_players(players)
        except RulesError:
            continue
        out.append(players)
    return out


# Every named variant at every table it can deal (71 tables).
EVERY_TABLE = [(v, p) for v in VARIANTS for p in _sizes(v)]


def test_every_table_is_every_variant_at_every_size_it_deals():
    assert len(EVERY_TABLE) == 71 and {v for v, _ in EVERY_TABLE} == set(VARIANTS)


def pick(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row; 0 for a row without one (its action is ignored)."""
    return np.array([int(rng.choice(np.flatnonzero(row))) if row.any() else 0 for row in mask])


def legal_mask(hand, seat: int) -> np.ndarray:
    """The engine's legal answers of `seat` in `hand` as flags, through the documented map
    (`encoding.action_of`), answer by answer: none outside the seat's turn."""
    flags = np.zeros(encoding.NUM_ACTIONS, np.int8)
    if not hand.over and hand.to_act == seat:
        for answer in hand.legal():
            flags[encoding.action_of(hand.kind, hand.hands[seat], answer)] = 1
    return flags


def assert_rows_are_the_tables(env: NapVectorEnv, obs) -> None:
    """Every row is its table's learner's view, encoded, and its mask the engine's legal answers."""
    for i, seated in enumerate(env.tables):
        table = seated.table
        view = table.hand.view(seated.seat)
        assert np.array_equal(obs["observation"][i], encoding.encode(view)), f"table {i}: observation"
        assert np.array_equal(obs["action_mask"][i], legal_mask(table.hand, seated.seat)), f"table {i}: mask"


def _lineup(players: int) -> list[str]:
    return (["random", "heuristic", "bold", "cautious", "random", "heuristic"])[:players - 1]


@pytest.mark.parametrize(("variant", "players"), EVERY_TABLE)
def test_a_batched_table_plays_the_single_environments_hands(variant, players):
    """Three tables (the learner in three seats) against `SyncVectorEnv` of three
    `NapSeatEnv`s, Gymnasium's own batching of the single environment: the same seeds and
    actions give the same observations, masks, rewards and ends, through autoresets, and
    the same hand records; every row is its table's view and its mask the engine's legal
    answers."""
    seats, hands = [0, players - 1, 1], 1 + players % 2
    kwargs = {"variant": variant, "players": players, "opponents": _lineup(players), "hands": hands}
    batched = NapVectorEnv(3, seat=seats, **kwargs)
    single = SyncVectorEnv([lambda s=s: NapSeatEnv(seat=s, **kwargs) for s in seats])
    seed = 1000 + 7 * players + len(variant)
    obs, info = batched.reset(seed=seed)
    expected, expected_info = single.reset(seed=seed)
    assert np.array_equal(info["reward"], expected_info["reward"])
    rng, ended, steps = np.random.default_rng(seed), 0, 0
    while ended < 4:  # a match at every table and more: through an autoreset
        steps += 1
        assert steps < 500
        for key in ("observation", "action_mask"):
            assert np.array_equal(obs[key], expected[key]), key
        assert_rows_are_the_tables(batched, obs)
        actions = pick(obs["action_mask"], rng)
        obs, rewards, terminated, truncated, info = batched.step(actions)
        expected, want_rewards, want_terminated, want_truncated, want_info = single.step(actions)
        assert np.array_equal(rewards, want_rewards) and np.array_equal(terminated, want_terminated)
        assert np.array_equal(truncated, want_truncated)
        for i in np.flatnonzero(terminated):
            assert batched.tables[i].table.records == want_info["records"][i]
            ended += 1
    batched.close()
    single.close()


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
@pytest.mark.parametrize("observation", ["rich", "lean"])
def test_both_autoreset_modes_and_both_observations_match_gymnasiums_own_batching(mode, observation):
    kwargs = {"variant": "pagat", "players": 5, "opponents": ["heuristic"], "observation": observation}
    batched = NapVectorEnv(4, seat=[0, 1, 2, 3], autoreset_mode=mode, **kwargs)
    single = SyncVectorEnv([lambda s=s: NapSeatEnv(seat=s, **kwargs) for s in range(4)], autoreset_mode=mode)
    assert batched.metadata["autoreset_mode"] is mode
    obs, _ = batched.reset(seed=5)
    expected, _ = single.reset(seed=5)
    rng, finals = np.random.default_rng(5), 0
    for _ in range(30):
        assert np.array_equal(obs, expected) if observation == "lean" else all(
            np.array_equal(obs[k], expected[k]) for k in obs)
        mask = obs[:, encoding.OBS_SIZE:] if observation == "lean" else obs["action_mask"]
        actions = pick(mask, rng)
        obs, rewards, terminated, _, info = batched.step(actions)
        expected, want_rewards, want_terminated, _, want_info = single.step(actions)
        assert np.array_equal(rewards, want_rewards) and np.array_equal(terminated, want_terminated)
        if mode is AutoresetMode.SAME_STEP and terminated.any():
            assert np.array_equal(info["_final_obs"], want_info["_final_obs"])
            for i in np.flatnonzero(terminated):
                got, want = info["final_obs"][i], want_info["final_obs"][i]
                assert np.array_equal(got, want) if observation == "lean" else all(
                    np.array_equal(got[k], want[k]) for k in want)
                finals += 1
    assert finals >= 4 or mode is AutoresetMode.NEXT_STEP


def test_a_learner_for_some_decision_kinds_plays_the_single_environments_hands():
    kwargs = {"variant": "peep", "players": 4, "opponents": ["heuristic"], "kinds": ["bid"], "base": "heuristic"}
    batched = NapVectorEnv(4, seat=[0, 1, 2, 3], **kwargs)
    single = SyncVectorEnv([lambda s=s: NapSeatEnv(seat=s, **kwargs) for s in range(4)])
    obs, _ = batched.reset(seed=9)
    expected, _ = single.reset(seed=9)
    rng = np.random.default_rng(9)
    for step in range(12):
        assert np.array_equal(obs["observation"], expected["observation"])
        live = obs["action_mask"].any(axis=1)
        assert (obs["observation"][live, encoding.BLOCKS["kind"][0]] == 1).all()  # a bid, nothing else
        actions = pick(obs["action_mask"], rng)
        obs, rewards, terminated, _, info = batched.step(actions)
        expected, want_rewards, want_terminated, _, want_info = single.step(actions)
        assert np.array_equal(rewards, want_rewards) and np.array_equal(terminated, want_terminated)
        # One bid an episode, the rest the base bot's: every table ends at every other
        # step, and the step after deals it again.
        assert terminated.all() if step % 2 == 0 else not terminated.any()
        for i in np.flatnonzero(terminated):
            assert batched.tables[i].table.records == want_info["records"][i]


@pytest.mark.parametrize(("variant", "players"), EVERY_TABLE)
def test_self_play_plays_the_pettingzoo_environments_hands(variant, players):
    """Two self-play tables against two `NapEnv`s reset with the same match seeds and
    given the same actions: the same seat to act, view, mask, rewards, ends and records,
    through autoresets (a table's next match seed is its own generator's, seeded from
    the reset seed as a single environment's `np_random` is)."""
    hands = 1 + players % 2
    batched = NapSelfPlay(2, variant, players, hands=hands)
    seed = 2000 + 7 * players + len(variant)
    obs, _ = batched.reset(seed=seed)
    generators = [seeding.np_random(seed + i)[0] for i in range(2)]
    aec = [NapEnv(variant, players, hands=hands) for _ in range(2)]
    for i, env in enumerate(aec):
        env.reset(seed=seed + i)
    rng, pending, ended, steps = np.random.default_rng(seed), [False, False], 0, 0
    while ended < 3:  # a match each and more: through an autoreset
        steps += 1
        assert steps < 500
        for i, env in enumerate(aec):
            if pending[i]:
                continue  # a finished table's row: checked when it finished
            assert env.agent_selection == f"seat_{obs['to_act'][i]}"
            seen = env.observe(env.agent_selection)
            assert np.array_equal(obs["observation"][i], seen["observation"])
            assert np.array_equal(obs["action_mask"][i], seen["action_mask"])
        actions = pick(obs["action_mask"], rng)
        obs, rewards, terminated, _, _ = batched.step(actions)
        for i, env in enumerate(aec):
            if pending[i]:  # NEXT_STEP: this step dealt the table again, its action ignored
                assert not rewards[i].any() and not terminated[i]
                env.reset(seed=int(generators[i].integers(2 ** 63)))
                pending[i] = False
                continue
            env.step(int(actions[i]))
            assert list(rewards[i]) == [env.rewards[f"seat_{s}"] for s in range(players)]
            assert terminated[i] == all(env.terminations.values())
            if terminated[i]:
                assert batched.tables[i].records == env.table.records
                assert not obs["action_mask"][i].any()  # the last actor's view: nothing to answer
                pending[i], ended = True, ended + 1


def test_the_vector_environment_keeps_gymnasiums_conventions():
    """Spaces, metadata, seeding and infos as Gymnasium's VectorEnv documents them."""
    env = NapVectorEnv(5, "classic", 4, opponents=["random"])
    assert isinstance(env, VectorEnv) and env.num_envs == 5
    assert env.single_action_space == gym.spaces.Discrete(encoding.NUM_ACTIONS)
    assert env.action_space == batch_space(env.single_action_space, 5)
    assert env.observation_space == batch_space(env.single_observation_space, 5)
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert info["reward"].shape == (5,) and info["_reward"].dtype == np.bool_ and info["_reward"].all()
    obs2, _ = NapVectorEnv(5, "classic", 4).reset(seed=3)
    assert all(np.array_equal(obs[k], obs2[k]) for k in obs)  # a seed deals the same tables
    other, _ = NapVectorEnv(5, "classic", 4).reset(seed=4)
    assert not np.array_equal(obs["observation"], other["observation"])
    rng = np.random.default_rng(0)
    for _ in range(10):
        actions = pick(obs["action_mask"], rng)
        assert env.action_space.contains(actions)
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert env.observation_space.contains(obs)
        assert rewards.shape == (5,) and rewards.dtype == np.float64
        assert terminated.dtype == truncated.dtype == np.bool_ and not truncated.any()
        for key in info:
            if not key.startswith("_"):
                assert info[f"_{key}"].shape == (5,)
    with pytest.raises(ValueError, match="one action a table"):
        env.step(np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="seeds for 5 tables"):
        env.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="seat"):
        NapVectorEnv(2, "classic", 4, seat=[0, 4])


def test_next_step_autoreset_ignores_the_action_after_a_termination_and_deals_again():
    env = NapVectorEnv(3, "classic", 4)
    obs, _ = env.reset(seed=11)
    rng, checked = np.random.default_rng(1), 0
    for _ in range(30):
        obs, rewards, terminated, _, info = env.step(pick(obs["action_mask"], rng))
        ended = np.flatnonzero(terminated)
        assert not obs["action_mask"][ended].any()  # no decision left at a finished table
        if len(ended):
            junk = np.full(3, encoding.NUM_ACTIONS - 1)  # outside every mask: ignored where a table resets
            junk[~terminated] = pick(obs["action_mask"][~terminated], rng)
            obs, rewards, terminated_now, _, info = env.step(junk)
            assert not rewards[ended].any() and not terminated_now[ended].any()
            assert obs["action_mask"][ended].any(axis=1).all() and info["_reward"][ended].all()
            assert not any(r.get("faults") for i in ended for r in env.tables[i].table.records)
            checked += len(ended)
    assert checked >= 3


def test_disabled_autoreset_deals_only_the_tables_named():
    env = NapVectorEnv(3, "classic", 4, autoreset_mode="Disabled")
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(2)
    while True:
        live = obs["action_mask"].any(axis=1)
        if not live.all():
            break
        obs, _, terminated, _, _ = env.step(pick(obs["action_mask"], rng))
    with pytest.raises(RuntimeError, match="reset it"):
        env.step(pick(obs["action_mask"], rng))
    before = obs["observation"].copy()
    obs, info = env.reset(seed=[None, 77, None], options={"reset_mask": ~live})
    assert np.array_equal(obs["observation"][live], before[live])  # the others untouched
    assert obs["action_mask"].any(axis=1).all() and np.array_equal(info["_reward"], ~live)
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": np.zeros(3, np.bool_)})


def test_returned_arrays_are_copies_unless_asked_not_to_be():
    for copy in (True, False):
        env = NapVectorEnv(2, "classic", 4, copy=copy)
        obs, _ = env.reset(seed=1)
        kept = obs["observation"].copy()
        env.step(pick(obs["action_mask"], np.random.default_rng(0)))
        assert np.array_equal(obs["observation"], kept) is copy


def test_gymnasiums_vector_wrappers_and_make_vec_take_it():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        env = gym.make_vec("naparena/Nap-v0", num_envs=3, vectorization_mode="vector_entry_point",
                           variant="classic", players=4, opponents=["heuristic"])
    assert isinstance(env.unwrapped, NapVectorEnv) and env.num_envs == 3
    stats = gym.wrappers.vector.RecordEpisodeStatistics(env)
    obs, _ = stats.reset(seed=4)
    rng, returns, totals = np.random.default_rng(4), [], np.zeros(3)
    for _ in range(25):
        obs, rewards, terminated, _, info = stats.step(pick(obs["action_mask"], rng))
        totals += rewards
        for i in np.flatnonzero(terminated):
            assert info["episode"]["r"][i] == totals[i]
            returns.append(totals[i])
            totals[i] = 0
    assert len(returns) >= 3
    stats.close()


def test_seeded_tables_ignore_the_global_random_state():
    outcomes = []
    for disturb in (1, 2):
        random.seed(disturb)
        np.random.seed(disturb)
        env = NapVectorEnv(4, "classic", 4, opponents=["random", "heuristic", "bold"])
        obs, _ = env.reset(seed=21)
        rng, total = np.random.default_rng(0), []
        for _ in range(15):
            obs, rewards, *_ = env.step(pick(obs["action_mask"], rng))
            total.append(rewards.copy())
        outcomes.append(np.array(total))
    assert np.array_equal(*outcomes)


def test_a_masked_out_action_is_the_engines_fault_at_its_table_only():
    env = NapVectorEnv(2, "classic", 3, seat=[0, 0])
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    while not all(seated.table.hand.kind == "play" for seated in env.tables):
        obs, _, terminated, _, _ = env.step(pick(obs["action_mask"], rng))
        if terminated.any():
            obs, _ = env.reset(seed=int(rng.integers(1000)))
    legal = pick(obs["action_mask"], rng)
    illegal = next(a for a in range(encoding.NUM_ACTIONS) if not obs["action_mask"][0][a])
    _, _, terminated, _, _ = env.step(np.array([illegal, legal[1]]))
    record = env.tables[0].table.records[-1]
    assert terminated[0] and record["result"] == "revoke" and record["revoke"] == 0
    assert not any(r.get("faults") for r in env.tables[1].table.records)


def test_a_wrong_mask_is_caught(monkeypatch):
    """The control of the mask checks above: a writer that flags one action too many, or
    leaves one out, fails `assert_rows_are_the_tables` (and the comparison with the
    single environment)."""
    env = NapVectorEnv(3, "classic", 4)
    obs, _ = env.reset(seed=1)
    assert_rows_are_the_tables(env, obs)  # the honest writer passes
    put = vector.Rows.put

    def extra(rows, table, seat, i):
        put(rows, table, seat, i)
        rows.flags[i][encoding.NUM_ACTIONS - 1] = rows.flag

    def missing(rows, table, seat, i):
        put(rows, table, seat, i)
        rows.flags[i][table.decision().actions[0]] = 0 * rows.flag

    for wrong in (extra, missing):
        monkeypatch.setattr(vector.Rows, "put", wrong)
        obs, _ = env.reset(seed=1)
        with pytest.raises(AssertionError, match="mask"):
            assert_rows_are_the_tables(env, obs)
        monkeypatch.undo()


def test_self_play_rewards_every_seat_and_deals_again():
    env = NapSelfPlay(3, "classic", 4, hands=2)
    obs, _ = env.reset(seed=8)
    rng, chips = np.random.default_rng(8), np.zeros((3, 4))
    totals = []
    for _ in range(80):
        assert env.observation_space.contains(obs)
        obs, rewards, terminated, _, _ = env.step(pick(obs["action_mask"], rng))
        chips += rewards
        for i in np.flatnonzero(terminated):
            table = env.tables[i]
            assert list(chips[i]) == [sum(r["chips"][s] for r in table.records) for s in range(4)]
            assert len(table.records) == 2
            totals.append(chips[i].copy())
            chips[i] = 0
    assert len(totals) >= 3


def test_a_reset_may_move_the_learner_and_views_are_what_the_rows_encode():
    env = NapVectorEnv(4, "classic", 4, kinds=["bid"], base="heuristic", autoreset_mode="Disabled")
    obs, _ = env.reset(seed=[5, 5, 5, 5], options={"seat": [0, 1, 2, 3]})
    assert [t.seat for t in env.tables] == [0, 1, 2, 3]
    views = env.views()
    assert [v.seat for v in views] == [0, 1, 2, 3] and all(v.kind == "bid" for v in views)
    for i, view in enumerate(views):
        assert np.array_equal(obs["observation"][i], encoding.encode(view))
    hands = {tuple(v.hand) for v in views}
    assert len(hands) == 4  # one deal, four seats: four different hands
    obs, _ = env.reset(seed=[5, 5, 5, 5])  # the seats stay where the last reset put them
    assert [v.seat for v in env.views()] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="not a seat"):
        env.reset(options={"seat": [0, 1, 2, 4]})


def test_a_learner_the_rules_never_ask_is_refused_not_looped_forever():
    env = NapVectorEnv(2, "classic", 4, kinds=["peep"], base="heuristic")  # classic deals no peep card
    with pytest.raises(ValueError, match="never asked"):
        env.reset(seed=1)


def test_tables_may_have_lineups_of_their_own():
    env = NapVectorEnv(2, "classic", 3, lineups=[["random", "random"], ["heuristic", "bold"]])
    env.reset(seed=3)
    names = [[type(b).name for s, b in sorted(t.bots.items())] for t in env.tables]
    assert names == [["random", "random"], ["heuristic", "bold"]]
    with pytest.raises(ValueError, match="lineups"):
        NapVectorEnv(3, "classic", 3, lineups=[["random", "random"]])
    with pytest.raises(Exception, match="nobody"):
        NapVectorEnv(2, "classic", 3, lineups=[["random", "random"], ["nobody", "random"]])


def test_seat_processes_play_at_batched_tables_and_close_with_it(bots_dir):
    """Opponents in seat processes, as `NapSeatEnv` and `naparena run` start them: the same
    hands as the single environment; `close()` ends every seat process."""
    kwargs = {"variant": "classic", "players": 3, "hands": 2, "bots_dir": str(bots_dir(example=True)),
              "opponents": [{"name": "example", "isolation": "process"}, "random"]}
    batched = NapVectorEnv(2, seat=[0, 1], autoreset_mode="Disabled", **kwargs)
    obs, _ = batched.reset(seed=6)
    single = [NapSeatEnv(seat=s, **kwargs) for s in (0, 1)]
    expected = [env.reset(seed=6 + i)[0] for i, env in enumerate(single)]
    remotes = [r for t in batched.tables for r in t.remotes.values()]
    assert len(remotes) == 2 and all(r.channel is not None for r in remotes)
    rng, live = np.random.default_rng(6), [True, True]
    while any(live):
        for i in np.flatnonzero(live):
            assert np.array_equal(obs["observation"][i], expected[i]["observation"])
        actions = pick(obs["action_mask"], rng)
        if not all(live):  # Disabled: step only while every table has a match
            break
        obs, rewards, terminated, _, _ = batched.step(actions)
        for i in range(2):
            expected[i], reward, done, _, info = single[i].step(int(actions[i]))
            assert reward == rewards[i] and done == terminated[i]
            if done:
                assert batched.tables[i].table.records == info["records"]
                live[i] = False
    assert not any(r.get("faults") for t in batched.tables for r in t.table.records)
    batched.close()
    for env in single:
        env.close()
    assert all(r.channel is None or r.channel.closed for r in remotes)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_engines_trusted_entry_plays_exactly_as_apply(variant):
    """`Hand.apply_legal` (the action map's answers, legal by construction) leaves the
    hand exactly as `apply` does, answer for answer, in every variant; and refuses a
    finished hand as `apply` does."""
    from naparena.game.engine import Match

    for players in _sizes(variant)[:2]:
        checked, trusted = Match(make_rules(variant), players, 31), Match(make_rules(variant), players, 31)
        rng = random.Random(players)
        for _ in range(6):
            a, b = checked.next_hand(), trusted.next_hand()
            while not a.over:
                answer = rng.choice(a.legal())
                a.apply(answer)
                b.apply_legal(answer)
                assert (a.to_act, a.kind, a.legal() if not a.over else ()) == (
                    b.to_act, b.kind, b.legal() if not b.over else ())
            assert b.over and a.record() == b.record()
            checked.finish(a)
            trusted.finish(b)
            with pytest.raises(RuntimeError, match="over"):
                b.apply_legal(0)
