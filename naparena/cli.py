"""The `naparena` command, thin: parses arguments, calls the session (or the records, the
report, the tools), prints tables and messages, and maps project errors to exit codes."""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from naparena.arena.setup.settings import SETTINGS, Confinement, Isolation, Sandbox
from naparena.errors import NaparenaError, RunError, did_you_mean
from naparena.report import tables as render

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import ModuleType

    from naparena.api import Run
    from naparena.arena.records.verify import Audit
    from naparena.arena.session import Session
    from naparena.arena.setup.tournament import Tournament
    from naparena.bots.plugins import Registry
    from naparena.tools.check import VariantCheck

# Plain help (rich_markup_mode=None): Click's layout, which fills each paragraph to the
# width and shows no type on a flag; Typer's framed help writes "<bool>" on every flag.
app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"max_content_width": 120},
                  help="Seeded round-robin tournaments for bots that play Napoleon (Nap).")
out = Console()  # results, so they can be piped; the width is set per command (_width)
err = Console(stderr=True)    # errors, warnings and progress
# Piped results without COLUMNS: wide enough for the main standings table.
PIPE_WIDTH = 100

log = logging.getLogger("naparena")
P = ParamSpec("P")
R = TypeVar("R")
WIDE_HELP = "more columns: seed-stream spread, chips as bidder and defender, faults by kind"
WORKERS_HELP = f"worker processes, 0 = one per core; {SETTINGS['workers'].rule} (default: the file's workers)"


def _by_setting(key: str) -> Callable[[Any], Any]:
    """An option checked by the [tournament] setting it stands for: the file's range and
    rule, one definition for both (exit 2, naming the option)."""
    setting = SETTINGS[key]

    def check(value: Any) -> Any:
        if value is not None and not setting.ok(value):
            raise typer.BadParameter(f"{setting.rule}, got {value!r}")
        return value
    return check

ISOLATION_HELP = 'run every Python bot "inline" or in its own "process" (default: as the file says)'


