"""The human seat: a seat program that speaks the seat protocol on stdin/stdout and hands
every message to the table of the `naparena play` process it runs under, where a person
answers each decision.

The match starts it like any external bot (`docs/PROTOCOL.md`), so nothing in the engine
or the runner knows a person sits here. It answers the handshake itself, then relays:
every line from the match goes to the table, and each `decide` waits for the table's
answer line. Its stdin and stdout belong to the protocol; the person's terminal or
browser belongs to the table.

The table is found by the process tree, not by an address on the command line: the
command, and so the run's manifest, stays the same for every run. The table listens on
the Linux abstract socket `TABLE_PREFIX + pid` of the `naparena play` process, and the
seat tries each of its ancestors in turn (match worker, then the play process).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import BinaryIO

import orjson

from naparena.bots.protocol import MAX_LINE, bot_hello, refusal

NAME = "human"
TABLE_PREFIX = "\0naparena-table-"
NO_TABLE = "no table to sit at: a human seat plays only under `naparena play`"


def table_address(pid: int) -> str:
    return f"{TABLE_PREFIX}{pid}"


def _parent_of(pid: int) -> int:
    """The parent of `pid` from /proc (0 when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return 0
    # The command name may hold spaces and brackets: the fields after its last ')' are fixed.
    return int(stat.rsplit(b")", 1)[1].split()[1])


def find_table(depth: int = 6) -> socket.socket | None:
    """A connection to the nearest ancestor's table, or None."""
    pid = os.getppid()
    for _ in range(depth):
        if pid <= 1:
            return None
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(table_address(pid))
            return conn
        except OSError:
            conn.close()
        pid = _parent_of(pid)
    return None


def relay(stdin: BinaryIO, out_fd: int, conn: socket.socket) -> int:
    """Pass every message to the table; answer each decide with the table's line."""
    table = conn.makefile("rb")
    while line := stdin.readline(MAX_LINE):
        conn.sendall(line)
        kind = orjson.loads(line).get("type") if line.startswith(b"{") else None
        if kind == "decide":
            answer = table.readline(MAX_LINE)
            if not answer:  # the person closed the table: the match faults this seat
                return 1
            _write_all(out_fd, answer)
        elif kind == "shutdown":
            return 0
    return 0


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def main() -> int:
    out_fd = os.dup(1)
    os.dup2(2, 1)  # a stray print must never reach the protocol
    stdin = sys.stdin.buffer
    try:
        first = orjson.loads(stdin.readline(MAX_LINE))
    except orjson.JSONDecodeError:
        first = None
    if not isinstance(first, dict) or first.get("type") != "hello":
        _write_all(out_fd, refusal("the first message must be hello"))
        return 2
    if first.get("params"):
        _write_all(out_fd, refusal("a human seat takes no params"))
        return 2
    conn = find_table()
    if conn is None:
        _write_all(out_fd, refusal(NO_TABLE))
        return 2
    from naparena._version import __version__
    _write_all(out_fd, bot_hello(NAME, __version__, {}, True, True))
    try:
        return relay(stdin, out_fd, conn)
    except (BrokenPipeError, ConnectionResetError):
        return 1


if __name__ == "__main__":
    sys.exit(main())
