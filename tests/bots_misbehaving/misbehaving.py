"""Drop-in bots for the misbehaviour tests: `steady` behaves; `misbehave` can misbehave
in a decision in every way the supervisor must survive, chosen by its parameters;
`fragile` kills its process in a lifecycle hook instead.

All answer with a seeded random legal answer, drawn the same way, so until the first
misbehaviour a `misbehave` seat plays exactly what a `steady` seat (or a `misbehave`
seat with mode "none") plays in its place.
"""

import ctypes
import faulthandler
import os
import resource
import signal
import sys
import time

import naparena
from naparena import Bot


class Steady(Bot):
    name = "steady"
    description = "Well-behaved: a seeded random legal answer at every decision."

    def _answer(self, view):
        return self.rng.choice(view.legal)

    def bid(self, view):
        return self._answer(view)

    def play(self, view):
        return self._answer(view)


class Misbehaving(Steady):
    """Misbehaves in `bid` and `play` when its trigger fires.

    Trigger: the bot's `every`-th decision of a match (counted over bid and play),
    only in hand `hand` and match `match` when those are 0 or more, at most `times`
    times a match when that is more than 0.
    """

    name = "misbehave"
    description = "Raises, answers illegally, overruns, hangs or kills its process on cue."
    params = {"mode": "raise", "every": 3, "hand": -1, "match": -1, "times": 0, "sleep": 0.5}

    def start_match(self, info):
        self.match_index = info["match"]
        self.calls = 0
        self.fired = 0

    def _fires(self, view) -> bool:
        self.calls += 1
        if self.mode == "none" or self.calls % self.every:
            return False
        if self.hand >= 0 and view.hand_no != self.hand:
            return False
        if self.match >= 0 and self.match_index != self.match:
            return False
        if self.times and self.fired >= self.times:
            return False
        self.fired += 1
        return True

    def bid(self, view):
        if self._fires(view):
            return self._misbehave(view, "junk-bid")
        return self._answer(view)

    def play(self, view):
        if self._fires(view):
            # The lowest card it does not hold: never legal.
            return self._misbehave(view, next(c for c in range(52) if c not in view.hand))
        return self._answer(view)

    def _misbehave(self, view, illegal):
        mode = self.mode
        if mode == "raise":
            raise ValueError(f"deliberate failure at decision {self.calls}")
        if mode == "illegal":
            return illegal
        if mode == "slow":
            _busy(self.sleep)
            return self._answer(view)
        if mode == "spin":
            while True:
                pass
        if mode == "swallow":
            try:
                _busy(self.sleep)
            except BaseException:  # the bare-except habit: swallows the watchdog's interrupt too
                pass
            return self._answer(view)
        if mode == "sysexit":
            sys.exit(1)
        if mode == "interrupt":  # in a worker, a KeyboardInterrupt can only be the bot's own
            raise KeyboardInterrupt
        if mode == "base":
            raise Unusual("a BaseException that is not an Exception")
        if mode == "block":
            # The watchdog's interrupt signal stays pending: only the hard limit ends this.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
            _busy(self.sleep)
            return self._answer(view)
        if mode == "exit":
            os._exit(3)
        if mode == "exit0":
            os._exit(0)
        if mode in ANSWERS:  # an answer whose judging would run the bot's own code
            return ANSWERS[mode]()
        if mode == "raise-bad-str":
            raise UnprintableError
        if mode == "raise-hanging-str":
            raise EndlessError
        if mode == "timer":  # a timer left armed: its signal arrives between later calls
            signal.setitimer(signal.ITIMER_REAL, 0.001)
            return self._answer(view)
        if mode == "slot":  # the watchdog's slot is in reach of an inline bot: say no call is under way
            from naparena.arena.match import play
            play._slot[play.SEAT] = -1
            _busy(self.sleep)
            return self._answer(view)
        if mode == "chdir":
            os.chdir("/")
            return self._answer(view)
        if mode == "print":
            print("the bot thinks out loud", flush=True)
            os.write(1, b"and writes to fd 1 too\n")
            return self._answer(view)
        if mode == "segv":
            # Keep the crash quiet and cheap: no traceback dump, no core file.
            faulthandler.disable()
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            ctypes.string_at(0)
        raise AssertionError(f"unknown mode {mode!r}")


def _busy(seconds: float) -> None:
    """Overrun by using the processor, not by sleeping: the tests time bots by their
    worker's CPU time, so that a loaded machine cannot time out a quick, well-behaved seat."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


class Unusual(BaseException):
    pass


class BadRepr:
    def __repr__(self):
        raise RuntimeError("no repr for you")

    def __eq__(self, other):
        raise RuntimeError("no comparing either")

    __hash__ = object.__hash__


class EndlessRepr:
    def __repr__(self):
        _busy(3600)
        return "never"


class BadIter(list):
    def __iter__(self):
        raise RuntimeError("no iterating")


class BadItem(int):
    def __lt__(self, other):
        raise RuntimeError("no ordering")

    def __eq__(self, other):
        raise RuntimeError("no comparing")

    __hash__ = int.__hash__


class SneakyStr(str):
    def __eq__(self, other):
        raise RuntimeError("no comparing")

    __hash__ = str.__hash__


ANSWERS = {
    "bad-repr": BadRepr,
    "hanging-repr": EndlessRepr,
    "bad-iter": lambda: BadIter([1, 2]),
    "bad-items": lambda: (BadItem(3), BadItem(1)),
    "bad-str-answer": lambda: SneakyStr("pass"),
    "huge": lambda: list(range(1_000_000)),
    "huge-int": lambda: 10 ** 5000,
}


class UnprintableError(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")


class EndlessError(Exception):
    def __str__(self):
        _busy(3600)
        return "never"


class Meddler(Steady):
    """Tries to change the record it is shown at the end of every hand, and notes, in a
    file, any time-out interrupt reaching its slow (but each well in time) `observe`."""

    name = "meddler"
    description = "Adds chips to its own row of every hand record; observes slowly."
    params = {"out": "", "nap": 0.0}

    def observe(self, event):
        try:
            time.sleep(self.nap)
        except BaseException as e:  # noted, not raised: the test reads the note
            with open(os.path.join(self.out, f"{os.getpid()}.txt"), "a") as f:
                f.write(f"{type(e).__name__}\n")

    def end_hand(self, record):
        try:
            record["chips"][self.seat] += 100
        except TypeError:
            pass  # a tuple: the record cannot be changed
        record["chips"] = [100] * len(record["chips"])


class Fragile(Misbehaving):
    """Kills its own process in a lifecycle hook (`hook`), not in a decision."""

    name = "fragile"
    description = "Kills its process in start_match, start_hand or end_match."
    params = {**Misbehaving.params, "mode": "none", "hook": "start_match"}

    def _dies_in(self, hook, hand_no=None):
        if hook == self.hook and self.match in (-1, self.match_index) and self.hand in (-1, hand_no):
            os._exit(3)

    def start_match(self, info):
        super().start_match(info)
        self._dies_in("start_match")

    def start_hand(self, view):
        self._dies_in("start_hand", view.hand_no)

    def end_match(self):
        self._dies_in("end_match")


@naparena.hookimpl
def register_bots(register):
    register(Steady)
    register(Misbehaving)
    register(Fragile)
    register(Meddler)
