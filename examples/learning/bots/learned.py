"""The policy examples/learning/train.py trained, as a drop-in bot named `learned`.

Any policy on the observation vector and the action mask registers the same way
(`naparena.envs.policy.policy_bot`); so does an OpenSpiel bot (`spiel_bot`).
"""

from pathlib import Path

from naparena import hookimpl
from naparena.envs.policy import load_linear_policy, policy_bot

POLICY = Path(__file__).resolve().parent.parent / "policy.npz"

LearnedBot = policy_bot(
    "learned", load_linear_policy(str(POLICY)),
    "A linear policy trained by REINFORCE against random (examples/learning/train.py).")


@hookimpl
def register_bots(register):
    register(LearnedBot)
