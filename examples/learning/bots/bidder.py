"""The bidder examples/learning/train_bidder.py trained, as a drop-in bot named
`learned-bidder`: its network chooses every bid; `heuristic` answers every other
decision (its card play), through `policy_bot(..., kinds=("bid",), base=HeuristicBot)`.
It was trained in classic Nap at every table size (two to seven seats), and declares the
other variants not played (`Bot.not_played`), so `naparena check` says so and a
tournament refuses them.
"""

from pathlib import Path

from naparena_bots._bidding import Network

from naparena import hookimpl
from naparena.bots.reference import HeuristicBot
from naparena.envs.policy import policy_bot
from naparena.game.rules import make_rules

MODEL = Path(__file__).resolve().parent.parent / "bidder.npz"
CLASSIC = make_rules("classic")


class LearnedBidder(policy_bot(
        "learned-bidder", Network.load(MODEL).policy(CLASSIC),
        "Bids with a network trained against heuristic (examples/learning/train_bidder.py); "
        "plays its cards as heuristic does.", kinds=("bid",), base=HeuristicBot)):

    @classmethod
    def not_played(cls, rules):
        return None if rules == CLASSIC else "trained for classic Nap only (every table size)"


@hookimpl
def register_bots(register):
    register(LearnedBidder)