def main() -> None:
    """Console-script entry point (`python -m naparena` too). A usage error (an unknown
    option, a value out of range) is Typer's framed box on a terminal, one line elsewhere."""
    if err.is_terminal:
        app()
        return
    try:
        code = app(standalone_mode=False)
    except Exception as e:
        # Click's exceptions, by their shape: newer Typer releases carry their own copy of Click.
        if type(e).__name__ == "Abort":
            say("aborted")
            sys.exit(1)
        exit_code = getattr(e, "exit_code", None)
        if not hasattr(e, "format_message") or not isinstance(exit_code, int):
            raise
        ctx = getattr(e, "ctx", None)
        hint = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        say("[red]error:[/] {}{}", e.format_message(), hint)
        sys.exit(exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def say(markup: str, *texts: object) -> None:
    """One message on stderr: `markup` with every piece of user text escaped (a name like
    "evil[/]" is text, not markup), on one line however long when stderr is no terminal."""
    err.print(markup.format(*(escape(str(t)) for t in texts)), highlight=False,
              soft_wrap=not err.is_terminal)


def _width() -> int | None:
    """COLUMNS if set, else the terminal's width (None: Rich asks), else PIPE_WIDTH."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None if sys.stdout.isatty() else PIPE_WIDTH


def _show_version(value: bool) -> None:
    if value:
        from naparena._version import __version__
        typer.echo(f"naparena {__version__}")
        raise typer.Exit


@app.callback()
def _options(
    version: bool = typer.Option(False, "--version", callback=_show_version, is_eager=True,
                                 help="print naparena's version and exit"),
) -> None:
    """Seeded round-robin tournaments for bots that play Napoleon (Nap)."""
    out.width = _width()  # type: ignore[assignment]  # None lets Rich ask the terminal; read per command: COLUMNS may change between calls in one process

def _fail(e: NaparenaError) -> typer.Exit:
    say("[red]error:[/] {}", e)
    return typer.Exit(e.exit_code)


def _command(fn: Callable[P, R]) -> Callable[P, R]:
    """Register a command whose project errors become one message and an exit code."""
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except NaparenaError as e:
            raise _fail(e) from None
        except KeyboardInterrupt:
            # Commands that keep something say what (run, verify, view); any other is
            # stopped with one word, as the console script's guard says it before a command.
            say("[yellow]interrupted[/]")
            raise typer.Exit(130) from None
    return app.command()(wrapper)


# --- run, resume, report --------------------------------------------------------------

SANDBOX_HELP = ('seat processes: "auto" (bubblewrap where it works, else a warning), "required" '
                '(refuse without it) or "off" (default: the file\'s [seats] sandbox, resuming: the run\'s)')
SCHEDULER_HELP = ("play on Dask (pip install 'naparena[dask]'): tcp://host:port, a scheduler file, "
                  "or local:N for a local cluster of N worker processes; none = the workers here "
                  "(default: the file's scheduler)")

SIGN_HELP = ("sign the finished run with this Ed25519 private key (naparena keygen): every file's hash, "
             "in the run's signature.json; needs pip install 'naparena[sign]'")


@_command
def run(
    file: Path = typer.Argument(..., help="tournament file (TOML)"),
    workers: int | None = typer.Option(None, "--workers", "-w", callback=_by_setting("workers"), help=WORKERS_HELP),
    log_dir: Path | None = typer.Option(None, "--log-dir",
                                        help="where run directories go (default: the file's log_dir)"),
    bots_dir: Path | None = typer.Option(None, "--bots-dir", help="drop-in bot folder (default: the file's bots_dir)"),
    resume: bool = typer.Option(False, "--resume", help="continue the newest run of this configuration"),
    as_json: bool = typer.Option(False, "--json", help="print the standings as JSON"),
    isolation: Isolation | None = typer.Option(None, "--isolation", help=ISOLATION_HELP),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
    live: bool = typer.Option(False, "--live", help="serve a live page of progress and standings on 127.0.0.1"),
    sandbox: str | None = typer.Option(None, "--sandbox", help=SANDBOX_HELP),
    sign: Path | None = typer.Option(None, "--sign", help=SIGN_HELP),
) -> None:
    """Play a tournament, write JSON logs, print the standings."""
    from naparena.arena.session import Session
    key = _signing_key(sign)  # before playing: a bad key must not cost a run
    watcher: Any = _Shown()
    if live:
        from naparena.people.live import LiveWatcher
        watcher = LiveWatcher(watcher)
        say("the live page is at {} (loopback only)", watcher.url)
    session = Session.open(file, log_dir=log_dir, bots_dir=bots_dir, isolation=isolation, workers=workers,
                           scheduler=scheduler, resume=resume, watcher=watcher, sandbox=sandbox)
    continued = _will_sign(session, key)
    try:
        try:
            result = _play(session)
        except typer.Exit as e:
            if e.exit_code == 130:
                _signed(session, key, complete=False)
            if live and e.exit_code == 130:
                watcher.interrupt(_resume_command(session), session.run_dir.kept())
            raise
        if live:
            watcher.finish(_show(result, as_json, wide), result)
        else:
            _show(result, as_json, wide)
    finally:
        if live:
            watcher.close()
    _signed(session, key, continued=continued)
    _after_disqualification(result)


@_command
def resume(
    run_dir: Path = typer.Argument(..., help="run directory to continue"),
    workers: int | None = typer.Option(None, "--workers", "-w", callback=_by_setting("workers"), help=WORKERS_HELP),
    bots_dir: Path | None = typer.Option(None, "--bots-dir", help="drop-in bot folder (default: the run's)"),
    as_json: bool = typer.Option(False, "--json", help="print the standings as JSON"),
    isolation: Isolation | None = typer.Option(None, "--isolation", help=ISOLATION_HELP),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
    sandbox: str | None = typer.Option(None, "--sandbox", help=SANDBOX_HELP),
    web: bool = typer.Option(False, "--web", help="a play run: go on at the table in the browser"),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="with --web: the port (0: any free one)"),
    pause: float = typer.Option(1.5, "--pause", min=0.0, max=30.0,
                                help="with --web: seconds the table stays still after each trick and hand"),
    sign: Path | None = typer.Option(None, "--sign", help=SIGN_HELP),
) -> None:
    """Continue an interrupted run from its directory (from any working directory); a run a
    person sat at (naparena play) goes on at the table, in the terminal or with --web."""
    from naparena.arena.session import Session
    from naparena.people.play import play_tournament
    key = _signing_key(sign)
    table = play_tournament(run_dir) if (run_dir / "manifest.json").is_file() else None
    if table is not None:
        _sit(table, run_dir, None, web, port, pause)
        return
    session = Session.resume(run_dir, bots_dir=bots_dir, isolation=isolation, workers=workers,
                             scheduler=scheduler, watcher=_Shown(), sandbox=sandbox)
    continued = _will_sign(session, key)
    try:
        result = _play(session)
    except typer.Exit as e:
        if e.exit_code == 130:
            _signed(session, key, complete=False)
        raise
    _signed(session, key, continued=continued)
    _show(result, as_json, wide)
    _after_disqualification(result)


def _signing_key(path: Path | None) -> Any:
    if path is None:
        return None
    from naparena.arena.records.signing import load_private
    return load_private(path)


def _will_sign(session: Session, key: Any) -> list[int]:
    """Before a session with a key plays: its manifest will name the signer, and a resumed
    run's earlier files must be as this key signed them, or replay as logged (refused by
    name before anything is played). Returns the matches to replay once continued."""
    if key is None:
        return []
    from naparena.arena.records.signing import public_text, vouch_for_earlier
    session.signed_by = public_text(key.public_key())
    if not (session.resuming and session.run_dir.started()):
        return []
    return vouch_for_earlier(session.run_dir.path, key)


def _signed(session: Session, key: Any, complete: bool = True, continued: Sequence[int] = ()) -> None:
    """Sign what the session leaves: a finished run, or (interrupted) an unfinished one as
    far as it went, for `resume --sign` to hold its files to."""
    if key is None or not session.run_dir.started():
        return
    from naparena.arena.records.signing import public_text, sign_run, vouch_for_continued
    run_dir = session.run_dir.path
    if complete:
        vouch_for_continued(run_dir, list(continued))
    signed = sign_run(run_dir, key, complete)
    say("signed {} files of {}{} with {}", signed, session.run_dir, "" if complete else " (unfinished)",
        public_text(key.public_key()))


@_command
def keygen(
    path: Path = typer.Argument(..., help="file for the private key; the public key goes to PATH.pub"),
) -> None:
    """Make an Ed25519 key pair for signing runs (run --sign PATH, verify --signed-by PATH.pub)."""
    from naparena.arena.records.signing import generate
    public = generate(path)
    out.print(escape(f"wrote {path} (private: keep it to yourself) and {path}.pub; public key: {public}"),
              soft_wrap=True)


@_command
def report(
    run_dir: Path = typer.Argument(..., help="run directory"),
    as_json: bool = typer.Option(False, "--json", help="print the standings as JSON"),
    wide: bool = typer.Option(False, "--wide", help=WIDE_HELP),
    html: Path | None = typer.Option(None, "--html", help="also write one self-contained HTML page of charts"),
) -> None:
    """Rebuild the standings from a run's logs alone."""
    from naparena.api import open_run
    run = open_run(run_dir)
    if html is not None:
        _check_output(html, "--html")  # before the tables: a bad path must not print them first
    with _page_interrupted(html):
        result = run.standings()
        if not run.complete:
            say("[yellow]{} is unfinished[/]: these standings cover the matches played so far", run_dir)
        _show(result, as_json, wide)
        if html is not None:
            from naparena.report.html import hands_folder, write_report
            started = time.monotonic()
            try:
                size, hands = write_report(run, html)
            except OSError as e:
                raise RunError(f"--html {html}: cannot write it: {e.strerror or e}") from None
            say("wrote {} ({} bytes) and its hands in {} ({} bytes) in {} s", html, f"{size:,}",
                hands_folder(html), f"{hands:,}", f"{time.monotonic() - started:.1f}")


