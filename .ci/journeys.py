#!/usr/bin/env python3
"""CI: the documentation's user journeys. Every command and code block of the README, the
tutorials, the how-to guides, the examples' READMEs and any other page carrying a journey
marker runs as a reader runs it: in a scratch copy of the repository (its tracked files,
as a fresh clone in a folder named `naparena`), from a fresh shell, with relative paths,
in a virtual environment made the page's way; the figures a page quotes are recomputed
and compared.

The commands are read from the pages, never copied here, so a page cannot drift from
what CI runs. How a page is read (markers are HTML comments: neither a code host nor the
site shows them):

- ```sh (or bash, shell) blocks run as written, all the blocks of a page in one shell, so
  `cd` and `. .venv/bin/activate` carry over from block to block as in a terminal.
- ```python blocks run with the shell's `python` as one script, saved in the shell's
  folder (consecutive ones, with only prose between them, are parts of one script).
- A plain ``` block is text (a layout, an output) and is not run.
- Any other block (toml, jq, …) must say what it is:
    <!-- journey: file PATH -->      the reader saves it as PATH (from the shell's folder).
- <!-- journey: skip REASON -->      a block too long to run. The prose beside it must tell
                                     the reader ("CI does not run …" or "… not run in CI").
- <!-- journey: install -->          the block makes the page's venv: its install recipe.
- <!-- journey: new-shell -->        what every new shell runs first (activation); run in
                                     its page, and first in each page that follows it.
- <!-- journey: after PAGE -->       (anywhere) the page starts where PAGE's install left the
                                     reader; a page without an install follows README.md.
- <!-- journey: inline -->           run the `naparena …` code spans of the next paragraph
                                     (spans with a placeholder such as FILE or … are not).
- <!-- journey: output -->           the next plain block is what the previous step printed,
                                     compared line by line, whitespace aside (COLUMNS=100).
- <!-- journey: expect "F" "G" -->   each figure is in the page's text and in what the
                                     previous step printed; numbers equal at the page's
                                     precision (within half its last digit).
- <!-- journey: serve URL -->        the next block starts a server: run until URL answers,
                                     then stopped.
- <!-- journey: sh COMMAND -->       a step the prose asks for in words ("the module above").
- <!-- journey: skip-page REASON -->  (anywhere) the whole page is not run; its text must
                                     say so ("CI does not run …").

`naparena …` commands written in prose and not marked inline are listed, not run.

Pages whose install recipe is the same text share one venv (their `.venv` links to it),
unless a page installs into it (`pip install`): that page gets a venv of its own, made by
the recipe in its own copy. Journeys run in parallel, `--jobs` at a time (default: cores).

    python3 .ci/journeys.py [--jobs N] [--keep] [--list] [PAGE …]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "docs/tutorials/*.md", "docs/how-to/*.md", "examples/*/README.md")
DEFAULT_AFTER = "README.md"
SHELLS = {"sh", "bash", "shell"}
COLUMNS = "100"  # the terminal width the pages' quoted outputs were printed at
PAGE_TIMEOUT = 900  # seconds; a page's own steps, set-up included

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)[^`]*$")
MARKER = re.compile(r"<!--\s*journey:\s*(.*?)\s*-->", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
SPAN = re.compile(r"`([^`\n]+)`")
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]{2,}\b|…|\.\.\.")
SKIP_NOTICE = re.compile(r"CI does not run|not run in CI", re.I)
INSTALLS_HERE = re.compile(r"(?<![\w/.-])(?:\.venv/bin/)?pip3? install\b")
NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?", re.I)


# The pages' shells now running, each the leader of its own process group, so that an
# interrupted run stops them and all they started (servers, clusters, installs).
LIVE: dict[subprocess.Popen[str], Path] = {}  # with the folder of its steps' output
STOP = threading.Event()


class PageError(Exception):
    """A page that cannot be read as a journey: an unmarked block, a figure not in its text."""


# --- reading a page ------------------------------------------------------------------------

@dataclass
class Marker:
    kind: str
    arg: str
    line: int


@dataclass
class Block:
    line: int
    lang: str
    body: str
    markers: list[Marker]
    around: str  # the visible prose between the previous block and the next one

    def has(self, kind: str) -> Marker | None:
        return next((m for m in self.markers if m.kind == kind), None)


@dataclass
class Inline:
    line: int
    commands: list[str]


@dataclass
class Page:
    name: str
    items: list[Block | Inline | Marker]
    text: str  # visible text, normalised (figures are looked up in it)
    after: str | None
    skip: str | None = None  # why the whole page is not run
    prose_commands: list[str] = field(default_factory=list)  # written in its text, not run

    @property
    def blocks(self) -> list[Block]:
        return [i for i in self.items if isinstance(i, Block)]

    def installs(self) -> list[Block]:
        return [b for b in self.blocks if b.has("install")]

    def new_shell(self) -> list[Block]:
        return [b for b in self.blocks if b.has("new-shell")]

    def installs_into_its_venv(self) -> bool:
        return any(INSTALLS_HERE.search(b.body) for b in self.blocks
                   if b.lang in SHELLS and not b.has("install") and not b.has("skip"))


def normalise(text: str) -> str:
    """What a figure is compared in: one minus sign, one kind of space, no thousands commas."""
    text = text.replace("\u2212", "-").replace("\u2013", "-").replace("\u00a0", " ").replace("\u202f", " ")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return " ".join(text.split())


def parse_marker(text: str, line: int) -> Marker:
    kind, _, arg = text.strip().partition(" ")
    known = {"file", "skip", "install", "new-shell", "after", "inline", "output", "expect", "serve", "sh",
             "skip-page"}
    if kind not in known:
        raise PageError(f"line {line}: unknown journey marker {kind!r} (known: {', '.join(sorted(known))})")
    return Marker(kind, arg.strip(), line)


def is_command(span: str) -> bool:
    """A `naparena …` code span a reader could type as it is (no FILE, RUNDIR or …)."""
    return re.match(r"(\.venv/bin/)?naparena\s", span) is not None and not PLACEHOLDER.search(span)


def closes(line: str, mark: str) -> bool:
    """`line` closes a block opened with `mark`: the same fence character, as many or more."""
    fence = line.strip()
    return len(fence) >= len(mark) and set(fence) == {mark[0]}


class Reader:
    """Reads a page line by line into its items: blocks (with the markers before them),
    inline commands, and the expect and sh markers in their places."""

    def __init__(self, name: str, text: str):
        self.name, self.lines, self.at = name, text.splitlines(keepends=True), 0
        self.items: list[Block | Inline | Marker] = []
        self.pending: list[Marker] = []
        self.chunks: list[str] = [""]       # the visible prose between blocks
        self.blocks: list[Block] = []
        self.paragraph: list[str] = []
        self.inline_from: int | None = None
        self.after: str | None = None
        self.skip: str | None = None
        self.spans: list[str] = []          # every code span of the visible text
        self.ran_inline: list[str] = []

    def read(self) -> Page:
        while self.at < len(self.lines):
            line = self.lines[self.at]
            if "<!--" in line and "journey:" in line:
                self.markers()
            elif fence := FENCE.match(line):
                self.block(*fence.groups())
            else:
                self.prose(line)
            self.at += 1
        self.end_paragraph()
        if self.pending:
            raise PageError(f"{self.name}:{self.pending[0].line}: a journey marker with no block after it")
        for n, block in enumerate(self.blocks):
            block.around = self.chunks[n] + "\n" + self.chunks[n + 1]
        visible = normalise(COMMENT.sub("", "".join(self.chunks)))
        if self.skip is not None and not SKIP_NOTICE.search(visible):
            raise PageError(f"{self.name}: a page not run whose text does not tell the reader "
                            "(say 'CI does not run …')")
        in_blocks = "".join(b.body for b in self.blocks if b.lang in SHELLS)
        prose = [s for s in self.spans if is_command(s) and s not in self.ran_inline and s not in in_blocks]
        return Page(self.name, self.items, visible, self.after, self.skip, list(dict.fromkeys(prose)))

    def markers(self) -> None:
        chunk = self.lines[self.at]
        while "-->" not in chunk and self.at + 1 < len(self.lines):
            self.at += 1
            chunk += self.lines[self.at]
        for found in MARKER.findall(chunk):
            marker = parse_marker(found, self.at + 1)
            if marker.kind == "after":
                self.after = marker.arg
            elif marker.kind == "skip-page":
                self.skip = marker.arg or "skipped"
            elif marker.kind in ("expect", "sh"):
                self.end_paragraph()
                self.items.append(marker)
            elif marker.kind == "inline":
                self.end_paragraph()
                self.inline_from = self.at + 1
            else:
                self.pending.append(marker)

    def block(self, indent: str, mark: str, lang: str) -> None:
        self.end_paragraph()
        start, body = self.at + 1, []
        self.at += 1
        while self.at < len(self.lines) and not closes(self.lines[self.at], mark):
            line = self.lines[self.at]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            self.at += 1
        if self.at == len(self.lines):
            raise PageError(f"{self.name}:{start}: a code block that never closes")
        block = Block(start, lang.lower(), "".join(body), self.pending, "")
        self.pending = []
        self.blocks.append(block)
        self.items.append(block)
        self.chunks.append("")

    def prose(self, line: str) -> None:
        visible = COMMENT.sub("", line)
        self.chunks[-1] += visible
        self.spans += SPAN.findall(visible)
        if visible.strip():
            self.paragraph.append(visible.strip())
        else:
            self.end_paragraph()

    def end_paragraph(self) -> None:
        if self.inline_from is not None and self.paragraph:
            commands = [s for s in SPAN.findall(" ".join(self.paragraph)) if is_command(s)]
            if not commands:
                raise PageError(f"{self.name}:{self.inline_from}: an inline marker before a paragraph "
                                "with no command to run")
            self.items.append(Inline(self.inline_from, commands))
            self.ran_inline += commands
            self.inline_from = None
        self.paragraph.clear()


def read_page(name: str, source: str | None = None) -> Page:
    return Reader(name, (ROOT / name).read_text() if source is None else source).read()


# --- what a page runs ------------------------------------------------------------------------

@dataclass
class Step:
    label: str
    script: str
    install: bool = False
    expect: list[str] = field(default_factory=list)
    output: str | None = None


@dataclass
class Plan:
    steps: list[Step]
    skipped: list[str]


def heredoc(path: str, body: str) -> str:
    end = "__JOURNEY_EOF__"
    if end in body:
        raise PageError(f"a block holds {end}")
    if not body.endswith("\n"):
        body += "\n"
    quoted = shlex.quote(path)
    return f'mkdir -p -- "$(dirname -- {quoted})" && cat > {quoted} <<\'{end}\'\n{body}{end}\n'


def serve(body: str, url: str) -> str:
    """The block in a job of its own (so it can be stopped with all it started), until `url`
    answers; a server that dies first fails the step."""
    poll = ("import sys, time, urllib.request\n"
            "for _ in range(600):\n"
            "    try:\n"
            f"        urllib.request.urlopen({url!r}, timeout=5).read(); sys.exit(0)\n"
            "    except Exception:\n"
            "        time.sleep(0.5)\n"
            "sys.exit(1)\n")
    return (f"set -m\n( {body.strip()}\n) &\n__serving=$!\nset +m\necho $__serving >>\"$__journey_groups\"\n"
            f"python3 -c {shlex.quote(poll)} &\n__polling=$!\n"
            "while kill -0 $__polling 2>/dev/null && kill -0 $__serving 2>/dev/null; do sleep 0.5; done\n"
            "if kill -0 $__serving 2>/dev/null && wait $__polling; then __served=0; else __served=1; fi\n"
            # Ctrl-C first, as a reader stops it; KILL after ten seconds, for a server started
            # with SIGINT ignored (a launcher's background job hands that down)
            "kill -INT -- -$__serving 2>/dev/null || true\n"
            "( sleep 10; kill -KILL -- -$__serving 2>/dev/null ) &\n__reaper=$!\n"
            "wait $__serving || true\nkill $__reaper 2>/dev/null || true\n"
            f"[ $__served = 0 ] || {{ echo 'journey: {url} never answered' >&2; false; }}\n")


class Planner:
    """Turns a page's items into the steps its shell runs, in order."""

    def __init__(self, page: Page, shared_install: bool):
        self.page, self.shared_install = page, shared_install
        self.steps: list[Step] = []
        self.skipped: list[str] = []
        self.script: list[Block] = []  # python blocks waiting to be run as one script

    def plan(self) -> Plan:
        for item in self.page.items:
            if isinstance(item, Marker):
                self.flush()
                self.marker(item)
            elif isinstance(item, Inline):
                self.flush()
                self.steps += [Step(f"{self.page.name}:{item.line} `{c}`", c + "\n") for c in item.commands]
            else:
                self.block(item)
        self.flush()
        return Plan(self.steps, self.skipped)

    def flush(self) -> None:
        if self.script:
            path = f".journey-{Path(self.page.name).stem.lower()}-{self.script[0].line}.py"
            lines = ", ".join(str(b.line) for b in self.script)
            body = "\n".join(b.body for b in self.script)
            self.steps.append(Step(f"{self.page.name}:{lines} python", heredoc(path, body) + f"python {path}\n"))
            self.script.clear()

    def marker(self, marker: Marker) -> None:
        where = f"{self.page.name}:{marker.line}"
        if marker.kind == "sh":
            self.steps.append(Step(f"{where} (in words) {marker.arg}", marker.arg + "\n"))
            return
        if not self.steps:
            raise PageError(f"{where}: a figure to expect before anything ran")
        figures = re.findall(r'"([^"]+)"', marker.arg)
        if not figures:
            raise PageError(f"{where}: expect names no figure (write them in double quotes)")
        for figure in figures:
            if normalise(figure) not in self.page.text:
                raise PageError(f"{where}: the figure {figure!r} is not in the page's text")
        self.steps[-1].expect += figures

    def block(self, block: Block) -> None:
        where = f"{self.page.name}:{block.line}"
        stray = [m.kind for m in block.markers if m.kind not in ("file", "serve", "install", "new-shell", "output",
                                                                  "skip")]
        if stray:
            raise PageError(f"{where}: marker {stray[0]!r} does not apply to a block")
        if (skip := block.has("skip")) is not None:
            if not SKIP_NOTICE.search(block.around):
                raise PageError(f"{where}: a skipped block whose page does not tell the reader "
                                "(say 'CI does not run …' beside it)")
            self.skipped.append(f"{where} {block.lang or 'text'}: {skip.arg or 'skipped'}")
        elif block.lang == "python" and not block.has("file"):
            self.script.append(block)
        elif block.lang == "" and not block.has("file"):
            if block.has("output"):
                self.flush()
                if not self.steps:
                    raise PageError(f"{where}: an output before anything ran")
                self.steps[-1].output = block.body
        else:
            self.flush()
            self.run(block, where)

    def run(self, block: Block, where: str) -> None:
        if (file := block.has("file")) is not None:
            self.steps.append(Step(f"{where} save as {file.arg}", heredoc(file.arg, block.body)))
        elif (url := block.has("serve")) is not None:
            self.steps.append(Step(f"{where} {block.lang} (serve {url.arg})", serve(block.body, url.arg)))
        elif block.lang not in SHELLS:
            raise PageError(f"{where}: a ```{block.lang} block with no journey marker: "
                            "mark it <!-- journey: file PATH --> or <!-- journey: skip … -->")
        elif block.has("install") and self.shared_install:
            self.skipped.append(f"{where} {block.lang}: install (the venv of the same recipe, shared)")
        else:
            self.steps.append(Step(f"{where} {block.lang}", block.body, install=block.has("install") is not None))


