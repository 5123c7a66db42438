"""The `naparena` command: thin wrappers that turn core results into tables and exit codes."""

from __future__ import annotations

import functools
import json
import logging
import os
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from naparena.errors import NaparenaError, RunError
from naparena.report import tables as render

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Seeded round-robin tournaments for bots that play Napoleon (Nap).")
# Results go to stdout so they can be piped; wide enough for the standings when they are.
out = Console(width=None if sys.stdout.isatty() else 132)
err = Console(stderr=True)    # errors, warnings and progress

log = logging.getLogger("naparena")
ISOLATION_HELP = 'run every Python bot "inline" or in its own "process" (default: as the file says)'


def main() -> None:
    """Console-script entry point (`python -m naparena` too)."""
    app()


def _fail(e: NaparenaError) -> typer.Exit:
    err.print(f"[red]error:[/] {e}", highlight=False)
    return typer.Exit(e.exit_code)


def _command(fn):
    """Register a command whose project errors become one message and an exit code."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NaparenaError as e:
            raise _fail(e) from None
    return app.command()(wrapper)


# --- run, resume, report --------------------------------------------------------------

@_command
def run(
    file: Path = typer.Argument(..., help="tournament file (TOML)"),
    workers: Optional[int] = typer.Option(None, "--workers", "-w", min=1,
                                          help="worker processes (default: the file's, 0 there = one per core); 1 plays in-process"),
    log_dir: Optional[Path] = typer.Option(None, "--log-dir", help="where run directories go (default: the file's log_dir)"),
    bots_dir: Optional[Path] = typer.Option(None, "--bots-dir", help="drop-in bot folder (default: the file's bots_dir)"),
    resume: bool = typer.Option(False, "--resume", help="continue the newest run of this configuration"),
    as_json: bool = typer.Option(False, "--json", help="print the standings as JSON"),
    isolation: Optional[str] = typer.Option(None, "--isolation", help=ISOLATION_HELP),
) -> None:
    """Play a tournament, write JSON logs, print the standings."""
    from naparena.arena.runner import latest_run_dir, new_run_dir
    t, registry = _load(file, bots_dir, isolation)
    run_dir = latest_run_dir(t, log_dir) if resume else new_run_dir(t, log_dir)
    result = _execute(t, registry, run_dir, workers, resume, f"naparena resume {shlex.quote(str(run_dir))}")
    _show(result, as_json)


@_command
def resume(
    run_dir: Path = typer.Argument(..., help="run directory to continue"),
    workers: Optional[int] = typer.Option(None, "--workers", "-w", min=1),
    bots_dir: Optional[Path] = typer.Option(None, "--bots-dir", help="drop-in bot folder (default: the run's)"),
    as_json: bool = typer.Option(False, "--json", help="print the standings as JSON"),
    isolation: Optional[str] = typer.Option(None, "--isolation", help=ISOLATION_HELP),
) -> None:
    """Continue an interrupted run from its directory (from any working directory)."""
    from naparena.arena.runner import config_hash, read_manifest, read_where
    manifest = read_manifest(run_dir)
    where = read_where(run_dir)
    if not where.get("file"):
        raise RunError(f"{run_dir}: the run does not say which tournament file it came from")
    drop_ins = bots_dir or (Path(where["bots_dir"]) if where.get("bots_dir") else None)
    t, registry = _load(Path(where["file"]), drop_ins, isolation)
    if config_hash(t) != manifest["config_hash"]:
        raise RunError(f"{where['file']} has changed since {run_dir} was started; start a new run")
    result = _execute(t, registry, run_dir, workers, True, f"naparena resume {shlex.quote(str(run_dir))}")
    _show(result, as_json)


@_command
def report(
    run_dir: Path = typer.Argument(..., help="run directory"),
    as_json: bool = typer.Option(False, "--json", help="print the standings as JSON"),
) -> None:
    """Rebuild the standings from a run's logs alone."""
    from naparena.arena.runner import is_complete, standings_from_logs
    result = standings_from_logs(run_dir)
    if not is_complete(run_dir):
        err.print(f"[yellow]{run_dir} is unfinished[/]: these standings cover the matches played so far")
    _show(result, as_json)


