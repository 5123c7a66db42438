"""An external bot (no naparena import) that plays as plain.py does, first legal answer,
and floods its stderr one way, all of it written before its first answer:

    python noisy.py STYLE      STYLE: quiet | threads | bursts | huge-line | no-newline

threads     four threads write numbered lines at once, 128 KiB each
bursts      every decision, 96 KiB of lines in one write
huge-line   one line of 1 MiB
no-newline  every decision, 80 KiB with no newline at all
"""

import json
import os
import sys
import threading

KIB = 1024


def send(data):
    sys.stdout.write(json.dumps(data, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def write_all(data):
    view = memoryview(data)
    while view:
        view = view[os.write(2, view):]


def thread_lines(n):
    line = f"thread {n} says: " + "x" * 40 + "\n"
    for _ in range(128 * KIB // len(line)):
        sys.stderr.write(line)
    sys.stderr.flush()


def flood(style, decision):
    if style == "threads" and decision == 1:
        threads = [threading.Thread(target=thread_lines, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    elif style == "bursts":
        write_all(b"".join(b"burst %d line %d\n" % (decision, i) for i in range(96 * KIB // 16))[:96 * KIB])
    elif style == "huge-line" and decision == 1:
        write_all(b"h" * (1024 * KIB) + b"\n")
    elif style == "no-newline":
        write_all(b"n" * (80 * KIB))


def main():
    style = sys.argv[1]
    decisions = 0
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            send({"type": "hello", "protocol": 1, "name": "noisy", "params": {}})
        elif kind == "decide":
            decisions += 1
            flood(style, decisions)
            send({"type": "answer", "answer": msg["view"]["legal"][0]})
        elif kind == "shutdown":
            return


if __name__ == "__main__":
    main()
