"""The docs that are generated from code must be current."""

from pathlib import Path

from naparena.game.rules import VARIANTS
from naparena.tools.docs import variants_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_variants_doc_is_generated_from_the_code():
    assert (ROOT / "docs" / "VARIANTS.md").read_text() == variants_markdown()


def test_every_named_variant_is_documented_with_every_option():
    text = variants_markdown()
    for name, variant in VARIANTS.items():
        section = text.split(f"## `{name}`")[1].split("\n## ")[0]
        for option in variant.options:
            assert f"| `{option}` |" in section, (name, option)


def test_readme_names_every_variant_and_command():
    readme = (ROOT / "README.md").read_text()
    for name in VARIANTS:
        assert f"`{name}`" in readme, name
    for command in ("run", "resume", "report", "compare", "replay", "verify", "variants", "bots", "check", "init", "bench"):
        assert f"naparena {command}" in readme, command