def _load(file: Path, bots_dir: Optional[Path], isolation: Optional[str] = None):
    import dataclasses

    from naparena.arena.runner import registry_for
    from naparena.arena.seats import preflight
    from naparena.arena.tournament import check_bots, load_tournament, with_isolation
    t = load_tournament(file)
    if bots_dir is not None:
        t = dataclasses.replace(t, bots_dir=os.path.relpath(bots_dir, Path(t.path).parent))
    if isolation is not None:
        t = with_isolation(t, _isolation(isolation))
    registry = registry_for(t)
    render.failures(err, registry)
    t = check_bots(t, registry)
    preflight(t)  # external bots: a command that cannot start is a bad file, before any play
    return t, registry


def _isolation(mode: str) -> str:
    if mode not in ("inline", "process"):
        raise RunError(f'--isolation must be "inline" or "process", got {mode!r}')
    return mode


def _execute(t, registry, run_dir: Path, workers: Optional[int], resuming: bool, how_to_resume: str) -> dict:
    from naparena.arena.runner import Run
    from naparena.arena.schedule import total_hands
    runner = Run(t, registry, run_dir, workers)
    done = runner.prepare(resuming)
    _log_to(run_dir, runner.workers)
    total, hands = len(runner.specs), total_hands(t)
    err.print(f"{t.name}: {total} matches, {hands} hands, {runner.workers} worker(s) → {run_dir}"
              + (f" ({done} matches already done)" if done else ""))
    previous = signal.signal(signal.SIGTERM, _terminate)
    started = time.monotonic()
    try:
        with _progress() as progress:
            task = progress.add_task("matches", total=total, hands="0", rate="")

            def tick(matches: int, hands_done: int, session: int) -> None:
                rate = session / max(time.monotonic() - started, 1e-9)
                progress.update(task, completed=matches, hands=f"{hands_done}", rate=f"{rate:,.0f} hands/s")

            result = runner.execute(progress=tick)
    except KeyboardInterrupt:
        kept = sum(1 for _ in (run_dir / "matches").glob("*.json"))
        err.print(f"[yellow]interrupted[/]: {kept} of {total} matches are kept in {run_dir}.\n"
                  f"Resume with: {how_to_resume}")
        raise typer.Exit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
        _drop_run_logging()
    elapsed = time.monotonic() - started
    err.print(f"done in {elapsed:.1f} s; logs in {run_dir}")
    return result


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM ends a run the way Ctrl-C does: finished matches kept


def _progress() -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[hands]} hands"), TextColumn("{task.fields[rate]}"),
                    TimeRemainingColumn(), console=err, transient=False)


def _log_to(run_dir: Path, workers: int) -> None:
    """Warnings to stderr; everything (per-match faults too) to run.log in the run directory.

    multiprocessing-logging forwards the workers' records to these handlers; it needs
    the fork start method and must be installed before the pool is created. It wraps
    the handlers, so unwrap before replacing ours (a second run in one process).
    """
    import multiprocessing_logging

    root = logging.getLogger()
    _drop_run_logging()
    file_handler = logging.FileHandler(run_dir / "run.log")
    file_handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    file_handler.setLevel(logging.INFO)
    stderr_handler = logging.StreamHandler(sys.stderr)
    stderr_handler.setLevel(logging.WARNING)
    stderr_handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    for h in (file_handler, stderr_handler):
        h._naparena = True
        root.addHandler(h)
    log.setLevel(logging.INFO)
    if workers > 1:
        multiprocessing_logging.install_mp_handler(root)


