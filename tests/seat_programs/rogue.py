"""An external bot (no naparena import) that plays like the `steady` drop-in bot and, on
cue, misbehaves in one of the ways a seat process can: the misbehaviour tests run it.

`steady` answers bid and play with `random.Random(seed).choice(legal)` and every other
decision with the `Bot` defaults; this program does the same from the protocol's JSON,
so until it misbehaves its seat plays exactly what a `steady` seat would.

Params (in the handshake): mode, every (the every-th bid or play of a match fires),
times (0 = no limit), sleep, match (only in this match index; -1 = every match).
"""

import ctypes
import json
import os
import random
import resource
import signal
import sys
import threading
import time

PARAMS = {"mode": "none", "every": 3, "times": 1, "sleep": 0.5, "match": -1}
out = sys.stdout.buffer
ANSWERED = threading.Event()


def send(data: dict) -> None:
    out.write(json.dumps(data, separators=(",", ":")).encode() + b"\n")
    out.flush()


def low(card):
    return (card % 13, card)


def default(view):
    """The answers of naparena's `Bot` defaults, which `steady` keeps for these kinds."""
    kind, legal, hand = view["kind"], view["legal"], view["hand"]
    if kind in ("peep", "floater_peep", "garnet"):
        return False
    if kind == "exchange":
        return []
    if kind == "garnet_discard":
        return sorted(sorted(hand, key=low)[:5])
    if kind == "peep_exchange":
        return None
    if kind == "floater_discard":
        return min(legal, key=low)
    if kind == "trumps":
        held = [c // 13 for c in hand]
        return max(legal, key=lambda s: (held.count(s), s))
    raise AssertionError(kind)


def misbehave(mode, view, p):
    """Returns the answer to send (None: answer normally), or never returns."""
    if mode == "slow":
        time.sleep(p["sleep"])
        return None
    if mode == "hang":  # deaf to every catchable signal, asleep in C
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGALRM):
            signal.signal(sig, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP})
        while True:
            time.sleep(3600)
    if mode == "fork":  # a child keeps the pipes open after its parent exits
        if os.fork() == 0:
            time.sleep(3600)
        os._exit(0)
    if mode == "exit":
        os._exit(3)
    if mode == "segv":
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        ctypes.string_at(0)
    if mode == "timer":  # SIGALRM's default action ends the process
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        time.sleep(p["sleep"])
        return None
    if mode == "thread":  # a thread ends the process once this answer is out (see main)
        threading.Thread(target=lambda: (ANSWERED.wait(), os._exit(5)), daemon=True).start()
        return None
    if mode == "stdout":
        out.write(b"thinking about " + json.dumps(view["legal"]).encode() + b"\n")
        out.flush()
        return None
    if mode == "huge":
        out.write(b'{"type":"answer","answer":"' + b"x" * (1 << 21) + b'"}\n')
        out.flush()
        return None
    if mode == "malformed":
        out.write(b'{"type":"answer","answer":\n')
        out.flush()
        time.sleep(p["sleep"])
        return None
    if mode == "wrong":
        send({"type": "hello", "protocol": 1, "name": "again"})
        time.sleep(p["sleep"])
        return None
    if mode == "illegal":
        return {"type": "answer", "answer": "junk"}
    if mode == "error":
        return {"type": "answer", "error": "ValueError: deliberate failure"}
    if mode == "flood":  # a megabyte of stderr, then a good answer: must not block anyone
        sys.stderr.write("noise " * (1 << 17) + "\n")
        sys.stderr.flush()
        return None
    raise AssertionError(mode)


def main():
    p = dict(PARAMS)
    rng, calls, fired, armed = None, 0, 0, False
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            p.update(msg["params"])
            send({"type": "hello", "protocol": 1, "name": "rogue", "version": "1",
                  "params": PARAMS, "events": False, "hand_start": False})
        elif kind == "match":
            rng, calls, fired = random.Random(int(msg["seed_text"])), 0, 0  # the whole seed, as steady inline
            armed = p["match"] in (-1, msg["match"])
            if p["mode"] == "probe":
                limits = {name: resource.getrlimit(getattr(resource, name))[0]
                          for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_CORE")}
                print(json.dumps({"cwd": os.getcwd(), "files": os.listdir("."), "env": sorted(os.environ),
                                  "limits": limits}), file=sys.stderr, flush=True)
        elif kind == "decide":
            view = msg["view"]
            if view["kind"] not in ("bid", "play"):
                send({"type": "answer", "answer": default(view)})
                continue
            calls += 1
            reply = None
            due = calls % p["every"] == 0 and (not p["times"] or fired < p["times"])
            if armed and p["mode"] not in ("none", "probe") and due:
                fired += 1
                reply = misbehave(p["mode"], view, p)
            send(reply or {"type": "answer", "answer": rng.choice(view["legal"])})
            if p["mode"] == "thread" and fired and not ANSWERED.is_set():
                ANSWERED.set()
                time.sleep(3600)  # the main thread waits; the other thread ends the process
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