@contextlib.contextmanager
def _page_interrupted(page: Path | None) -> Iterator[None]:
    """Ctrl-C while a page is built: say so, and what became of the page (nothing of it is
    left half-written: `write_report` writes all or nothing); exit 130."""
    before = page is not None and page.exists()
    try:
        yield
    except KeyboardInterrupt:
        if page is None:
            say("[yellow]interrupted[/]")
        elif before:
            say("[yellow]interrupted[/]: {} was not written again; the one there is as it was", page)
        else:
            say("[yellow]interrupted[/]: {} was not written, and no part of it was left", page)
        raise typer.Exit(130) from None


def _check_output(path: Path, what: str) -> None:
    """A file the command is about to write: its folder must exist and it must not be one."""
    if path.is_dir():
        raise RunError(f"{what} {path} is a folder; give a file name, e.g. {path / 'report.html'}")
    folder = path.parent
    if not folder.is_dir():
        problem = "is a file, not a folder" if folder.exists() else "does not exist"
        raise RunError(f"{what} {path}: the folder {folder} {problem}")


class _Shown:
    """A session's `Watcher` as the terminal shows it: warnings and the start on stderr, then a live
    progress bar, or plain lines when stderr is no terminal (a CI log)."""

    def __init__(self) -> None:
        self.total, self.hands, self.started_at = 0, 0, time.monotonic()
        self.tick: Callable[[int, int, int], None] = lambda matches, hands, session: None
        self.tell: Callable[[str], None] = lambda text: err.print(text, highlight=False, markup=False)

    def failures(self, registry: Registry) -> None:
        render.failures(err, registry)

    def caveat(self, text: str) -> None:
        say("[yellow]warning:[/] {}", text)

    def started(self, session: Session, done: int) -> None:
        self.total, self.hands, self.started_at = session.matches, session.hands, time.monotonic()
        say("{}: {}, {} hands, {} → {}" + (" ({} already done)" if done else ""), session.t.name,
            _count(session.matches, "match"), session.hands, session.where, session.run_dir, _count(done, "match"))

    @contextlib.contextmanager
    def live(self) -> Iterator[None]:
        if not err.is_terminal:  # a CI log: plain lines, as a live bar would show nothing
            self.tick = _Lines("matches", self.total, self.started_at, hands_total=self.hands)
            yield
            return
        # The bar counts hands, so that it moves within a long match; the matches are text.
        with _progress() as bar:
            task = bar.add_task("playing", total=self.hands, matches=f"0/{self.total} matches", rate="")

            def tick(matches: int, hands_done: int, session: int) -> None:
                rate = _rate(session, time.monotonic() - self.started_at)
                bar.update(task, completed=hands_done, matches=f"{matches}/{self.total} matches", rate=rate)

            self.tick = tick
            self.tell = lambda text: bar.console.print(text, highlight=False, markup=False)
            yield

    def notice(self, text: str) -> None:
        self.tell(text)

    def progress(self, matches: int, hands: int, session_hands: int) -> None:
        self.tick(matches, hands, session_hands)


def _play(session: Session) -> dict[str, Any]:
    """Play the session; an interrupt (Ctrl-C, SIGTERM) says what is kept and how to resume."""
    started = time.monotonic()
    try:
        result: dict[str, Any] = session.play()
    except KeyboardInterrupt:
        rd = session.run_dir
        if rd.started():
            partly, hands = rd.checkpointed()
            saved = f" (and {_count(hands, 'hand')} of {_count(partly, 'unfinished match')})" if partly else ""
            say("[yellow]interrupted[/]: {} of {} {} kept{} in {}.\nResume with: {}",
                rd.kept(), _count(session.matches, "match"), "is" if rd.kept() == 1 else "are", saved, rd,
                _resume_command(session))
        else:
            say("[yellow]interrupted[/] before the run started: nothing to resume; run it again")
        raise typer.Exit(130) from None
    say("done in {} s; logs in {}", f"{time.monotonic() - started:.1f}", session.run_dir)
    return result


def _resume_command(session: Session) -> str:
    return f"naparena resume {shlex.quote(str(session.run_dir))}"


def _count(n: int, word: str) -> str:
    """"1 match", "2 matches": English plurals for the few nouns counted here."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}{'es' if word.endswith(('s', 'ch')) else 's'}"


def _rate(hands: int, seconds: float) -> str:
    """Hands per second played in this session; nothing before a hand is played (a resumed
    run first books the matches done earlier, at no rate at all)."""
    return f"{hands / max(seconds, 1e-9):,.0f} hands/s" if hands else ""


class _Lines:
    """Progress as plain lines on stderr when it is not a terminal: one at every tenth of
    the work and at least every `every` seconds, so a CI log shows the run moving."""

    def __init__(self, what: str, total: int, started: float, every: float = 30.0, hands_total: int = 0):
        self.what, self.total, self.started, self.every = what, total, started, every
        self.hands_total = hands_total  # when known, tenths of the hands: a long match moves them
        self.tenth, self.last = 0, started

    def __call__(self, done: int, hands_done: int | None = None, session: int | None = None) -> None:
        now = time.monotonic()
        if self.hands_total and hands_done is not None:
            tenth = hands_done * 10 // self.hands_total
        else:
            tenth = done * 10 // max(self.total, 1)
        if tenth == self.tenth and now - self.last < self.every and done < self.total:
            return
        self.tenth, self.last = tenth, now
        line = f"{self.what} {done}/{self.total}"
        if hands_done is not None:
            line += f", {hands_done} hands" + (f" of {self.hands_total}" if self.hands_total else "")
            line += f", {_rate(session, now - self.started)}" if session else ""
        err.print(line + f", {now - self.started:.0f} s", highlight=False)


def _progress() -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[matches]},"),
                    TextColumn("{task.completed:,.0f}/{task.total:,.0f} hands"), TextColumn("{task.fields[rate]}"),
                    TimeRemainingColumn(), console=err, transient=False)


# Exit code of a run that finished, but left matches unplayed because bots were disqualified.
EXIT_DISQUALIFIED = 3


def _after_disqualification(result: dict[str, Any]) -> None:
    """Say loudly on stderr who was disqualified and what became of their matches; exit 3
    if some line-up could not be played at all."""
    if not result["disqualified"]:
        return
    from naparena.stats.standings import STAND_IN_ALIAS
    for alias, d in result["disqualified"].items():
        err.print(f"[bold red]DISQUALIFIED[/] {alias} after match {d['after_match']}: {d['faults']} faults "
                  f"in {d['decisions']} decisions (over the allowed max_fault_share)", highlight=False)
    # Their seats only: the stand-in also plays seats that died in a match.
    stood_in = sum(row.get("stood_in_hands", 0) for v in result["variants"].values() for row in v["bots"]
                   if row["bot"] in result["disqualified"])
    if stood_in:
        err.print(f"[red]their seats in later matches were played by the stand-in (the random bot) for "
                  f"{stood_in} hands, booked as '{STAND_IN_ALIAS}'[/]", highlight=False)
    skipped = [s for s in result["skipped"] if s["reason"].startswith("disqualified")]
    if skipped:
        err.print(f"[bold red]{len(skipped)} matches were not played[/]: fewer than two bots were left at "
                  "their tables; the standings cover the rest (exit code 3)", highlight=False)
        raise typer.Exit(EXIT_DISQUALIFIED)


def _json(data: Any, sort_keys: bool = True) -> str:
    """A `--json` output: strict JSON through the one writer (no NaN or Infinity)."""
    from naparena.arena.records.jsontext import dumps
    return dumps(data, indent=1, sort_keys=sort_keys)


def _plain(value: Any) -> Any:
    """A bot's declared parameters as JSON can hold them: what is not a JSON value is told by
    its repr, and a float that is no number (a default of inf, say) as text too."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
        return value
    return repr(value)


