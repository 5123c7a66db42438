"""A drop-in bot that wants every lifecycle message (events, hand starts), so the protocol
tests see each kind of message; it plays a seeded random legal answer."""

import naparena
from naparena import Bot


class Listener(Bot):
    name = "listener"
    description = "Random legal answers; listens to every event and hand start."

    def start_match(self, info):
        self.events = 0

    def start_hand(self, view):
        assert view.kind is None and view.legal == ()

    def observe(self, event):
        self.events += 1

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
