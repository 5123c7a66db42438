"""The layering of docs/ARCHITECTURE.md, enforced: every import in the package is read
(top-level and inside functions alike) and checked against the one-way flow, between
the package's folders and between the parts of arena/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "naparena"

# What each part of the package may import from naparena. The flow is one way:
# game → bots → table → arena → report → tools → cli; stats is pure numbers beside it,
# used by the arena (sequential tests, standings) and the report.
ALLOWED = {
    "_version": set(),
    "errors": set(),
    "game": {"errors"},
    "bots": {"errors", "_version", "game"},
    "stats": {"errors"},
    # The one table every entry point plays a hand at: seats, hooks, supervision, both loops.
    "table": {"errors", "_version", "game", "bots"},
    "arena": {"errors", "_version", "game", "bots", "table", "stats"},
    "report": {"errors", "_version", "game", "bots", "table", "stats", "arena"},
    "tools": {"errors", "_version", "game", "bots", "table", "stats", "arena", "report"},
    # People-facing pieces: the human seat and its fronts, the live page; beside tools.
    "people": {"errors", "_version", "game", "bots", "table", "stats", "arena", "report"},
    # (and `testing`, only to hand its names to the Python API page that `naparena docs` writes)
    "cli": {"errors", "_version", "game", "bots", "table", "stats", "arena", "report", "tools", "people", "api",
            "testing"},
    # Running tournaments from Python, for researchers: the stable names over the arena,
    # which the CLI calls too.
    "api": {"errors", "_version", "game", "bots", "table", "stats", "arena"},
    "__main__": {"cli"},
    # Helpers for bot authors' own tests: build views, play hands in-process (at the table).
    "testing": {"errors", "_version", "game", "bots", "table"},
    # The public surface re-exports from the layers below it: for bot authors, and (loaded
    # on first use, so a bot's import stays light) the researchers' `api`.
    "__init__": {"_version", "game", "bots", "api"},
    # Faces for learners (PettingZoo, Gymnasium, OpenSpiel) and policies as bots: they wrap
    # the engine and play the arena's bots and seat processes; nothing imports them back.
    "envs": {"errors", "_version", "game", "bots", "table", "arena"},
}
# Modules that may import the package root: itself, and the CLI, whose hidden `docs`
# command hands the root's names to the Python API page it writes.
ROOT_READERS = {"naparena", "naparena.cli"}
# Third-party packages only naparena.envs may import: they come with the envs and
# openspiel extras, so the rest of naparena must run without them.
LEARNING = {"numpy", "pettingzoo", "gymnasium", "pyspiel", "open_spiel"}
# Third-party packages that belong to presentation only.
PRESENTATION = {"rich", "typer", "click"}
PRESENTATION_MODULES = {"naparena.cli", "naparena.report.tables", "naparena.report.fit"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, absolute module) for every import statement in the file of `module`."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from naparena.game import cards` imports the module naparena.game.cards.
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names
                      if (PACKAGE.parent / f"{base}.{alias.name}".replace(".", "/")).with_suffix(".py").exists()
                      or (PACKAGE.parent / f"{base}.{alias.name}".replace(".", "/")).is_dir()]
    return found


def part(module: str) -> str:
    """The layer a naparena module belongs to: its subpackage, or the top-level module."""
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def sources() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def internal_graph() -> dict[str, set[str]]:
    known = sources()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, path in known.items():
        for _, target in imports(path, module):
            if target in known and target != module:
                graph[module].add(target)
    return graph


def test_the_package_has_a_folder_per_layer():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {"game", "bots", "stats", "arena", "report", "tools"} <= folders
    loose = {p.stem for p in PACKAGE.glob("*.py")}
    # testing: for bot authors; api: for researchers
    assert loose == {"__init__", "__main__", "_version", "errors", "cli", "testing", "api"}


def violations(module: str, path: Path) -> list[str]:
    layer = part(module)
    if layer not in ALLOWED:
        return [f"no layer rule for {layer!r}; add it to ALLOWED"]
    wrong = []
    for line, target in imports(path, module):
        top = target.split(".")[0]
        if top == "naparena":
            if target == "naparena" and module not in ROOT_READERS:
                wrong.append(f"line {line}: imports the package root (only bot authors should)")
            elif target != "naparena" and part(target) != layer and part(target) not in ALLOWED[layer]:
                wrong.append(f"line {line}: {layer} must not import {target}")
        elif top in PRESENTATION and module not in PRESENTATION_MODULES:
            wrong.append(f"line {line}: only the CLI and the report's tables may import {top}")
        elif top in LEARNING and layer != "envs":
            wrong.append(f"line {line}: only naparena.envs may import {top} (an optional extra)")
    return wrong


@pytest.mark.parametrize("module", sorted(sources()))
def test_every_import_runs_with_the_flow(module):
    path = sources()[module]
    wrong = violations(module, path)
    assert not wrong, f"{path.relative_to(PACKAGE.parent)}: " + "; ".join(wrong)


def test_no_import_circle_between_modules():
    graph = internal_graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            pytest.fail("import circle: " + " → ".join(cycle))


def test_nothing_imports_the_learning_environments():
    for layer, allowed in ALLOWED.items():
        assert "envs" not in allowed, f"{layer} may not import naparena.envs: it needs an extra"


def test_the_checker_sees_a_learning_import_outside_envs(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("def f():\n    import numpy\n    from naparena.envs import encoding\n")
    assert violations("naparena.arena.sneaky", sneaky) == [
        "line 2: only naparena.envs may import numpy (an optional extra)",
        "line 3: arena must not import naparena.envs",
        "line 3: arena must not import naparena.envs.encoding"]
    assert violations("naparena.envs.sneaky", sneaky) == []


def test_no_circle_between_layers():
    # The per-module check above already forbids it; this says it at the level a reader
    # thinks in, so a change to ALLOWED cannot quietly make two layers depend on each other.
    for layer, allowed in ALLOWED.items():
        for other in allowed:
            assert layer not in ALLOWED.get(other, set()), f"{layer} and {other} import each other"


def test_the_checker_sees_a_backward_import(tmp_path):
    # A rule that can never fail protects nothing: a game module importing the arena
    # (even lazily, inside a function), or rich, must be reported.
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("import rich\n\ndef f():\n    from naparena.arena.session import Session\n")
    wrong = violations("naparena.game.sneaky", sneaky)
    assert wrong == ["line 1: only the CLI and the report's tables may import rich",
                     "line 4: game must not import naparena.arena.session"]


# Inside arena/ the flow is one way too, by job: the tournament file and its settings →
# what a run leaves on disk → playing one match → where matches run → the run itself.
# Each part imports only the parts before it.
ARENA_ALLOWED = {
    "setup": set(),
    "records": {"setup"},
    "match": {"setup", "records"},
    "executors": {"setup", "records", "match"},
    # The worker's entry point: plays a Job; knows nothing of the session that sent it.
    "worker": {"setup", "records", "match"},
    # The dispatch and crash policy: sends jobs to an executor, books outcomes in order.
    "dispatch": {"setup", "records", "match", "executors", "worker"},
    "session": {"setup", "records", "match", "executors", "worker", "dispatch"},
    "rerun": {"setup", "records", "match", "executors", "worker", "dispatch", "session"},
}
# What the file and settings layer must never touch: processes, signals, threads.
PLUMBING = {"subprocess", "multiprocessing", "signal", "threading", "concurrent", "resource",
            "select", "selectors", "socket", "ctypes", "asyncio", "pty", "fcntl"}
OS_PLUMBING = ("fork", "exec", "spawn", "posix_spawn", "kill", "wait", "_exit", "popen",
               "system", "setsid", "setpgid", "pipe", "register_at_fork", "nice")


def arena_part(module: str) -> str | None:
    """The part of arena/ a module belongs to (a subpackage, or `session`); None outside it
    and for the arena package itself."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "arena" else None


