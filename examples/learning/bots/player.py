"""The player examples/learning/train_player.py trained, as a drop-in bot named
`learned-player`: its network answers every decision, bids and cards alike, through
`policy_bot`. It was trained in classic Nap at a table of four (imitating `heuristic`,
then by PPO against it) and declares every other variant not played; at the other table
sizes of classic it plays legally, untrained (a bot declines variants, not table sizes).
"""

from pathlib import Path

from naparena_bots._player import Network

from naparena import hookimpl
from naparena.envs.policy import policy_bot
from naparena.game.rules import make_rules

MODEL = Path(__file__).resolve().parent.parent / "player.npz"
CLASSIC = make_rules("classic")


class LearnedPlayer(policy_bot(
        "learned-player", Network.load(MODEL).policy(),
        "Bids and plays with a network trained against heuristic (examples/learning/train_player.py).")):

    @classmethod
    def not_played(cls, rules):
        return None if rules == CLASSIC else "trained for classic Nap only"


@hookimpl
def register_bots(register):
    register(LearnedPlayer)
