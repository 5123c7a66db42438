"""A long match's checkpoint: the hands logged so far and the state to go on from, so a
match interrupted part-way resumes where it stopped and ends in the same bytes.

Two files per unfinished match in the run's `checkpoints/` folder: `NNNNNN.hands`, the
hands' JSON appended as they are played (so a checkpoint costs what was played since the
last one, not the whole match again), and `NNNNNN.json`, written atomically after each
append, saying how many of those bytes belong to the checkpoint and what the engine, the
bots' random sources and the summary were at that hand. A checkpoint of another job (other
bots, stand-ins, seed) is ignored. The match's log replaces both when it is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from naparena.arena.records import jsontext
from naparena.arena.records.logs import write_atomic

#: Seconds between checkpoints of a match (default 10): a shorter match never writes one.
EVERY_ENV = "NAPARENA_CHECKPOINT_SECONDS"
DEFAULT_EVERY = 10.0


def every() -> float:
    """The interval, from the environment (tests shorten it); a bad value is the default."""
    try:
        return max(0.0, float(os.environ.get(EVERY_ENV, DEFAULT_EVERY)))
    except ValueError:
        return DEFAULT_EVERY


def hands_path(state_path: str | Path) -> Path:
    return Path(state_path).with_suffix(".hands")


def discard(state_path: str | Path) -> None:
    """Delete a match's checkpoint, if any (its log is written, or it belongs to another job)."""
    for p in (Path(state_path), hands_path(state_path)):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def saved_hands(state_path: str | Path) -> int:
    """How many hands a checkpoint holds (0 if none or unreadable): for messages only."""
    try:
        return int(json.loads(Path(state_path).read_bytes())["hand"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def saved_hand(state_path: str | Path, n: int) -> dict[str, Any] | None:  # Any: a hand record's JSON
    """Hand `n`'s record if the checkpoint holds it, else None. Only bytes the written state
    vouches for are read: the match may be appending the next hand meanwhile."""
    try:
        size = json.loads(Path(state_path).read_bytes())["body_bytes"]
        with open(hands_path(state_path), "rb") as f:
            body = f.read(size)
        records = json.loads(b"[" + body[:-1] + b"]") if len(body) == size else []
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return next((r for r in records if isinstance(r, dict) and r.get("n") == n), None)


class Checkpoint:
    """The checkpoint of one job's match: load it once at the start, then save it now and then."""

    def __init__(self, state_path: str | Path, fingerprint: str):
        self.state_path, self.fingerprint = Path(state_path), fingerprint
        self.hands_path = hands_path(state_path)
        self.written = 0  # bytes of hands already in the .hands file

    def load(self) -> tuple[dict[str, Any], bytearray] | None:  # Any: the match's JSON state
        """The saved state and hands, or None (and any stale files gone) to start afresh."""
        try:
            state = json.loads(self.state_path.read_bytes())
            size = state["body_bytes"]
            with open(self.hands_path, "r+b") as f:
                body = bytearray(f.read(size))
                f.truncate(size)  # bytes appended after the last state was written
        except (OSError, ValueError, KeyError, TypeError):
            state, body, size = None, bytearray(), -1
        if state is None or state.get("fingerprint") != self.fingerprint or len(body) != size:
            discard(self.state_path)
            return None
        self.written = size
        return state, body

    def save(self, state: dict[str, Any], body: bytearray) -> None:
        """Append the hands since the last save, then write the state that covers them."""
        self.state_path.parent.mkdir(exist_ok=True)
        with open(self.hands_path, "ab" if self.written else "wb") as f:
            f.write(body[self.written:])
            f.flush()
            os.fsync(f.fileno())
        self.written = len(body)
        data = {**state, "fingerprint": self.fingerprint, "body_bytes": self.written}
        write_atomic(str(self.state_path), jsontext.dumps(data, compact=True).encode())