def _drop_run_logging() -> None:
    """Remove (and flush) the handlers a run added, wrapped by multiprocessing-logging or not."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_naparena", False) or getattr(getattr(h, "sub_handler", None), "_naparena", False):
            root.removeHandler(h)
            h.close()  # a wrapper's close drains the records still coming from workers


def _show(result: dict, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result, indent=1, sort_keys=True))
    else:
        render.standings(out, result)


@_command
def compare(
    run_a: Path = typer.Argument(..., help="first run directory"),
    run_b: Path = typer.Argument(..., help="second run directory (other seeds, or other settings)"),
    as_json: bool = typer.Option(False, "--json", help="print the comparison as JSON"),
) -> None:
    """Compare the same bots across two runs and say whether the differences are real."""
    from naparena.arena.runner import load_standings
    from naparena.stats.standings import compare as compare_runs
    result = compare_runs(load_standings(run_a), load_standings(run_b))
    if as_json:
        typer.echo(json.dumps(result, indent=1, sort_keys=True))
    else:
        render.comparison(out, str(run_a), str(run_b), result)


# --- looking at logs ------------------------------------------------------------------

@_command
def replay(
    logfile: Path = typer.Argument(..., help="a match log (matches/NNNNNN.json in a run directory)"),
    hand: Optional[int] = typer.Option(None, "--hand", "-n", min=0, help="show only this hand (0-based)"),
) -> None:
    """Show the hands of a match trick by trick."""
    from naparena.arena.verify import load_match
    data = load_match(logfile)
    if "skipped" in data:
        out.print(f"match skipped: {data['skipped']}")
        return
    records = data["hands"]
    if hand is not None:
        if hand >= len(records):
            raise RunError(f"{logfile} has hands 0–{len(records) - 1}; there is no hand {hand}")
        records = [records[hand]]
    for record in records:
        render.hand_replay(out, data, record)


@_command
def verify(run_dir: Path = typer.Argument(..., help="run directory")) -> None:
    """Replay every logged hand through the engine; exit 1 on any mismatch."""
    from naparena.arena.verify import verify_run
    matches, hands, problems, missing = verify_run(run_dir)
    for name, problem in problems:
        err.print(f"[red]mismatch[/] {name}: {problem}")
    status = "ok" if not problems else "FAILED"
    out.print(f"verify {status}: {matches} matches, {hands} hands replayed, {len(problems)} problems"
              + (f", {missing} matches not played yet" if missing else ""))
    if problems:
        raise typer.Exit(1)


# --- bots, variants, set-up -----------------------------------------------------------

@_command
def variants(name: Optional[str] = typer.Argument(None, help="a variant to show in full")) -> None:
    """List the named variants, or every option of one with its source."""
    from naparena.game.rules import VARIANTS
    if name is None:
        render.variants(out)
    elif name not in VARIANTS:
        raise RunError(f"unknown variant '{name}'; known: {', '.join(VARIANTS)}")
    else:
        render.variant(out, name)


@_command
def bots(
    bots_dir: Path = typer.Option(Path("bots"), "--bots-dir", help="drop-in bot folder"),
    tournament: Optional[Path] = typer.Option(None, "--tournament", "-t",
                                              help="also list this tournament file's external bots (command = [...])"),
) -> None:
    """List every bot found, and every plug-in that failed to load."""
    from naparena.bots.plugins import load_registry
    registry = load_registry(bots_dir)
    render.bots(out, registry)
    for f in registry.failures:
        out.print(f"[red]failed[/] {f}")
    if tournament is not None:
        _external_bots(tournament)


def _external_bots(file: Path) -> None:
    """The file's external bots, each started for its handshake: name, version, command."""
    from rich.table import Table

    from naparena.arena.seats import probe
    from naparena.arena.tournament import load_tournament
    from naparena.bots.protocol import ProtocolError
    t = load_tournament(file)
    table = Table(title=f"external bots in {file}")
    for col in ("alias", "says it is", "version", "command", "files"):
        table.add_column(col)
    for bot in (b for b in t.bots if b.command is not None):
        try:
            hello = probe(t.command_of(bot), bot.params, t.seats)
            said, version = hello["name"], hello.get("version", "")
        except ProtocolError as e:
            said, version = f"[red]failed[/]: {e}", ""
        table.add_row(bot.alias, said, version, shlex.join(bot.command), t.command_hash(bot))
    out.print(table)


@_command
def check(
    bot: str = typer.Argument(..., help="bot name (with --tournament: an alias or name in that file)"),
    bots_dir: Path = typer.Option(Path("bots"), "--bots-dir", help="drop-in bot folder"),
    hands: int = typer.Option(30, "--hands", min=1, help="hands per variant"),
    timeout: float = typer.Option(1.0, "--timeout", min=0.001, help="seconds allowed per decision"),
    tournament: Optional[Path] = typer.Option(None, "--tournament", "-t",
                                              help="take the bot (command, params, isolation, limits) from this file"),
    command: Optional[str] = typer.Option(None, "--command", help="an external bot's command line, e.g. 'node mybot.js'"),
    isolation: str = typer.Option("inline", "--isolation", help="check a Python bot inline or as a seat process"),
    params: Optional[str] = typer.Option(None, "--params", help="the bot's parameters as a JSON object"),
) -> None:
    """Pre-flight a bot through every named variant; exit 1 if it misbehaved."""
    from naparena.bots.plugins import load_registry
    from naparena.bots.serve import parse_params
    from naparena.tools.check import check_bot
    registry = load_registry(bots_dir)
    how = {"isolation": _isolation(isolation), "params": parse_params(params) if params else None}
    if tournament is not None:
        how.update(_checked_entry(tournament, bot))
    elif command is not None:
        # Seat processes start in an empty folder: name files here by their absolute path.
        how["command"] = [os.path.abspath(a) if Path(a).exists() else a for a in shlex.split(command)]
    results = check_bot(registry, bot, hands=hands, timeout=timeout, **how)
    render.check(out, bot, results)
    failed = [r.variant for r in results if not r.ok]
    for r in results:  # in full: a protocol violation quotes the offending line
        if not r.ok:
            err.print(f"{r.variant}: {r.first_error}", highlight=False, markup=False, soft_wrap=True)
    if failed:
        err.print(f"[red]{bot} failed in {len(failed)} variant(s)[/]: {', '.join(failed)}")
        raise typer.Exit(1)
    out.print(f"{bot}: every decision legal in {len(results)} variants")