def _show(result: dict[str, Any], as_json: bool, wide: bool = False) -> str:
    """Print the standings; return the text printed (without colour), for the live page."""
    if as_json:
        text = _json(result)
        typer.echo(text)
        return text
    with out.capture() as captured:
        render.standings(out, result, wide)
    printed = captured.get()
    out.file.write(printed)
    out.file.flush()
    return Text.from_ansi(printed).plain


@_command
def compare(
    run_a: Path = typer.Argument(..., help="first run directory"),
    run_b: Path = typer.Argument(..., help="second run directory (other seeds, or other settings)"),
    as_json: bool = typer.Option(False, "--json", help="print the comparison as JSON"),
) -> None:
    """Compare the same bots across two runs and say whether the differences are real."""
    from naparena.api import open_run
    from naparena.tools.compare import compare_runs
    result = compare_runs(open_run(run_a), open_run(run_b))
    if result["design_differences"]:
        say("[yellow]warning:[/] the two runs' designs differ, so a difference may be the design's, not the "
            "bots': {}", "; ".join(result["design_differences"]))
    if result["shared_matches"]:
        say("[yellow]warning:[/] {} of B's matches were played in A too (the same seeds and bots, whatever their "
            "names): the intervals below treat A and B as independent samples, which they are not; compare runs "
            "with other seeds", result["shared_matches"])
    if as_json:
        typer.echo(_json(result))
    else:
        render.comparison(out, str(run_a), str(run_b), result)


# --- people at the table ---------------------------------------------------------------

PAUSE_HELP = "with --web: seconds the table stays still after each trick and hand"
PLAY_HELP = "a tournament file with one [[bots]] entry named \"human\" (instead of --variant and --bots)"


@_command
def play(
    file: Path | None = typer.Argument(None, help=PLAY_HELP),
    variant: str = typer.Option("classic", "--variant", help="the variant to play (naparena variants)"),
    bots: str = typer.Option("heuristic,random,random", "--bots", help="the bots at your table, comma-separated"),
    hands: int = typer.Option(5, "--hands", min=1, max=1000, help="hands per match"),
    seed: int = typer.Option(0, "--seed", min=0, help="master seed: the same seed deals the same cards"),
    log_dir: Path = typer.Option(Path("logs"), "--log-dir", help="where the run directory goes"),
    web: bool = typer.Option(False, "--web", help="play in the browser: serve the table on 127.0.0.1"),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="with --web: the port (0: any free one)"),
    pause: float = typer.Option(1.5, "--pause", min=0.0, max=30.0, help=PAUSE_HELP),
) -> None:
    """Sit at a table yourself: play bots in the terminal (or the browser with --web)."""
    from naparena.people.play import bot_list, file_tournament, quick_tournament
    if file is not None:
        t = file_tournament(file)
    else:
        t = quick_tournament(variant, bot_list(bots), hands, seed, str(log_dir))
    _sit(t, None, log_dir if file is None else None, web, port, pause)


def _sit(t: Tournament, run_dir: Path | None, log_dir: Path | None, web: bool, port: int, pause: float) -> None:
    """A person at the table of `t`: a new run, or `run_dir` resumed. Ctrl-C or leaving the
    table stops the run with its finished matches kept, shows the standings so far and says
    how to go on."""
    from naparena.arena.records.ledger import load_standings
    from naparena.arena.session import Session
    from naparena.people.play import Left, PlayWatcher, TableServer, every_hand_checkpointed
    if web:
        from naparena.people.web import WebFront
        front: Any = WebFront(port, pause)
        say("the table is at {} (loopback only); leave it there or with Ctrl-C", front.url)
    else:
        from naparena.people.terminal import TerminalFront
        front = TerminalFront()
    server = TableServer(front)
    stopped: str | None = None
    try:
        session = Session.open(t, run_dir, log_dir=log_dir, resume=run_dir is not None, watcher=PlayWatcher(server))
        try:
            with every_hand_checkpointed():
                result = session.play()
        except KeyboardInterrupt as e:
            stopped = "left" if isinstance(e, Left) or server.stopped else "interrupted"
            rd = session.run_dir
            result = load_standings(rd.path).result() if rd.kept() else {"matches": 0, "variants": {}}
            rd.drop_checkpoints()  # emptied by the matches logged; a cut match's stays
    finally:
        server.close()
        if not web:
            front.end_line()
    if web:
        front.finish(result, None if stopped is None else _resume_command(session), stopped or "")
        front.close()
    if result["matches"]:
        _show(result, False)
    if stopped is not None:
        rd, why = session.run_dir, "you left the table" if stopped == "left" else "Ctrl-C"
        if result["matches"]:
            so_far = "the standings above are so far"
        else:  # no table was printed: none to point at
            _, hands = rd.checkpointed()
            so_far = "no match was over, so there are no standings yet" + (
                f"; the {_count(hands, 'hand')} played in the match under way are kept" if hands else "")
        say("stopped after {} of {} matches ({}); {}. Go on with: {}", rd.kept(), session.matches, why, so_far,
            _resume_command(session))
    say("logs in {}; check them with: naparena verify {}", session.run_dir, session.run_dir)
    if stopped == "interrupted":
        raise typer.Exit(130)


