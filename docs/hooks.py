"""MkDocs hooks: the build stops when a checked-in generated page is out of date (rewrite
them with `naparena docs`), and it makes the Python API page itself from the package's
public names, which only code outside the package's layers may import."""

from __future__ import annotations

from pathlib import Path

import typer
from mkdocs.structure.files import File

import naparena
from naparena import api, testing
from naparena.cli import app
from naparena.game import cards
from naparena.tools import docs, reference

API_PAGE = "reference/api.md"
API_MODULES = (("naparena", naparena), ("naparena.cards", cards), ("naparena.testing", testing),
               ("naparena.api", api))


def on_pre_build(config) -> None:
    root = Path(config["docs_dir"]).parent
    wanted = {f"docs/{name}": text for name, text in reference.pages(typer.main.get_command(app)).items()}
    wanted |= {"docs/VARIANTS.md": docs.variants_markdown(), "docs/RULES.md": docs.rules_markdown(),
               "docs/BOTS.md": docs.bots_markdown()}
    stale = [name for name, text in wanted.items() if (root / name).read_text() != text]
    if stale:
        raise SystemExit(f"generated pages out of date: {', '.join(stale)}; run `naparena docs`")


def on_files(files, config):
    files.append(File.generated(config, API_PAGE, content=reference.api_markdown(API_MODULES)))
    return files