def _checked_entry(file: Path, name: str) -> dict:
    """What `naparena check --tournament` needs of the file's entry `name` (alias or bot name)."""
    from naparena.arena.tournament import load_tournament
    t = load_tournament(file)
    entry = next((b for b in t.bots if b.alias == name), None) or next((b for b in t.bots if b.name == name), None)
    if entry is None:
        raise RunError(f"{file}: no bot with alias or name '{name}'; bots: {', '.join(b.alias for b in t.bots)}")
    return {"params": entry.params, "isolation": t.isolation_of(entry), "confinement": t.seats,
            **({"command": t.command_of(entry)} if entry.command is not None else {})}


@_command
def serve(
    bot: str = typer.Argument(..., help="a registered bot"),
    params: str = typer.Option("{}", "--params", help="the bot's parameters as a JSON object; params sent in the handshake override them"),
    bots_dir: Path = typer.Option(Path("bots"), "--bots-dir", help="drop-in bot folder"),
) -> None:
    """Run a Python bot as a protocol program on stdin/stdout (docs/PROTOCOL.md)."""
    from naparena.bots.serve import parse_params
    from naparena.bots.serve import serve as serve_bot
    raise typer.Exit(serve_bot(bot, parse_params(params), str(bots_dir)))


@_command
def init(
    path: Path = typer.Argument(Path("tournament.toml"), help="file to write"),
    force: bool = typer.Option(False, "--force", help="overwrite an existing file"),
) -> None:
    """Write a starter tournament file listing the bots and variants available here."""
    from naparena.arena.tournament import starter_toml
    from naparena.bots.plugins import load_registry
    from naparena.game.rules import VARIANTS
    if path.exists() and not force:
        raise RunError(f"{path} exists; use --force to overwrite it")
    registry = load_registry("bots")
    names = sorted(registry.bots, key=lambda n: (n != "heuristic", n != "random", n))
    text = starter_toml(names, list(VARIANTS), name=path.stem if path.stem.isidentifier() else "starter")
    path.write_text(text)
    out.print(f"wrote {path}; run it with: naparena run {path}")


@_command
def bench(
    hands: int = typer.Option(20000, "--hands", min=100, help="hands per measurement"),
    every_variant: bool = typer.Option(True, "--all/--classic", help="also time every named variant"),
    repeat: int = typer.Option(3, "--repeat", min=1, help="best of this many runs (CPU time)"),
) -> None:
    """Hands per second on one core: the bare engine with random legal answers, then the
    same through bots, supervision and JSON logging."""
    from rich.table import Table

    from naparena.tools.bench import all_variants, engine_rate, match_rate
    best = lambda f: max(f() for _ in range(repeat))  # noqa: E731 - best of N: least disturbed
    engine = best(lambda: engine_rate(hands=hands))
    logged = best(lambda: engine_rate(hands=hands, log=True))
    full = best(lambda: engine_rate(hands=hands, overrides={"stop_when_decided": False}))
    match, size = max((match_rate(hands=hands) for _ in range(repeat)), key=lambda m: m[0])
    table = Table(title="naparena bench (one core, CPU time, best of %d)" % repeat)
    for col in ("measure", "hands/s"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    table.add_row("engine, classic, 4 players", f"{engine:,.0f}")
    table.add_row("engine, classic, 4 players, JSON hand log", f"{logged:,.0f}")
    table.add_row("engine, classic, 4 players, every trick played", f"{full:,.0f}")
    table.add_row(f"match of random bots with JSON log ({size:.0f} B/hand)", f"{match:,.0f}")
    table.add_row("match / engine (engine without a log)", f"{match / engine:.2f}")
    table.add_row("match / engine (both logging)", f"{match / logged:.2f}")
    if every_variant:
        for name, players, rate in all_variants(hands // 2):
            table.add_row(f"engine, {name}, {players} players", f"{rate:,.0f}")
    out.print(table)
