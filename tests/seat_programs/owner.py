"""An external bot as authors write them (no naparena import): it answers every decision
with the first legal answer and, at its first decision, does one thing a real bot does
and reports on stderr as `OWNER {json}`.

    python owner.py [--report [FILE ...]] [--children N MB] [--fill FOLDER FILES]
                    [--widen] [--close-stdout]

--report FILE...  its interpreter (executable, prefix), the version of the `napfact`
                  package if it can import it, and the first line of each FILE (relative
                  to its own folder), or the error reading it
--children N MB   start N children that each hold MB megabytes, and wait for them
--fill FOLDER N   write N files of 1 MB into FOLDER (`home` is its working directory)
--widen           widen its CPU affinity to every core, and report what it got
--close-stdout    close its stdout and sleep
"""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def send(data):
    sys.stdout.write(json.dumps(data, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def report(facts):
    sys.stderr.write("OWNER " + json.dumps(facts, sort_keys=True) + "\n")
    sys.stderr.flush()


def first_decision(args):
    if "--report" in args:
        facts = {"executable": sys.executable, "prefix": sys.prefix, "base_prefix": sys.base_prefix}
        try:
            import napfact
            facts["napfact"] = napfact.VERSION
        except ImportError as e:
            facts["napfact"] = f"ImportError: {e}"
        for name in args[args.index("--report") + 1:]:
            if name.startswith("--"):
                break
            try:  # "@name": a name the tournament file's folder does not resolve
                with open(os.path.join(HERE, name.removeprefix("@"))) as f:
                    facts[name] = f.readline().strip()
            except OSError as e:
                facts[name] = f"OSError: {e.strerror}"
        report(facts)
    if "--children" in args:
        n, mb = int(args[args.index("--children") + 1]), int(args[args.index("--children") + 2])
        hold = f"import sys, time; b = b'x' * ({mb} << 20); print('held', flush=True); time.sleep(60)"
        children = [subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE) for _ in range(n)]
        report({"children": [c.stdout.readline().decode().strip() for c in children]})
    if "--fill" in args:
        folder, files = args[args.index("--fill") + 1], int(args[args.index("--fill") + 2])
        folder = os.getcwd() if folder == "home" else folder
        for i in range(files):
            with open(os.path.join(folder, f"fill-{os.getpid()}-{i}"), "wb") as f:
                f.write(b"x" * (1 << 20))
        report({"filled": files})
    if "--widen" in args:
        wanted = set(range(os.cpu_count() or 1))
        try:
            os.sched_setaffinity(0, wanted)
        except OSError as e:
            report({"widen": f"OSError: {e.strerror}"})
        report({"cores": len(os.sched_getaffinity(0)), "of": len(wanted)})
    if "--close-stdout" in args:
        os.close(1)
        time.sleep(60)


def main():
    args = sys.argv[1:]
    decisions = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            send({"type": "hello", "protocol": 1, "name": "owner", "params": {}})
        elif msg["type"] == "decide":
            decisions += 1
            if decisions == 1:
                first_decision(args)
            send({"type": "answer", "answer": msg["view"]["legal"][0]})
        elif msg["type"] == "shutdown":
            return


if __name__ == "__main__":
    main()
