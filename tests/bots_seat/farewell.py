"""A drop-in bot that says goodbye from an atexit hook when its process ends: a served
seat ends without the interpreter's teardown, but its atexit hooks still run."""

import atexit
import sys

import naparena
from naparena import Bot


class Farewell(Bot):
    name = "farewell"
    description = "Plays a seeded random legal answer; says goodbye on stderr at its process's exit."

    def start_match(self, info):
        self.hands = 0
        atexit.register(lambda: print(f"farewell after {self.hands} hands", file=sys.stderr))

    def end_hand(self, record):
        self.hands += 1

    def _any(self, view):
        return self.rng.choice(view.legal)

    bid = play = _any


@naparena.hookimpl
def register_bots(register):
    register(Farewell)
