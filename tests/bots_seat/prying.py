"""A drop-in bot that hunts for hidden information where a bot in the match's process
finds it: every object the garbage collector tracks, every frame on its stack, every
loaded module. At each decision it notes, in a file of its own under `out`, any engine
object (a `Hand` or `Match`), any frame or module of the arena (the code holding the
deal), and every collection of card ints as long as a hand; the test compares these
with the match logs. It plays a seeded random legal answer."""

import gc
import json
import os
import sys

import naparena
from naparena import Bot

_ENGINE = {"Hand", "Match"}


def _cards(obj, size):
    return (isinstance(obj, (list, tuple)) and len(obj) == size
            and all(type(c) is int and 0 <= c < 52 for c in obj))


class Prying(Bot):
    name = "prying"
    description = "Searches gc, its stack and sys.modules for the deal; plays at random."
    params = {"out": ""}

    def _search(self, view):
        size = len(view.hand)
        engine, cards = 0, set()
        for obj in gc.get_objects():
            if type(obj).__name__ in _ENGINE:
                engine += 1
            elif _cards(obj, size):
                cards.add(tuple(sorted(obj)))
            elif type(obj).__name__ in ("dict",) and any(type(v).__name__ in _ENGINE for v in obj.values()):
                engine += 1
        frames, frame = [], sys._getframe(1)
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            if module.startswith("naparena.arena") or any(type(v).__name__ in _ENGINE for v in frame.f_locals.values()):
                frames.append(module)
            for value in frame.f_locals.values():
                if _cards(value, size):
                    cards.add(tuple(sorted(value)))
            frame = frame.f_back
        modules = sorted(name for name in list(sys.modules) if name.startswith("naparena.arena"))
        holders = sorted(name for name, m in list(sys.modules.items())
                         if any(type(v).__name__ in _ENGINE for v in list(vars(m).values())))
        note = {"match": self.match, "hand": view.hand_no, "seat": self.seat, "engine": engine,
                "frames": frames, "modules": modules, "holders": holders, "cards": sorted(cards)}
        with open(os.path.join(self.out, f"{os.getpid()}.jsonl"), "a") as f:
            f.write(json.dumps(note) + "\n")

    def start_match(self, info):
        self.match = info["match"]

    def bid(self, view):
        self._search(view)
        return self.rng.choice(view.legal)

    def play(self, view):
        self._search(view)
        return self.rng.choice(view.legal)


@naparena.hookimpl
def register_bots(register):
    register(Prying)