def plan(page: Page, shared_install: bool = False) -> Plan:
    """The steps of `page`, in order. With `shared_install` its install blocks are not run:
    the venv they make is already there, shared with the first page of the same recipe."""
    return Planner(page, shared_install).plan()


# --- comparing figures -----------------------------------------------------------------------

def figure_pattern(figure: str) -> tuple[re.Pattern[str], list[str]]:
    """A pattern finding `figure` in an output with any numbers in its places (checked
    afterwards), and the figure's own numbers."""
    parts = NUMBER.split(normalise(figure))
    numbers = NUMBER.findall(normalise(figure))
    literal = [r"\s*".join(re.escape(word) for word in part.split(" ")) for part in parts]
    pattern = literal[0]
    for rest in literal[1:]:
        pattern += f"({NUMBER.pattern})" + rest
    return re.compile(pattern, re.I), numbers


def same_at_precision(shown: str, printed: str) -> bool:
    """`printed` rounds to `shown` at the page's precision: within half its last digit."""
    page, out = Decimal(shown), Decimal(printed)
    unit = Decimal(1).scaleb(page.as_tuple().exponent)  # type: ignore[arg-type]
    return abs(page - out) <= unit / 2


def figure_found(figure: str, output: str) -> bool:
    pattern, numbers = figure_pattern(figure)
    for found in pattern.finditer(normalise(output)):
        if all(same_at_precision(n, p) for n, p in zip(numbers, found.groups())):
            return True
    return False


