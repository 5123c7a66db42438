"""The tournament the misbehaviour tests play, shared by the inline bots' tests
(`test_misbehaviour`), the seat processes' (`test_seats`) and the dead seats'
(`test_dead_seats`); data and checks, no tests.

How "no other match changes" is checked: every tournament here has the same five seats
— p1, p2, p3, bad, p4 at tables of four — and is compared with one control run in which
`bad` is the same `misbehave` bot with mode "none". Deal seeds hang off (master seed,
variant, stream, table number) and bot seeds off (master seed, match index, seat), never
off bot names, and the table numbers come from the seats' positions in the list, which
both runs share. So a match without `bad` (table 1: p1 p2 p3 p4) must give the very same
bytes, and in a match with `bad` every hand before its first fault must be the same too,
because until it misbehaves it draws the same random answers as the control.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from naparena.arena.executors.pool import ForkPool
from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from naparena.arena.setup.reader import parse_tournament
from naparena.arena.setup.settings import Timing

BOTS_DIR = Path(__file__).resolve().parent / "bots_misbehaving"
ROGUE = Path(__file__).resolve().parent / "seat_programs" / "rogue.py"  # `bad` as a seat process
TIMEOUT = 0.2
HARD = Timing(TIMEOUT).hard  # when the pool gives up on a decision and kills its worker
VARIANTS = ("classic", "floater")  # floater: antes and failed bids move chips through the kitty
SEATS = (("p1", "random", {}), ("p2", "heuristic", {}), ("p3", "cautious", {}),
         ("bad", "misbehave", None), ("p4", "bold", {}))
WELL_BEHAVED = {"mode": "none"}


def config(bad_params: dict, *, bad_name: str = "misbehave", hands: int = 20,
           timeout: float = TIMEOUT, share: float = 1.0, workers: int = 2,
           seats=SEATS, variants=VARIANTS) -> dict:
    """A tournament as the parsed TOML mapping; `max_fault_share = 1.0` never disqualifies."""
    bots = []
    for alias, name, params in seats:
        bot = (bad_name, bad_params) if params is None else (name, params)
        bots.append({"name": bot[0], "alias": alias, "params": bot[1]})
    return {"tournament": {"name": "misbehaviour", "seed": 11, "hands": hands, "table": 4,
                           "workers": workers, "timeout": timeout, "max_fault_share": share,
                           # plain: "auto" would adjust random beside `bad`, and its rollouts
                           # cost ten times the hands' own play (test_luck tests the estimator)
                           "estimator": "plain", "bots_dir": str(BOTS_DIR)},
            "bots": bots, "variants": [{"name": v} for v in variants]}


def worker_cpu_seconds(pid: int) -> float:
    """A process's CPU time (user + system) from /proc: the watchdog's clock in these tests."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return 0.0  # gone (and reaped): no time passes; the pool sees the death by its sentinel
    fields = stat[stat.rfind(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def play(config_: dict, run_dir: Path, workers: int | None = None) -> dict:
    """Run the tournament into `run_dir` through the runner and a fork pool.

    The watchdog times each bot by its worker's CPU time, not the wall clock: a worker
    waiting for a core on a loaded machine then never times out a quick decision, so no
    result here depends on the machine's speed. The misbehaving bot overruns by using
    the processor. With one worker (in-process) the timeout must be generous instead.
    """
    t = parse_tournament(config_, run_dir.parent / "tournament.toml")
    run = Session.open(t, run_dir, workers=workers)
    assert run.workers == (workers or t.workers)
    if run.workers == 1:
        assert t.timeout >= 30, "in-process the wall clock times bots: give them a generous limit"
        result = run.play()
    else:
        pool = ForkPool(run.workers, clock=worker_cpu_seconds)  # each job brings the file's timing
        try:
            result = run.play(executor=pool)
        finally:
            pool.shutdown()
    assert json.loads((run_dir / STANDINGS).read_text()) == result
    return result


def match_files(run_dir: Path) -> dict[int, bytes]:
    return {int(f.stem): f.read_bytes() for f in sorted((run_dir / MATCHES).glob("*.json"))}


def logs(run_dir: Path) -> dict[int, dict]:
    return {i: json.loads(data) for i, data in match_files(run_dir).items()}


def kind_of(reason: str) -> str:
    """The fault kind the report files a reason under: 'exception: …' → 'exception'."""
    return "illegal" if reason.startswith("illegal answer") else reason.split(":", 1)[0]


def row(result: dict, variant: str, alias: str) -> dict:
    rows = [r for r in result["variants"][variant]["bots"] if r["bot"] == alias]
    assert len(rows) == 1, f"{alias} has no row in {variant}"
    return rows[0]


def bad_seat(log: dict) -> int | None:
    aliases = [b["alias"] for b in log["bots"]]
    return aliases.index("bad") if "bad" in aliases else None


def bad_faults(log: dict) -> list[tuple[int, list]]:
    """(hand number, fault) for every fault of the `bad` seat in a match log."""
    seat = bad_seat(log)
    return [(hand["n"], f) for hand in log["hands"] for f in hand.get("faults", ()) if f[1] == seat]

def control_run(run_dir: Path, **settings) -> tuple[dict, dict[int, bytes]]:
    """The tournament with `bad` well-behaved, played into `run_dir`: what every other run
    is compared with. `settings` go to `config`."""
    result = play(config(WELL_BEHAVED, **settings), run_dir)
    files = match_files(run_dir)
    for log in map(json.loads, files.values()):
        assert not any("faults" in hand for hand in log["hands"])
    return result, files


def check_run(result: dict, run_dir: Path, control) -> dict[int, dict]:
    """What must hold whatever `bad` did: the tournament completed, chips are conserved,
    the standings count exactly the faults, revokes and crashes the logs hold, the other
    bots never faulted, and nothing changed outside `bad`'s misbehaviour."""
    control_result, control_files = control
    files = match_files(run_dir)
    assert sorted(files) == sorted(control_files), "every scheduled match has a log"
    assert result["skipped"] == [] and result["disqualified"] == {}
    assert result["matches"] == len(files)
    parsed = {i: json.loads(data) for i, data in files.items()}

    counted = {v: {a: {"faults": Counter(), "revokes": 0, "crashes": 0} for a, _, _ in SEATS}
               for v in result["variants"]}
    for i, log in parsed.items():
        kitty = 0
        for hand in log["hands"]:
            assert sum(hand["chips"]) + hand["kitty"] - kitty == 0, f"match {i} hand {hand['n']}"
            kitty = hand["kitty"]
        summary = log["summary"]
        assert sum(s["chips"] for s in summary["seats"]) + kitty == 0, f"match {i}"
        assert sum(summary["final"]) + summary["kitty"] == log["stack"] * len(summary["final"])
        for seat, s in enumerate(summary["seats"]):
            assert s["chips"] == sum(hand["chips"][seat] for hand in log["hands"])
        aliases = [b["alias"] for b in log["bots"]]
        books = counted[log["variant"]]
        for hand in log["hands"]:
            for _, seat, _, reason in hand.get("faults", ()):
                books[aliases[seat]]["faults"][kind_of(reason)] += 1
            if "revoke" in hand:
                books[aliases[hand["revoke"]]]["revokes"] += 1
        for seat, s in enumerate(summary["seats"]):
            books[aliases[seat]]["crashes"] += "crashed_at" in s
        assert {c[1] for c in log["crashes"]} <= {bad_seat(log)}

        seat = bad_seat(log)
        if seat is None:
            assert files[i] == control_files[i], f"match {i} without bad changed"
            continue
        before = json.loads(control_files[i])
        faulted = [n for n, _ in bad_faults(log)] + [c[0] for c in log["crashes"]]
        first = min(faulted, default=len(log["hands"]))
        assert log["hands"][:first] == before["hands"][:first], f"match {i}: a hand before the fault changed"
        if first < len(log["hands"]):  # later deals may differ: some variants gather the played cards
            assert log["hands"][first]["deal"] == before["hands"][first]["deal"]
        if not faulted:
            assert log["summary"] == before["summary"]

    for v in result["variants"]:
        table = result["variants"][v]
        assert sum(r["chips"] for r in table["bots"]) + table["kitty"] == 0, f"{v}: chips not conserved"
        for alias, _, _ in SEATS:
            r, books = row(result, v, alias), counted[v][alias]
            assert r["faults"] == dict(books["faults"]), f"{v} {alias}: faults"
            assert r["revokes"] == books["revokes"], f"{v} {alias}: revokes"
            assert r["crashes"] == books["crashes"], f"{v} {alias}: crashes"
            if alias != "bad":
                assert r["faults"] == {} and r["crashes"] == 0
                assert r["revokes"] == row(control_result, v, alias)["revokes"] == 0
    return parsed


def matches_with_bad(logs_: dict[int, dict], variant: str) -> list[int]:
    return [i for i, log in logs_.items() if log["variant"] == variant and bad_seat(log) is not None]
