"""MkDocs hook: the build stops when a checked-in generated page is out of date (rewrite
them with `naparena docs`). Every generated page is committed, so its links work on a code
host as in the site."""

from __future__ import annotations

from pathlib import Path

import typer

from naparena.cli import api_modules, app
from naparena.tools import docs, reference


def on_pre_build(config) -> None:
    root = Path(config["docs_dir"]).parent
    wanted = {f"docs/{name}": text
              for name, text in reference.pages(typer.main.get_command(app), api_modules()).items()}
    wanted |= {"docs/VARIANTS.md": docs.variants_markdown(), "docs/RULES.md": docs.rules_markdown(),
               "docs/BOTS.md": docs.bots_markdown()}
    stale = [name for name, text in wanted.items() if (root / name).read_text() != text]
    if stale:
        raise SystemExit(f"generated pages out of date: {', '.join(stale)}; run `naparena docs`")
