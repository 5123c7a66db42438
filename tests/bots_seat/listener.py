"""A drop-in bot that wants every lifecycle message (events, hand starts and ends), so the
protocol tests see each kind of message; it plays a seeded random legal answer."""

import naparena
from naparena import Bot


class Listener(Bot):
    name = "listener"
    description = "Random legal answers; listens to every event, hand start and hand end."

    def start_match(self, info):
        self.events = 0

    def start_hand(self, view):
        assert view.kind is None and view.legal == ()

    def observe(self, event):
        self.events += 1

    def end_hand(self, record):
        assert record["chips"], "a hand's record holds its chips"

    def bid(self, view):
        return self.rng.choice(view.legal)

    def play(self, view):
        return self.rng.choice(view.legal)

    def exchange(self, view):
        return self.rng.choice(view.legal)

    def garnet(self, view):
        return self.rng.choice(view.legal)

    def peep(self, view):
        return self.rng.choice(view.legal)


@naparena.hookimpl
def register_bots(register):
    register(Listener)
