"""A naive fork server, a test's control: naparena's seat server with the per-seat work
taken out, so each seat is forked straight into the server's own namespaces and
folders, as a fork server that only forks would leave it. `tests/test_warm_seats.py`
shows what leaks through it; the real server's seats leak none of it."""

import sys

from naparena.bots import serve, warm


def _as_they_are(home, disk_mb, seat_ids):
    """No namespaces of its own, no fresh folders, nothing made read-only."""


def _no_first_process(status, pipes):
    status.send(b"R")  # the forked process is the seat, in the server's PID namespace


warm._private_namespaces = _as_they_are
warm._first_process = _no_first_process

if __name__ == "__main__":
    sys.exit(warm.main(serve))
