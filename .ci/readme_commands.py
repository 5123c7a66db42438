#!/usr/bin/env python3
"""CI: run the documented commands, as a reader would, each in a brand-new virtual
environment: README.md's quickstart set-up command, the example bots' commands (examples/c
and examples/js, as their READMEs say, under the default seat sandbox), then the bot
package of the first-bot tutorial (its module, pyproject.toml and install commands) and
its bot tests against it.

The commands are read from the pages, not copied here, so the pages cannot drift.
Run from anywhere: `python3 .ci/readme_commands.py`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


README = "README.md"
TUTORIAL = "docs/tutorials/first-bot.md"  # where the bot package is written and installed


def blocks(lang: str, containing: str, page: str = TUTORIAL) -> str:
    found = [body for kind, body in BLOCK.findall((ROOT / page).read_text())
             if kind == lang and containing in body]
    if len(found) != 1:
        sys.exit(f"{page}: expected one ```{lang} block containing {containing!r}, found {len(found)}")
    return found[0]


def sh(script: str, cwd: Path, path: Path | None = None) -> None:
    """Each line of `script` in bash, in `cwd`; `path` (a venv's bin) first on PATH."""
    env = {**os.environ, "PATH": f"{path}{os.pathsep}{os.environ['PATH']}"} if path else None
    for line in script.strip().splitlines():
        print(f"$ {line}", flush=True)
        subprocess.run(["bash", "-euo", "pipefail", "-c", line], cwd=cwd, check=True, env=env)


def source_copy(target: Path) -> Path:
    """The repository's tracked files (no venv, no logs), as a reader's checkout."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        dest = target / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, dest)
    return target


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        checkout = source_copy(work / "naparena")
        print("== the quickstart set-up command", flush=True)
        sh(blocks("sh", "tournaments/quickstart.toml", README), checkout)

        print("== the example bots, as their READMEs say (the default seat sandbox)", flush=True)
        for lang in ("c", "js"):
            page = f"examples/{lang}/README.md"
            sh(blocks("sh", "naparena run", page), checkout, path=checkout / ".venv" / "bin")
        shutil.rmtree(checkout / ".venv")

        print("== the bot package", flush=True)
        package = work / "highcard-bot"
        package.mkdir()
        (package / "pyproject.toml").write_text(blocks("toml", 'name = "highcard-bot"'))
        (package / "highcard_bot.py").write_text(blocks("python", "class HighCard(Bot)"))
        sh(blocks("sh", "./highcard-bot"), work)
        listed = subprocess.run([str(work / ".venv/bin/naparena"), "bots", "--json"], cwd=work,
                                capture_output=True, text=True, check=True).stdout
        if '"highcard-bot 1.0.0"' not in listed:
            sys.exit("naparena bots does not list highcard from its package:\n" + listed)

        print("== the tutorial's bot tests", flush=True)
        # The tutorial's test imports the drop-in file; in the package the module is highcard_bot.
        test = blocks("python", "from naparena.testing import").replace("from bots.highcard import",
                                                                         "from highcard_bot import")
        (package / "test_highcard.py").write_text(test)
        sh(".venv/bin/pip install --quiet pytest && .venv/bin/python -m pytest -q highcard-bot", work)


if __name__ == "__main__":
    main()