def output_found(quoted: str, output: str) -> bool:
    """Every line of `quoted`, in order and together, among the printed lines (whitespace aside)."""
    want = [" ".join(line.split()) for line in quoted.splitlines() if line.strip()]
    have = [" ".join(line.split()) for line in output.splitlines() if line.strip()]
    return any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


# --- running a journey -----------------------------------------------------------------------

def source_copy(target: Path) -> Path:
    """The repository's tracked files (no venv, no logs), as a reader's clone."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():
            dest = target / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest)
    return target


def fresh_environment() -> dict[str, str]:
    """A new shell's environment: no venv active, none of naparena's own settings."""
    venv = os.environ.get("VIRTUAL_ENV")
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (venv and p.startswith(venv)) and "/.venv/" not in p + "/"]
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP") and not k.startswith("NAPARENA_")}
    env.update(PATH=os.pathsep.join(path), COLUMNS=COLUMNS, PYTHONDONTWRITEBYTECODE="1")
    return env


@dataclass
class Journey:
    page: Page
    root: Page          # whose install makes the venv
    mode: str           # "own": runs its install; "shared": links root's venv; "private": runs root's install
    steps: list[Step] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    installed: threading.Event = field(default_factory=threading.Event)
    folder: Path | None = None
    failed: str | None = None
    ran: int = 0
    figures: int = 0
    seconds: float = 0.0
    times: list[tuple[str, float]] = field(default_factory=list)


def journeys(pages: list[Page]) -> list[Journey]:
    by_name = {p.name: p for p in pages}
    recipes: dict[str, Page] = {}
    out: list[Journey] = []
    for page in pages:
        if page.skip is not None:
            out.append(Journey(page, page, "not run", skipped=[f"{page.name}: the whole page: {page.skip}"]))
            continue
        if page.installs():
            recipe = "".join(b.body for b in page.installs())
            first = recipes.setdefault(recipe, page)
            mode = "own" if first is page else "shared"
            root = first
        else:
            after = page.after or DEFAULT_AFTER
            if after not in by_name:
                raise PageError(f"{page.name}: follows {after}, which is not among the pages run")
            root, seen = by_name[after], {page.name}
            while not root.installs():
                if root.name in seen or (root.after or DEFAULT_AFTER) not in by_name:
                    raise PageError(f"{page.name}: no page it follows has an install block")
                seen.add(root.name)
                root = by_name[root.after or DEFAULT_AFTER]
            root = recipes.get("".join(b.body for b in root.installs()), root)
            mode = "private" if page.installs_into_its_venv() else "shared"
        journey = Journey(page, root, mode)
        own = plan(page, shared_install=mode == "shared" and bool(page.installs()))
        prelude: list[Step] = []
        if mode == "private":
            prelude = [Step(f"{s.label} (a venv of its own, by {root.name}'s recipe)", s.script, install=True)
                       for s in plan(root).steps if s.install]
        elif mode == "shared" and page is not root:
            prelude = [Step(f"{root.name}:{b.line} new shell", b.body) for b in root.new_shell()]
        if not own.steps:
            journey.mode = "not run"
            own.skipped.append(f"{page.name}: no block or marked command to run")
            prelude = []
        journey.steps, journey.skipped = prelude + own.steps, own.skipped
        out.append(journey)
    return out


def page_script(steps: list[Step], logs: Path) -> str:
    """One bash script for a page: each step's output to its own file, a line on stdout at
    each step's start and end (its number, then its exit status)."""
    out = ["set -eo pipefail", f"__journey_groups={shlex.quote(str(logs / 'groups'))}"]
    for n, step in enumerate(steps):
        out.append(f"printf '@@journey start {n}\\n'")
        out.append(f"{{\n{step.script.rstrip()}\n}} >{shlex.quote(str(logs / f'{n}.out'))} 2>&1 </dev/null")
        out.append(f"printf '@@journey end {n} %s\\n' \"$?\"")
    return "\n".join(out) + "\n"