@_command
def view(
    run_dir: Path = typer.Argument(..., help="run directory"),
    out_file: Path | None = typer.Option(None, "--out", help="write the page here instead of serving it"),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="the port to serve on (0: any free one)"),
) -> None:
    """The run's HTML report with its hand viewer: served on 127.0.0.1 (hands read as the page asks for
    them), or written with --out (the page, and its hands in a folder beside it)."""
    from naparena.api import open_run
    from naparena.report.html import hands_folder, write_report
    run = open_run(run_dir)
    if out_file is not None:
        _check_output(out_file, "--out")
        try:
            with _page_interrupted(out_file):
                size, hands = write_report(run, out_file)
        except OSError as e:
            raise RunError(f"--out {out_file}: cannot write it: {e.strerror or e}") from None
        say("wrote {} ({} bytes) and its hands in {} ({} bytes)", out_file, f"{size:,}", hands_folder(out_file),
            f"{hands:,}")
        return
    from naparena.people.serve_page import RunPages, page_server
    server = page_server(RunPages(run_dir), port)
    say("the report and hand viewer are at http://127.0.0.1:{}/ (loopback only); stop with Ctrl-C",
        server.server_address[1])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
@_command
def ratings(
    run_dirs: list[Path] = typer.Argument(..., help="run directories, any number"),
    as_json: bool = typer.Option(False, "--json", help="print the rating lists as JSON"),
    html: Path | None = typer.Option(None, "--html", help="also write the lists as one self-contained HTML page"),
    pool: bool = typer.Option(False, "--pool", help="one list over every variant and table size "
                              "(default: one list per variant's rules and table size)"),
    model: str = typer.Option("margins", "--model", help="margins (chip margins, shown by default) or "
                              "places (Bradley-Terry on board places)"),
    estimator: str = typer.Option("auto", "--estimator", help="auto (luck-adjusted where every run of a "
                                  "list was) or plain (chips as they fell)"),
) -> None:
    """One rating list across runs: the same bot (name, version, params) is one entry."""
    from naparena.api import open_run
    from naparena.tools.ratings import rating_lists
    if html is not None:
        _check_output(html, "--html")  # before the lists: a bad path must not print them first
    if estimator not in ("auto", "plain"):
        raise RunError(f"--estimator must be auto or plain, got {estimator!r}")
    lists = rating_lists([open_run(path) for path in run_dirs], pool, model, estimator)
    for run in lists["runs"]:
        if run["played_before"]:
            say("{}: {} of its {} matches were played in {} too (the same seeds and bots, whatever their "
                "names): booked once", run["dir"], run["played_before"], run["matches"], ", ".join(run["before_in"]))
    if as_json:
        typer.echo(_json(lists))
    else:
        for entry in lists["lists"]:
            table = f", tables of {entry['table']}" if entry["table"] else ""
            runs = f"{len(entry['runs'])} run" + ("" if len(entry["runs"]) == 1 else "s")
            render.strength_table(out, f"{entry['variant']}{table} ({runs})", entry)
    if html is not None:
        from naparena.report.html import ratings_page
        try:
            html.write_text(ratings_page(lists))
        except OSError as e:
            raise RunError(f"--html {html}: cannot write it: {e.strerror or e}") from None
        say("wrote {}", html)


# --- looking at logs ------------------------------------------------------------------

@_command
def replay(
    logfile: Path = typer.Argument(..., help="a match log (matches/NNNNNN.json in a run directory)"),
    hand: int | None = typer.Option(None, "--hand", "-n", min=0, help="show only this hand (0-based)"),
) -> None:
    """Show the hands of a match trick by trick."""
    from naparena.arena.records.logs import load_match
    data = load_match(logfile)
    if "skipped" in data:
        out.print(f"match skipped: {escape(str(data['skipped']))}")
        return
    records = data["hands"]
    if hand is not None:
        if hand >= len(records):
            raise RunError(f"{logfile} has hands 0–{len(records) - 1}; there is no hand {hand}")
        records = [records[hand]]
    for record in records:
        render.hand_replay(out, data, record)


