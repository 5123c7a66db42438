"""A seat's stderr is bounded as the README documents, in every sandbox mode: at most
64 KiB of it a match reaches run.log, the rest is counted and reported, and however the
bot writes it (from threads, in bursts, as one huge line, with no newline) the match's
results are the bytes of the same bot writing nothing to stderr."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import tomli_w

from naparena.arena.match import sandbox
from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session

NOISY = Path(__file__).parent / "seat_programs" / "noisy.py"
CAP = 64 * 1024  # the README's "the first 64 KiB a match"
NO_BWRAP = sandbox.unavailable()
#: Each mode as [seats] sandbox writes it; "prefix" puts `env` in front of the command.
SANDBOX: dict[str, str | list[str]] = {"off": "off", "required": "required", "prefix": ["env"]}
MODES = ["off", "prefix", pytest.param("required", marks=pytest.mark.skipif(
    NO_BWRAP is not None, reason=f"no seat sandbox here: {NO_BWRAP}"))]
STDERR = re.compile(r"^INFO (match \d+ seat \d+) \(noisy\) stderr: (.*)$")
REPORT = re.compile(r"^\((\d+) bytes in all; only the first (\d+) logged\)$")


def noisy_run(folder: Path, style: str, mode: str) -> Path:
    """A short run of the noisy bot (two seats of four) against random, in `mode`."""
    folder.mkdir(parents=True)
    config = {
        "tournament": {"name": "noisy", "seed": 3, "seeds": 1, "hands": 2, "table": 4, "workers": 1,
                       "timeout": 30.0},
        "seats": {"sandbox": SANDBOX[mode]},
        "bots": [{"name": "noisy", "command": [sys.executable, str(NOISY), style]}, {"name": "random"}],
        "variants": [{"name": "classic"}]}
    (folder / "t.toml").write_text(tomli_w.dumps(config))
    Session.open(folder / "t.toml", folder / "run", workers=1).play()
    return folder / "run"


def results(run: Path) -> dict[str, bytes]:
    files = sorted((run / MATCHES).glob("*.json")) + [run / STANDINGS]
    return {path.name: path.read_bytes() for path in files}


def logged_stderr(run: Path) -> dict[str, tuple[int, int, int]]:
    """Per seat of a match: (bytes of its stderr lines in run.log, lines, bytes it wrote
    as the report counts them; 0 when there is no report)."""
    seats: dict[str, tuple[int, int, int]] = {}
    for line in (run / "run.log").read_text().splitlines():
        found = STDERR.match(line)
        if found is None:
            continue
        size, lines, seen = seats.get(found[1], (0, 0, 0))
        report = REPORT.match(found[2])
        if report is not None:
            assert int(report[2]) == CAP
            seats[found[1]] = (size, lines, int(report[1]))
        else:
            seats[found[1]] = (size + len(found[2].encode()), lines + 1, seen)
    return seats


@pytest.fixture(scope="module")
def quiet(tmp_path_factory) -> dict[str, dict[str, bytes]]:
    """The same bot writing nothing to stderr, per mode: the results to match."""
    return {mode: results(noisy_run(tmp_path_factory.mktemp("quiet") / mode, "quiet", mode))
            for mode in SANDBOX if mode != "required" or NO_BWRAP is None}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("style", ["threads", "bursts", "huge-line", "no-newline"])
def test_a_flood_of_stderr_is_capped_counted_and_changes_no_result(tmp_path, quiet, style, mode):
    """README table, "every mode" stderr line."""
    run = noisy_run(tmp_path / style, style, mode)
    assert results(run) == quiet[mode], "draining stderr never delays or faults the match"
    seats = logged_stderr(run)
    assert len(seats) == 2 * len(list((run / MATCHES).glob("*.json"))), "both noisy seats, every match"
    for tag, (size, lines, seen) in seats.items():
        # What was kept is the first 64 KiB, newlines included: logged, less the newlines.
        assert CAP - lines <= size <= CAP, (tag, size, lines)
        assert seen > CAP, f"{tag}: the rest is counted and reported"
        if style == "huge-line":
            assert seen == 1024 * 1024 + 1