def prepare(journey: Journey, work: Path, by_root: dict[str, Journey]) -> tuple[Path, Path]:
    """The journey's clone (a folder named naparena, alone in a folder of its own, as `cd ..`
    finds it), its shared venv linked in, and a folder beside it for the steps' output."""
    folder = work / re.sub(r"[^\w.-]", "_", journey.page.name) / "naparena"
    journey.folder = folder
    logs = folder.parent / "journey-logs"
    logs.mkdir(parents=True)
    source_copy(folder)
    if journey.mode == "shared" and journey.page is not journey.root:
        root = by_root[journey.root.name]
        assert root.folder is not None
        (folder / ".venv").symlink_to(root.folder / ".venv", target_is_directory=True)
    return folder, logs


def kill(process: subprocess.Popen[str], logs: Path) -> None:
    """The page's shell and all it left running (a cluster in its group, a server in the
    group of its own that its step wrote down)."""
    groups = (logs / "groups").read_text().split() if (logs / "groups").exists() else []
    for group in [process.pid, *map(int, groups)]:
        try:
            os.killpg(group, 9)
        except ProcessLookupError:
            pass


def follow(journey: Journey, process: subprocess.Popen[str], logs: Path, lock: threading.Lock) -> int:
    """Reads the page's progress lines, checks each finished step; the step last started."""
    current, step_start = -1, time.monotonic()
    assert process.stdout is not None
    for line in process.stdout:
        if not line.startswith("@@journey "):
            continue
        _, what, number, *status = line.split()
        if what == "start":
            current, step_start = int(number), time.monotonic()
            continue
        step = journey.steps[current]
        took = time.monotonic() - step_start
        journey.times.append((step.label, took))
        if status[0] != "0":
            journey.failed = f"{step.label}: exit status {status[0]}"
            break
        problem = check(step, (logs / f"{current}.out").read_text(errors="replace"))
        if problem:
            journey.failed = f"{step.label}: {problem}"
            break
        journey.ran += 1
        journey.figures += len(step.expect) + (step.output is not None)
        with lock:
            print(f"  ok {took:6.1f} s  {step.label}", flush=True)
        if step.install:
            journey.installed.set()
    return current