@_command
def verify(
    run_dir: Path = typer.Argument(..., help="run directory"),
    rerun: bool = typer.Option(False, "--rerun", help="also play every match again with the recorded bots and "
                               "seeds, and require the same files byte for byte"),
    tournament: Path | None = typer.Option(None, "--tournament", help="require the run to be the one this "
                                           "tournament file describes; name every difference"),
    workers: int | None = typer.Option(None, "--workers", "-w", min=1, max=256,
                                       help="worker processes for --rerun (default: one per core)"),
    signed_by: str | None = typer.Option(None, "--signed-by", help="require the run to be signed with this "
                                         "Ed25519 public key (a .pub file or its ed25519:… text), every file "
                                         "as signed"),
) -> None:
    """Replay every logged hand through the engine; exit 1 on any mismatch. With --rerun and
    --tournament, also catch a run forged with naparena's own engine; with --signed-by, any
    change to a signed run."""
    from naparena.api import open_run
    from naparena.arena.records.signing import load_public
    from naparena.arena.rerun import described_run
    # The file and key first: a missing or bad one is told before a long replay, not after it,
    # and so is every way the run is not the file's (the manifest alone tells).
    described = described_run(tournament) if tournament is not None else None
    public = load_public(signed_by) if signed_by is not None else None
    run = open_run(run_dir, sound=False)  # its files are what is checked below
    honest = _verify_tournament(run_dir, tournament, described) if tournament is not None else True
    seen = [0, 0]  # matches checked, of how many: for the message if interrupted
    try:
        found = _verify_with_progress(run, seen)
    except KeyboardInterrupt:
        say("[yellow]interrupted[/]: verify stopped after {} of {}; nothing was changed",
            seen[0], _count(seen[1], "match"))
        raise typer.Exit(130) from None
    matches, hands, problems, missing = found.matches, found.hands, found.problems, found.missing
    for name, problem in problems:
        say("[red]mismatch[/] {}: {}", name, problem)
    status = "ok" if not problems else "FAILED"
    out.print(f"verify {status}: {matches} matches, {hands} hands replayed, {len(problems)} problems"
              + (f", {missing} matches not played yet" if missing else ""))
    honest = _verify_signature(run_dir, public) and not problems and honest
    if rerun:
        if problems:
            say("[yellow]re-run skipped[/]: the run's files disagree with each other already")
        else:
            honest = _verify_rerun(run_dir, workers) and honest
    if not honest:
        raise typer.Exit(1)


def _verify_with_progress(run: Run, seen: list[int]) -> Audit:
    """`run.audit()` with a bar on a terminal, plain lines elsewhere; `seen` follows it."""
    started = time.monotonic()
    if err.is_terminal:
        with Progress(TextColumn("[bold]verify"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[hands]}"),
                      TimeRemainingColumn(), console=err, transient=True) as bar:
            task = bar.add_task("verify", total=None, hands="")

            def show(done: int, total: int, hands: int) -> None:
                seen[:] = done, total
                bar.update(task, completed=done, total=total, hands=f"{hands} hands")
            return run.audit(progress=show)
    lines = _Lines("verify: matches", 0, started)

    def tick(done: int, total: int, hands: int) -> None:
        seen[:] = done, total
        lines.total = total
        if done:
            lines(done)
    return run.audit(progress=tick)


def _verify_signature(run_dir: Path, public: Any) -> bool:
    """The run's signature: checked against `public` if given, else only said."""
    from naparena.arena.records.signing import check_signature, complete, lost_signature, public_text, signer
    if public is None:
        lost = lost_signature(run_dir)
        if lost is not None:
            say("[red]not as signed[/] {}: {}", "signature.json", lost)
            out.print("signature FAILED: the run was signed, and its signature is gone", soft_wrap=True)
            return False
        by = signer(run_dir)
        unfinished = "" if complete(run_dir) else " (of the run so far: it is unfinished)"
        out.print("signature: none (the run is unsigned)" if by is None else
                  escape(f"signature: by {by}{unfinished}, not checked (give --signed-by)"), soft_wrap=True)
        return True
    problems = check_signature(run_dir, public)
    for name, problem in problems:
        say("[red]not as signed[/] {}: {}", name, problem)
    out.print(escape(f"signature {'ok' if not problems else 'FAILED'}: by {public_text(public)}, "
                     f"{len(problems)} problems"), soft_wrap=True)
    return not problems


def _verify_tournament(run_dir: Path, file: Path, described: dict[str, Any] | None) -> bool:
    """`verify --tournament`: every way the run is not the one `file` describes."""
    from naparena.arena.rerun import tournament_differences
    differences = tournament_differences(run_dir, file, described)
    for difference in differences:
        say("[red]not this file's run[/]: {}", difference)
    out.print(f"tournament {'ok' if not differences else 'FAILED'}: {len(differences)} differences from {file}")
    return not differences


def _verify_rerun(run_dir: Path, workers: int | None) -> bool:
    """`verify --rerun`: play the run again in a scratch folder; every file must be the same."""
    import tempfile

    from naparena.arena.rerun import rerun as play_again
    with tempfile.TemporaryDirectory(prefix="naparena-rerun-") as scratch:
        found = play_again(run_dir, Path(scratch) / "run", workers)
    for alias, why in found.unrunnable:
        say("[red]cannot re-run[/] {}: {}", f"bot '{alias}'" if alias else "the run", why)
    for name, given in found.given:
        say("[yellow]taken as given[/] {}: {}", name, given)
    for note in found.notes:
        say("[yellow]note[/]: {}", note)
    for name, problem in found.problems:
        say("[red]mismatch[/] {}: {}", name or "re-run", problem)
    bad = len(found.problems) + len(found.unrunnable)
    status = "ok" if not bad else "FAILED"
    out.print(f"re-run {status}: {found.matches} matches compared, {len(found.given)} time-outs taken as given, "
              f"{len(found.problems)} problems" + (f", {len(found.unrunnable)} bots cannot be re-run"
                                                    if found.unrunnable else ""))
    return not bad


# --- bots, variants, set-up -----------------------------------------------------------

@_command
def variants(name: str | None = typer.Argument(None, help="a variant to show in full")) -> None:
    """List the named variants, or every option of one with its source."""
    from naparena.game.rules import VARIANTS
    if name is None:
        render.variants(out)
    elif name not in VARIANTS:
        raise RunError(f"unknown variant '{name}'{did_you_mean(name, VARIANTS)}; known: {', '.join(VARIANTS)}")
    else:
        render.variant(out, name)


@_command
def bots(
    bots_dir: Path = typer.Option(Path("bots"), "--bots-dir", help="drop-in bot folder"),
    tournament: Path | None = typer.Option(None, "--tournament", "-t",
                                              help="also list this tournament file's external bots (command = [...])"),
    as_json: bool = typer.Option(False, "--json", help="print the bots and the failures as JSON"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="show each failure's traceback"),
) -> None:
    """List every bot found, and every plug-in that failed to load (then exit 1)."""
    from naparena.bots.plugins import bot_version, load_registry
    registry = load_registry(bots_dir)
    if as_json:
        typer.echo(_json({
            "bots": [{"name": e.name, "source": e.source, "version": bot_version(e), "description": e.description,
                      "params": _plain(e.cls.params)} for e in sorted(registry.bots.values(), key=lambda e: e.name)],
            "failures": [{"name": f.name, "source": f.source, "error": f.error, "traceback": f.traceback}
                         for f in registry.failures],
            "searched": registry.searched}, sort_keys=False))
    else:
        render.bots(out, registry)
        out.print("searched: " + "; ".join(registry.searched), highlight=False, markup=False)
        render.failures(err, registry, verbose)
        if tournament is not None:
            _external_bots(tournament)
    if registry.failures:
        raise typer.Exit(1)


