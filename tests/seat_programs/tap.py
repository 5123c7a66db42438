"""Runs a bot command and records every protocol line both ways, for the conformance tests.

    python tap.py RECORD -- COMMAND...

Each line of RECORD is {"to": "bot" | "match", "line": the line as text}.
"""

import json
import subprocess
import sys
import threading


def main():
    record, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    bot = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    log = open(record, "a")  # noqa: SIM115 - open while the bot lives, written from two threads
    lock = threading.Lock()

    def note(direction, line):
        with lock:
            log.write(json.dumps({"to": direction, "line": line.decode()}) + "\n")
            log.flush()

    def forward_in():
        for line in sys.stdin.buffer:
            note("bot", line)
            bot.stdin.write(line)
            bot.stdin.flush()
        bot.stdin.close()

    threading.Thread(target=forward_in, daemon=True).start()
    for line in bot.stdout:
        note("match", line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    sys.exit(bot.wait())


if __name__ == "__main__":
    main()