def run(journey: Journey, work: Path, lock: threading.Lock, by_root: dict[str, Journey]) -> None:
    started = time.monotonic()
    folder, logs = prepare(journey, work, by_root)
    script = logs / "page.sh"
    script.write_text(page_script(journey.steps, logs))
    process = subprocess.Popen(["bash", "--noprofile", "--norc", str(script)], cwd=folder, env=fresh_environment(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    LIVE[process] = logs
    timer = threading.Timer(PAGE_TIMEOUT, kill, (process, logs))
    timer.start()
    try:
        current = follow(journey, process, logs, lock)
    finally:
        timer.cancel()
        kill(process, logs)
        process.wait()
        LIVE.pop(process, None)
    if journey.failed is None and journey.ran < len(journey.steps):
        code = process.returncode
        journey.failed = (f"{journey.steps[current].label if current >= 0 else journey.page.name}: "
                          + ("timed out" if code == -9 else f"exit status {code}"))
    if journey.failed and "printed" not in journey.failed and (logs / f"{current}.out").exists():
        journey.failed += "\n" + (logs / f"{current}.out").read_text(errors="replace")[-3000:]
    journey.seconds = time.monotonic() - started
    journey.installed.set()  # whoever waits on this venv finds out either way


def check(step: Step, printed: str) -> str | None:
    for figure in step.expect:
        if not figure_found(figure, printed):
            return f"the page's figure {figure!r} is not what it printed:\n{printed[-3000:]}"
    if step.output is not None and not output_found(step.output, printed):
        return f"the page's quoted output is not what it printed:\n{printed[-4000:]}"
    return None


def select(names: list[str]) -> list[Page]:
    listed: list[str] = []
    for pattern in PAGES:
        listed += sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(pattern))
    marked = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")
                    if "journey:" in p.read_text() and str(p.relative_to(ROOT)) not in listed)
    pages = [read_page(n) for n in listed + marked]
    if names:
        wanted = {str(Path(n)) for n in names}
        needed = set(wanted)
        for page in pages:  # a chosen page brings the pages whose install it follows
            if page.name in wanted and not page.installs():
                needed.add(page.after or DEFAULT_AFTER)
        pages = [p for p in pages if p.name in needed]
    return pages


