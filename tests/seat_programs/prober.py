"""A hostile external bot (no naparena import): it answers every decision with the first
legal answer and, at its first decision, tries to read what its sandbox should hide, then
reports on stderr as `PROBE {json}`.

    python prober.py [@PATH ...] [--write FOLDER MB ...]

@PATH         a file (its first line) or a folder (its sorted entries) to read; a
              relative PATH is taken from this file's folder; the error if it fails
--write F MB  write MB megabytes into folder F (files of 4 MB), and report how many it could
--brief       leave out what is otherwise always reported: /proc/1/cmdline and
              /proc/self/mountinfo, whole (a view of many mounts outgrows a match's stderr)
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def send(data):
    sys.stdout.write(json.dumps(data, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def read(path):
    path = os.path.join(HERE, path)
    try:
        if os.path.isdir(path):
            return sorted(os.listdir(path))
        with open(path, errors="replace") as f:
            return f.readline().strip()
    except OSError as e:
        return f"OSError: {e.strerror}"


def write(folder, mb):
    """In files of 4 MB: no one file's limit (RLIMIT_FSIZE) stops it, only the folder's."""
    done = 0
    try:
        while done < mb:
            with open(os.path.join(folder, f"probe-{os.getpid()}-{done // 4}"), "ab") as f:
                f.write(b"x" * (1 << 20))
            done += 1
    except OSError as e:
        return {"mb": done, "error": e.strerror}
    return {"mb": done}


def probe(args):
    facts = {}
    for arg in args:
        if arg.startswith("@"):
            facts[arg] = read(arg[1:])
    if "--write" in args:
        at = args.index("--write") + 1
        while at + 1 < len(args) and not args[at].startswith(("@", "--")):
            facts["write " + args[at]] = write(args[at], int(args[at + 1]))
            at += 2
    for name in () if "--brief" in args else ("/proc/1/cmdline", "/proc/self/mountinfo"):
        try:
            with open(name, "rb") as f:
                facts[name] = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError as e:
            facts[name] = f"OSError: {e.strerror}"
    sys.stderr.write("PROBE " + json.dumps(facts, sort_keys=True) + "\n")
    sys.stderr.flush()


def main():
    decisions = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            send({"type": "hello", "protocol": 1, "name": "prober", "params": {}})
        elif msg["type"] == "decide":
            decisions += 1
            if decisions == 1:
                probe(sys.argv[1:])
            send({"type": "answer", "answer": msg["view"]["legal"][0]})
        elif msg["type"] == "shutdown":
            return


if __name__ == "__main__":
    main()