def arena_violations(module: str, path: Path) -> list[str]:
    own = arena_part(module)
    if own is None:
        return []
    if own not in ARENA_ALLOWED:
        return [f"no rule for arena part {own!r}; add it to ARENA_ALLOWED"]
    wrong = []
    for line, target in imports(path, module):
        other = arena_part(target)
        if other is not None and other != own and other not in ARENA_ALLOWED[own]:
            wrong.append(f"line {line}: arena.{own} must not import {target}")
    return wrong


def plumbing(module: str, path: Path) -> list[str]:
    """Process plumbing in a module: the modules in PLUMBING, the arena's match and
    executors, and os's process calls (os.fork, os.kill, …; os.path is fine)."""
    wrong = []
    for line, target in imports(path, module):
        if target.split(".")[0] in PLUMBING or arena_part(target) in ("match", "executors", "session"):
            wrong.append(f"line {line}: imports {target}")
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
                and node.attr.startswith(OS_PLUMBING)):
            wrong.append(f"line {node.lineno}: calls os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            wrong += [f"line {node.lineno}: imports os.{a.name}" for a in node.names if a.name.startswith(OS_PLUMBING)]
    return wrong


def arena_modules(part_name: str | None = None) -> list[str]:
    return sorted(m for m in sources() if arena_part(m) is not None
                  and (part_name is None or arena_part(m) == part_name))


def test_every_part_of_the_arena_has_a_rule():
    assert {arena_part(m) for m in arena_modules()} == set(ARENA_ALLOWED)
    assert not [p.name for p in (PACKAGE / "arena").glob("*.py")
                if p.stem not in ("__init__", *ARENA_ALLOWED)], "a loose module in arena/: give it a part"


@pytest.mark.parametrize("module", arena_modules())
def test_every_import_inside_the_arena_runs_with_the_flow(module):
    path = sources()[module]
    wrong = arena_violations(module, path)
    assert not wrong, f"{path.relative_to(PACKAGE.parent)}: " + "; ".join(wrong)


def test_no_circle_between_arena_parts():
    for part_name, allowed in ARENA_ALLOWED.items():
        for other in allowed:
            assert part_name not in ARENA_ALLOWED[other], f"arena.{part_name} and arena.{other} import each other"


@pytest.mark.parametrize("module", arena_modules("setup"))
def test_the_tournament_file_layer_has_no_process_plumbing(module):
    path = sources()[module]
    wrong = plumbing(module, path)
    assert not wrong, f"{path.relative_to(PACKAGE.parent)}: " + "; ".join(wrong)


def test_the_arena_checkers_see_a_backward_import_and_plumbing(tmp_path):
    # The reader importing the executors (lazily), or a setting that forks: both reported.
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("import os\nimport signal\n\ndef f():\n"
                      "    from naparena.arena.executors.pool import ForkPool\n"
                      "    from naparena.arena.records.logs import FORMAT\n"
                      "    return os.fork(), os.path.join('a', 'b')\n")
    assert arena_violations("naparena.arena.setup.sneaky", sneaky) == [
        "line 5: arena.setup must not import naparena.arena.executors.pool",
        "line 6: arena.setup must not import naparena.arena.records.logs"]
    assert plumbing("naparena.arena.setup.sneaky", sneaky) == [
        "line 2: imports signal", "line 5: imports naparena.arena.executors.pool", "line 7: calls os.fork"]
    # The same import is fine from the session, the last part.
    assert arena_violations("naparena.arena.session", sneaky) == []


def test_bot_authors_surface():
    import naparena

    for name in ("Bot", "View", "hookimpl", "cards", "__version__"):
        assert hasattr(naparena, name), name
    assert naparena.cards.name(naparena.cards.parse("10H")) == "10H"


# --- each default written once ----------------------------------------------------------

# The decision time-out's default is written in one place, the lowest layer that needs it
# (bots/bot.py: a bot never told its time-out assumes it); everything else reads it from
# there, through the tournament file's settings.
TIMEOUT_DEFAULT_HOME = PACKAGE / "bots" / "bot.py"


def timeout_literals(text: str) -> list[int]:
    """Lines that write the time-out's default (1.0) as a literal next to the word."""
    number = re.compile(r"(?<![\w.])1\.0*(?![\w.])")
    return [n for n, line in enumerate(text.splitlines(), 1)
            if "timeout" in line.lower() and number.search(line.split("#", 1)[0])]


def test_the_checker_sees_a_timeout_default_written_again():
    assert timeout_literals('timeout: float = typer.Option(1.0, "--timeout")\nx = 1.05\n') == [1]
    assert timeout_literals("def f(timeout=1.):\n    timeout = 10  # not 1.0\nt.join(timeout=1)\n") == [1]


def test_the_timeout_default_is_written_once():
    assert len(timeout_literals(TIMEOUT_DEFAULT_HOME.read_text())) == 1, "the default lives here, once"
    again = {str(p.relative_to(PACKAGE)): timeout_literals(p.read_text()) for p in sorted(PACKAGE.rglob("*.py"))
             if p != TIMEOUT_DEFAULT_HOME}
    assert {k: v for k, v in again.items() if v} == {}


# --- types without the learning extras -------------------------------------------------------

def subclasses_of_extras(path: Path) -> list[str]:
    """Classes in `path` whose base is a name imported from a learning extra (Any without it)."""
    tree = ast.parse(path.read_text())
    from_extras: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            from_extras |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in LEARNING}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LEARNING:
            from_extras |= {a.asname or a.name for a in node.names}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                root = base
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in from_extras:
                    out.append(node.name)
    return out


def test_every_class_of_an_extras_type_may_subclass_any():
    """Without the extras (pip install -e '.[test,dask]') their classes are Any, and mypy's
    disallow_subclassing_any refuses a subclass of them: every module that has one must be
    in pyproject.toml's override (naparena/envs/single.py was not; CI runs mypy there too)."""
    import tomllib
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    relaxed = {m for o in config["tool"]["mypy"]["overrides"] if o.get("disallow_subclassing_any") is False
               for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])}
    subclassing = {module_name(p) for p in sorted(PACKAGE.rglob("*.py")) if subclasses_of_extras(p)}
    assert "naparena.envs.single" in subclassing  # the checker sees the case that was missed
    assert subclassing <= relaxed, sorted(subclassing - relaxed)