def show(plans: list[Journey]) -> None:
    """What each page would run (--list)."""
    for j in plans:
        print(f"{j.page.name} ({j.mode}, venv by {j.root.name})")
        for step in j.steps:
            print(f"  run   {step.label}" + (f"  expect {step.expect}" if step.expect else "")
                  + ("  + quoted output" if step.output else ""))
        for s in j.skipped:
            print(f"  skip  {s}")
        for command in j.page.prose_commands:
            print(f"  prose `{command}` (not run)")


def run_all(plans: list[Journey], work: Path, jobs: int) -> None:
    """Every journey, `jobs` at a time; a page on a shared venv starts once that venv is made."""
    lock, slots = threading.Lock(), threading.Semaphore(max(1, jobs))
    by_root = {j.page.name: j for j in plans}

    def go(journey: Journey) -> None:
        if journey.mode == "shared" and journey.page is not journey.root:
            root = by_root[journey.root.name]
            root.installed.wait()
            if root.failed and not any(s.install for s in root.steps[:root.ran]):
                journey.failed = f"its venv was not made: {journey.root.name} failed"
                journey.installed.set()
                return
        with slots:
            if STOP.is_set():
                return
            with lock:
                print(f"== {journey.page.name} ({journey.mode}, venv by {journey.root.name})", flush=True)
            try:
                run(journey, work, lock, by_root)
            except Exception as e:  # a journey that cannot start says why; the others go on
                journey.failed = f"{type(e).__name__}: {e}"
                journey.installed.set()
            with lock:
                print(f"== {journey.page.name} {'FAILED' if journey.failed else 'passed'} in {journey.seconds:.0f} s",
                      flush=True)

    first = {"own": 0, "private": 1, "shared": 2}
    runnable = sorted((j for j in plans if j.mode in first), key=lambda j: first[j.mode])
    threads = [threading.Thread(target=go, args=(j,), name=j.page.name, daemon=True) for j in runnable]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    finally:  # Ctrl-C or SIGTERM: no page starts, and those running stop with all they started
        STOP.set()
        for process, logs in list(LIVE.items()):
            kill(process, logs)