def _external_bots(file: Path) -> None:
    """The file's external bots, each started for its handshake: name, version, command."""
    from rich.table import Table

    from naparena.tools.check import external_bots
    table = Table(title=f"external bots in {escape(str(file))}")
    for col in ("alias", "says it is", "version", "command", "files"):
        table.add_column(col)
    for bot in external_bots(file):
        said = escape(bot.said) if bot.failed is None else f"[red]failed[/]: {escape(bot.failed)}"
        table.add_row(escape(bot.alias), said, escape(bot.version), escape(shlex.join(bot.command)), bot.files)
    out.print(table)


@_command
def check(
    bot: str | None = typer.Argument(None, help="bot name (with --tournament: an alias or name in that file; "
                                     "with --command: only the name shown, by default the command's file)"),
    bots_dir: Path = typer.Option(Path("bots"), "--bots-dir", help="drop-in bot folder"),
    hands: int = typer.Option(10, "--hands", min=1, max=100_000, help="hands per variant and table size"),
    timeout: float | None = typer.Option(None, "--timeout", callback=_by_setting("timeout"), show_default=False,
                                         help="seconds allowed per decision [default: the --tournament file's "
                                              f"timeout, else {SETTINGS['timeout'].default:g}]; "
                                              f"{SETTINGS['timeout'].rule}"),
    tournament: Path | None = typer.Option(None, "--tournament", "-t",
                                           help="take the bot (command, params, isolation, limits, "
                                                "timeout) from this file"),
    command: str | None = typer.Option(None, "--command", help="an external bot's command line, e.g. 'node mybot.js'"),
    isolation: Isolation = typer.Option(Isolation.INLINE, "--isolation",
                                        help="check a Python bot inline or as a seat process"),
    params: str | None = typer.Option(None, "--params", help="the bot's parameters as a JSON object"),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="show what a sandboxed seat sees, and the traceback of a plug-in that failed"),
    sandbox: str | None = typer.Option(None, "--sandbox", help=SANDBOX_HELP),
    thorough: int | None = typer.Option(None, "--thorough", min=1, max=10_000,
                                        help="deal on, --hands at a time, until every decision kind a variant "
                                             "has was asked at least N times at each table size "
                                             "(at most 5,000 hands a size)"),
) -> None:
    """Pre-flight a bot through every named variant at every table size it allows (2 to 7 \
seats), and count the decisions of each kind it was asked; exit 1 if it misbehaved."""
    from naparena.bots.plugins import load_registry
    from naparena.bots.serve import parse_params
    from naparena.tools.check import check_bot, checked_entry, seat_sees
    registry = load_registry(bots_dir)
    how: dict[str, Any] = {"isolation": isolation, "params": parse_params(params) if params else None}
    if command is not None and tournament is not None:
        raise RunError("--command and --tournament both say how to start the bot: give one of them")
    argv = _command_line(command) if command is not None else None
    if bot is None:
        if argv is None:
            raise RunError("name a bot to check (BOT), or give an external bot's --command")
        bot = _command_name(argv)
    if tournament is not None:
        how.update(checked_entry(tournament, bot, registry))
    # The flag, else the file's timeout, else the setting's default: a file's bots are
    # checked under the limit its tournament plays them under.
    limit = how.pop("timeout", SETTINGS["timeout"].default)
    timeout = limit if timeout is None else timeout
    if argv is not None:
        # Seat processes start in an empty folder: name files here by their absolute path.
        how["command"] = [os.path.abspath(a) if Path(a).exists() else a for a in argv]
    how["confinement"] = _checked_sandbox(how.get("confinement") or Confinement(), sandbox)
    if bot not in registry.bots and "command" not in how:
        render.failures(err, registry, verbose)  # the reason a drop-in did not register
    if verbose and how["confinement"].sandbox == Sandbox.BWRAP and ("command" in how or how["isolation"] == "process"):
        err.print("the seat sandbox shows, read-only, besides the system folders:", highlight=False, soft_wrap=True)
        shown, refused = seat_sees(registry, bot, how.get("command"), how.get("files") or [], how.get("hidden"))
        for path, why in shown:
            err.print(f"  {path}  ({why})", highlight=False, markup=False, soft_wrap=True)
        err.print("  and a private in-memory home, /tmp and /dev/shm "
                  f"(at most {how['confinement'].disk_mb} MB each)", highlight=False, markup=False, soft_wrap=True)
        if how.get("hidden"):
            err.print("hidden wherever those would show them: " + ", ".join(how["hidden"]),
                      highlight=False, markup=False, soft_wrap=True)
        if refused:
            err.print("not shown, though the bot's own files name them (only the tournament file widens a seat's "
                      "view: add one to files = [...] if the bot needs it):",
                      highlight=False, markup=False, soft_wrap=True)
            for path, why in refused:
                err.print(f"  {path}  ({why})", highlight=False, markup=False, soft_wrap=True)
    results = check_bot(registry, bot, hands=hands, timeout=timeout, thorough=thorough or 0,
                        progress=lambda done, total, what: err.print(f"check {bot}: {done}/{total} {what}",
                                                                    highlight=False, markup=False), **how)
    render.check(out, bot, results)  # with each variant's first error, in full
    render.check_coverage(out, bot, results, thorough or 1)
    _coverage_note(bot, results, thorough)
    for r in results:
        if (near := r.near_limit(timeout)) is not None:
            say("[yellow]warning:[/] {} in {}: {}; a harder position or a busier machine may time out",
                bot, r.variant, near)
    failed = [r.variant for r in results if not r.ok]
    if failed:
        say("[red]{} failed in {} variant(s)[/]: {}", bot, len(failed), ", ".join(failed))
        raise typer.Exit(1)
    played = [r for r in results if r.not_played is None]
    declined = [r.variant for r in results if r.not_played is not None]
    out.print(f"{bot}: every decision legal in {len(played)} variants, at every table size from 2 to 7 "
              "seats each allows" + (f"; not played (the bot declines them): {', '.join(declined)}"
                                     if declined else ""))


