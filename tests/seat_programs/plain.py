"""A minimal external bot (no naparena import) for the bot author's tests: it answers
every decision with the first legal answer, and each option changes one thing.

    python plain.py [--count FILE] [--no-params | --empty-params] [--silent]
                    [--die-at-start] [--die-at N] [--reverse]

--count FILE    append a line to FILE when started (to count handshakes)
--no-params     a hello without `params`; --empty-params: with `"params": {}`
--silent        never say hello (a bot whose output sits in a buffer)
--die-at-start  write a stack trace to stderr and exit 1 before the hello
--die-at N      write to stderr and exit 1 at the N-th decision of a match
--reverse       answer an exchange or a discard with its cards in reverse order
--cores         at each match's first decision, write the cores it may run on to stderr
                (and those of a child it started at the hello, which the match never saw)
"""

import json
import os
import subprocess
import sys


def send(data):
    sys.stdout.write(json.dumps(data, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    args = sys.argv[1:]
    if "--count" in args:
        with open(args[args.index("--count") + 1], "a") as f:
            f.write("started\n")
    if "--die-at-start" in args:
        sys.stderr.write("Traceback (most recent call last):\nSyntaxError: deliberate, at start\n")
        sys.exit(1)
    die_at = int(args[args.index("--die-at") + 1]) if "--die-at" in args else 0
    decisions = 0
    child = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            if "--silent" in args:
                continue
            hello = {"type": "hello", "protocol": 1, "name": "plain", "params": {"style": "first"}}
            if "--no-params" in args:
                del hello["params"]
            elif "--empty-params" in args:
                hello["params"] = {}
            if "--cores" in args:
                child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
            send(hello)
        elif kind == "match":
            decisions = 0
        elif kind == "decide":
            decisions += 1
            if decisions == 1 and child is not None:
                own, its = sorted(os.sched_getaffinity(0)), sorted(os.sched_getaffinity(child.pid))
                sys.stderr.write(f"cores {own} child {its}\n")
                sys.stderr.flush()
            if decisions == die_at:
                sys.stderr.write(f"about to fail at decision {decisions}\nValueError: deliberate\n")
                sys.stderr.flush()
                sys.exit(1)
            answer = msg["view"]["legal"][0]
            if "--reverse" in args and msg["view"]["kind"] in ("exchange", "garnet_discard"):
                answer = msg["view"]["legal"][-1][::-1]
            send({"type": "answer", "answer": answer})
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