def summary(plans: list[Journey], seconds: float, jobs: int) -> None:
    print(f"\n{'page':40} {'venv':22} {'run':>4} {'skip':>4} {'figs':>4} {'time':>7}  (prose: naparena commands "
          "written in the text, not marked to run)")
    for j in plans:
        venv = j.mode if j.mode == "own" else f"{j.mode} ({Path(j.root.name).stem})"
        print(f"{j.page.name:40} {venv:22} {j.ran:4d} {len(j.skipped):4d} {j.figures:4d} {j.seconds:6.0f}s"
              + f"  prose {len(j.page.prose_commands)}" + ("  FAILED" if j.failed else ""))
        for s in j.skipped:
            print(f"    not run: {s}")
    print(f"{len(plans)} pages, {sum(j.ran for j in plans)} steps run, "
          f"{sum(len(j.skipped) for j in plans)} blocks not run, {sum(j.figures for j in plans)} figures compared, "
          f"{seconds:.0f} s with {jobs} at a time")


def interrupted(signum: int, frame: object) -> None:
    """SIGTERM stops the run as Ctrl-C does (SIGINT itself is ignored in a background job)."""
    raise KeyboardInterrupt


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("pages", nargs="*", help="run only these pages (and the pages they follow)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="journeys at a time")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders, and say where")
    parser.add_argument("--list", action="store_true", help="print each page's steps and run nothing")
    args = parser.parse_args()
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started in the background (as .ci/run starts it), Ctrl-C is ignored, and every
        # command run would inherit that: a reader's Ctrl-C must reach them as it would.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        plans = journeys(select(args.pages))
    except PageError as e:
        print(f"journeys: {e}", file=sys.stderr)
        return 1
    if args.list:
        show(plans)
        return 0
    work = Path(tempfile.mkdtemp(prefix="journeys-"))
    started = time.monotonic()
    signal.signal(signal.SIGTERM, interrupted)
    try:
        run_all(plans, work, args.jobs)
    except KeyboardInterrupt:
        print(f"journeys: interrupted; every page's shell stopped; scratch folders: {work}", file=sys.stderr)
        return 130
    summary(plans, time.monotonic() - started, args.jobs)
    failed = [j for j in plans if j.failed]
    for j in failed:
        print(f"\nFAILED {j.page.name}: {j.failed}", file=sys.stderr)
    if args.keep or failed:
        print(f"scratch folders: {work}", file=sys.stderr)
    else:  # in the background: tens of thousands of files, a minute on a loaded disk, no result
        subprocess.Popen(["rm", "-rf", "--", str(work)], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
