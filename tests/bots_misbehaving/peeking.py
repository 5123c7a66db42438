"""A drop-in bot that tries to learn the other hands from what it is given.

At each decision it walks everything reachable from its view (items, attributes,
properties), and every other decision also what `gc.get_referrers` finds pointing at
those objects, walked the same way. It appends what it found to a file in `out`
(one file per process, as fork workers share no memory): every collection of card ints
and every engine object it reached. The test compares that with the match logs.

Stack frames are not followed: a Python bot in the same process can always reach its
caller's locals through `sys._getframe`; the view is the boundary under test.
"""

import gc
import json
import os
import types

import naparena
from naparena import Bot

_ATOMS = (int, float, complex, str, bytes, bool, type(None))
# Code, classes and modules lead to the whole program, not to this hand's state.
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, types.FrameType, types.CodeType, types.GeneratorType)
_LIMIT = 20000  # objects per walk: plenty for a hand's state, bounded for a runaway walk


def _children(obj):
    if isinstance(obj, (tuple, list, set, frozenset)):
        return list(obj)
    if isinstance(obj, dict):
        return list(obj.keys()) + list(obj.values())
    out = []
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        out += state.values()
    for name in dir(obj):  # slots and properties as well as plain attributes
        if name.startswith("__"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:
            continue
        if not callable(value):
            out.append(value)
    return out


def _walk(roots, skip_ids, depth=None):
    """Objects reachable from `roots` (within `depth` steps, if given): returns
    (objects, card collections, engine types)."""
    reached, cards, engine = [], set(), set()
    seen = set(skip_ids)
    stack = [(root, 0) for root in roots]
    while stack and len(reached) < _LIMIT:
        obj, steps = stack.pop()
        if isinstance(obj, (*_ATOMS, *_OPAQUE)) or id(obj) in seen:
            continue
        if isinstance(obj, dict) and "__builtins__" in obj:
            continue  # a module's globals: the program, not the hand
        seen.add(id(obj))
        reached.append(obj)  # also keeps it alive, so its id is not reused during the walk
        if type(obj).__module__ == "naparena.game.engine":
            engine.add(type(obj).__name__)
        children = _children(obj)
        if isinstance(obj, (tuple, list, set, frozenset)):
            ints = {x for x in children if type(x) is int}
            if len(ints) >= 2 and all(0 <= x < 52 for x in ints):
                cards.add(tuple(sorted(ints)))
        if depth is None or steps < depth:
            stack.extend((child, steps + 1) for child in children)
    return reached, cards, engine


class Peeking(Bot):
    name = "peeking"
    description = "Searches everything its view leads to for the other seats' cards."
    params = {"out": "", "referrers_every": 2}

    def start_match(self, info):
        self.match_index = info["match"]
        self.calls = 0

    def _probe(self, view):
        self.calls += 1
        reached, cards, engine = _walk([view], ())
        record = {"match": self.match_index, "hand": view.hand_no, "seat": view.seat,
                  "kind": view.kind,
                  "played": sorted([c for _, plays, _ in view.tricks for _, c in plays]
                                   + [c for _, c in view.trick]),
                  "view": sorted(cards), "view_engine": sorted(engine)}
        if self.calls % self.referrers_every == 1:
            # Empty tuples and the like are shared by half the program: no clue there.
            found = [r for r in gc.get_referrers(*[o for o in reached if _children(o)])
                     if not isinstance(r, types.FrameType)]
            # The walk's own lists point at everything it reached: leave them out.
            own = {id(reached), id(found)}
            # Three steps reach from a referrer (say the engine's hand) through its
            # attributes to the cards in them; further leads away into the program.
            _, rcards, rengine = _walk([r for r in found if id(r) not in own], own, depth=3)
            record.update(referrers=sorted(rcards), referrers_engine=sorted(rengine))
        with open(os.path.join(self.out, f"{os.getpid()}.jsonl"), "a") as f:
            f.write(json.dumps(record) + "\n")

    def _answer(self, view):
        self._probe(view)
        return self.rng.choice(view.legal)

    bid = play = peep = floater_peep = exchange = garnet = garnet_discard = _answer
    peep_exchange = floater_discard = trumps = _answer


@naparena.hookimpl
def register_bots(register):
    register(Peeking)
