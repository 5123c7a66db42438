"""Drop-in bot sources that several test modules write into a bots folder (data, no tests)."""

# `good` plays the first legal answer; `clumsy` raises on every card.
GOOD_DROP_IN = '''
import naparena
from naparena import Bot


class Good(Bot):
    name = "good"
    description = "first legal answer"

    def bid(self, view):
        return view.legal[0]

    def play(self, view):
        return view.legal[0]


class Clumsy(Bot):
    name = "clumsy"
    description = "raises on every card"

    def bid(self, view):
        return "pass"

    def play(self, view):
        raise RuntimeError("butterfingers")


@naparena.hookimpl
def register_bots(register):
    register(Good)
    register(Clumsy)
'''

# The runner's test bots. Each answers from its own rng, so their logs are as
# reproducible as the reference bots'.
TEST_BOTS = '''
import os
import time

import naparena
from naparena import Bot


class Slowpoke(Bot):
    name = "slowpoke"
    description = "random answers; from match 2 on, naps at the start of each match if told to"

    def start_match(self, info):
        # Sleeping changes no answer, so a slow run and a fast run write the same logs.
        if info["match"] >= 2:
            time.sleep(float(os.environ.get("SLOWPOKE_SLEEP", "0")))

    def bid(self, view):
        return self.rng.choice(view.legal)

    def play(self, view):
        return self.rng.choice(view.legal)


class Grumpy(Bot):
    name = "grumpy"
    description = "now and then an illegal bid or an exception in play"

    def bid(self, view):
        return "banana" if self.rng.random() < 0.1 else self.rng.choice(view.legal)

    def play(self, view):
        if self.rng.random() < 0.03:
            raise ValueError("grumpy today")
        return self.rng.choice(view.legal)


class Shy(Bot):
    name = "shy"
    description = "never bids"

    def bid(self, view):
        return "pass"

    def play(self, view):
        return self.rng.choice(view.legal)


class Crashy(Bot):
    name = "crashy"
    description = "kills its worker process at its first card of hand 1"

    def bid(self, view):
        return self.rng.choice(view.legal)

    def play(self, view):
        if view.hand_no == 1:
            os._exit(3)
        return self.rng.choice(view.legal)


class Broken(Bot):
    name = "broken"
    description = "bids four when it can, then raises on every card"

    def bid(self, view):
        return "four" if "four" in view.legal else "pass"

    def play(self, view):
        raise RuntimeError("no cards today")


@naparena.hookimpl
def register_bots(register):
    for cls in (Slowpoke, Grumpy, Shy, Crashy, Broken):
        register(cls)
'''
