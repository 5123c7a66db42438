"""A drop-in bot that prints to stdout and writes to file descriptor 1 at every decision:
harmless inline, and harmless isolated too, where `naparena serve` keeps the protocol on
a descriptor of its own and sends the bot's stdout to stderr (and so to run.log)."""

import os

import naparena
from naparena import Bot


class Chatty(Bot):
    name = "chatty"
    description = "Talks on stdout; plays a seeded random legal answer."

    def _say(self, view):
        print(f"chatty thinks about {view.kind}")
        os.write(1, b"chatty writes to fd 1\n")
        return self.rng.choice(view.legal)

    bid = play = _say


@naparena.hookimpl
def register_bots(register):
    register(Chatty)