def _coverage_note(bot: str, results: list[VariantCheck], thorough: int | None) -> None:
    """Which kinds fell short: never asked (without --thorough), or fewer than N times."""
    from naparena.tools.check import THOROUGH_MAX_HANDS
    short = [f"{r.variant} at {players} seats: {', '.join(kinds)}"
             for r in results for players, kinds in r.short(thorough or 1).items()]
    if not short:
        return
    if thorough:
        say("[yellow]warning:[/] {} was asked some kinds fewer than {} times in {:,} hands a table size "
            "(its own play may never reach them): {}", bot, thorough, THOROUGH_MAX_HANDS, "; ".join(short))
    else:
        say("note: {} was never asked some decision kinds: {}; --thorough N deals on until each is asked "
            "N times", bot, "; ".join(short[:6]) + (f"; and {len(short) - 6} more" if len(short) > 6 else ""))


def _checked_sandbox(confinement: Confinement, mode: str | None) -> Confinement:
    """check's seat sandbox: --sandbox, else the file's (or auto), resolved as a run's is."""
    from naparena.arena.session import resolve_sandbox
    used, warning = resolve_sandbox(confinement, mode)
    if warning:
        say("[yellow]warning:[/] {}", warning)
    return used


def _command_line(command: str) -> list[str]:
    """`check --command`'s words, refused when there are none to start."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise RunError(f"--command {command!r}: cannot split it into words ({e})") from None
    if not argv:
        raise RunError("--command is empty: give the bot's command line, e.g. --command 'node mybot.js'")
    return argv


def _command_name(argv: list[str]) -> str:
    """What `check --command` calls a bot without a name: the last file its command names."""
    files = [Path(a).name for a in argv if Path(a).is_file()]
    return files[-1] if files else Path(argv[0]).name if argv else "bot"


@_command
def serve(
    bot: str = typer.Argument(..., help="a registered bot"),
    params: str = typer.Option("{}", "--params", help="the bot's parameters as a JSON object; "
                               "params sent in the handshake override them"),
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
    from naparena.arena.setup.starter import starter_toml
    from naparena.bots.plugins import load_registry
    from naparena.game.rules import VARIANTS
    if path.exists() and not force:
        raise RunError(f"{path} exists; use --force to overwrite it")
    _check_output(path, "init:")
    registry = load_registry("bots")
    names = sorted(registry.bots, key=lambda n: (n != "heuristic", n != "random", n))
    text = starter_toml(names, list(VARIANTS), name=path.stem if path.stem.isidentifier() else "starter")
    try:
        path.write_text(text)
    except OSError as e:
        raise RunError(f"{path}: cannot write it: {e.strerror or e}") from None
    out.print(escape(f"wrote {path}; run it with: naparena run {path}"))


@_command
def bench(
    hands: int = typer.Option(20000, "--hands", min=100, max=10_000_000, help="hands per measurement"),
    every_variant: bool = typer.Option(True, "--all/--classic", help="also time every named variant"),
    repeat: int = typer.Option(3, "--repeat", min=1, max=100, help="runs of each measure (CPU time)"),
) -> None:
    """Hands per second on one core: the bare engine with random legal answers, then the \
same through bots, supervision and JSON logging, inline and with each bot in a seat process."""
    from naparena.report.fit import Col, print_table
    from naparena.tools.bench import INLINE_WALL, ISOLATED_WALL, match_rate, measures, spread
    todo = measures(hands, every_variant)
    rows, rates = [], {}
    for n, (name, measure) in enumerate(todo, 1):
        err.print(f"bench {n}/{len(todo)}: {name}, {repeat} run(s) of {hands:,} hands", highlight=False)
        best, median, width = spread([measure() for _ in range(repeat)])
        rates[name] = best
        rows.append([name, f"{best:,.0f}", f"{median:,.0f}", "—" if repeat == 1 else f"{width:.1%}"])
    print_table(out, f"naparena bench: hands/s on one core, CPU time unless said, {repeat} run(s) each",
                [Col("measure", "left", True), Col("best"), Col("median"), Col("spread")], rows,
                caption="best = the least disturbed run; spread = (highest − lowest) / median")
    out.print(f"seat processes / inline: {rates[ISOLATED_WALL] / rates[INLINE_WALL]:.2f} "
              "(best wall-clock rates of the same match, measured in this run)", highlight=False)
    engine, logged = rates["engine, classic, 4 players"], rates["engine, classic, 4 players, JSON hand log"]
    match = rates["match of random bots, bot interface and JSON log"]
    size = match_rate(hands=min(hands, 2000))[1]
    out.print(f"match / engine: {match / engine:.2f} against the engine without a log, "
              f"{match / logged:.2f} against the engine with one; a match log takes {size:.0f} bytes a hand",
              highlight=False)


def api_modules() -> tuple[tuple[str, ModuleType], ...]:
    """The modules the Python API page documents, in its order: the package root, its
    cards, the testing helpers and the running API (names a bot author or a script imports)."""
    import naparena
    from naparena import api, testing
    from naparena.game import cards
    return (("naparena", naparena), ("naparena.cards", cards), ("naparena.testing", testing), ("naparena.api", api))


@app.command("docs", hidden=True)
def write_docs(root: Path = typer.Argument(Path("."), help="the repository to write docs/ into")) -> None:
    """Rewrite the generated documentation pages (for maintainers; a test checks them)."""
    from naparena.tools import docs, reference
    docs.write_all(root)
    reference.write_pages(root, typer.main.get_command(app), api_modules())
