"""The test house: test modules share code through plain modules (`helpers`, `drop_ins`,
`deals`, `misbehaving`) and the fixtures of `conftest.py`, never by importing each other.

A test module imported by another drags its module's state along and ties two files
together that should change alone; a conftest imported as a module runs twice.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TEST_MODULES = sorted(TESTS.glob("test_*.py")) + [TESTS / "conftest.py"]
PLAIN_MODULES = sorted(p for p in TESTS.glob("*.py") if p not in TEST_MODULES and p.name != "__init__.py")


def imported(source: str) -> set[str]:
    """Every module an import in `source` may load, relative ones read inside `tests`:
    `from tests import test_x` and `from . import test_x` name `tests.test_x`."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(filter(None, ["tests" if node.level else "", node.module or ""]))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def imports_of_test_modules(source: str) -> list[str]:
    """The test modules and conftests that `source` imports."""
    return sorted(n for n in imported(source) if n.rsplit(".", 1)[-1].startswith("test_")
                  or n.rsplit(".", 1)[-1] == "conftest")


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda p: p.name)
def test_no_test_module_imports_another(path):
    assert imports_of_test_modules(path.read_text()) == [], (
        f"{path.name} imports a test module: move what they share to tests/helpers.py or a fixture in conftest.py")


@pytest.mark.parametrize("line, found", [
    ("from tests.test_runner import naparena", ["tests.test_runner"]),
    ("from .test_cli import invoke", ["tests.test_cli"]),
    ("import tests.test_seats", ["tests.test_seats"]),
    ("import tests.test_seats as seats", ["tests.test_seats"]),
    ("from tests import test_misbehaviour", ["tests.test_misbehaviour"]),
    ("from . import test_cli", ["tests.test_cli"]),
    ("import test_cli", ["test_cli"]),
    ("from tests.conftest import isolated", ["tests.conftest"]),
    ("def f():\n    from tests.test_runner import snapshot\n", ["tests.test_runner"]),
    ("from tests.helpers import invoke", []),
    ("from .deals import make_hand", []),
    ("from naparena.testing import view", []),
    ("import pytest", []),
])
def test_the_house_rule_sees_every_way_of_importing_a_test_module(line, found):
    assert imports_of_test_modules(line) == found


@pytest.mark.parametrize("path", PLAIN_MODULES, ids=lambda p: p.name)
def test_plain_modules_hold_no_tests(path):
    # pytest collects only test_*.py: a test written here would never run.
    tree = ast.parse(path.read_text())
    tests = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))
             and (node.name.startswith("test_") or node.name.startswith("Test"))]
    assert tests == []


def test_the_plain_modules_are_found():
    assert {"helpers.py", "drop_ins.py", "deals.py", "misbehaving.py"} <= {p.name for p in PLAIN_MODULES}


def test_the_caller_s_terminal_width_does_not_reach_the_tests():
    # pytest-xdist's workers have COLUMNS=80, a person's shell may have any width: the
    # command line's tables (which tests read row by row) would wrap differently.
    assert "COLUMNS" not in os.environ and "LINES" not in os.environ
