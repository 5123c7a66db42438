"""OpenSpiel's ISMCTS as a drop-in naparena bot named `ismcts` (needs the openspiel extra).

At each bid and card it deals the cards it cannot see to fit its view, replays the hand
so far in OpenSpiel's `python_nap` game, and plays ISMCTS's choice there.
"""

from naparena import hookimpl
from naparena.envs import spiel
from naparena.envs.policy import spiel_bot

SIMULATIONS = 100

IsmctsBot = spiel_bot(
    "ismcts", lambda game, seed: spiel.ismcts_bot(game, seed, simulations=SIMULATIONS),
    f"OpenSpiel's ISMCTS, {SIMULATIONS} simulations a decision, random rollouts")


@hookimpl
def register_bots(register):
    register(IsmctsBot)
