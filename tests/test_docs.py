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


def test_rules_doc_is_generated_from_the_code():
    from naparena.tools.docs import rules_markdown
    assert (ROOT / "docs" / "RULES.md").read_text() == rules_markdown()


def test_rules_doc_lists_every_option_and_every_interpretation_of_the_variant_table():
    from naparena.game.rules import OPTION_NAMES
    from naparena.tools.docs import INTERPRETATIONS
    text = (ROOT / "docs" / "RULES.md").read_text()
    interpretations = text.split("## 10. Interpretations")[1].split("\n## ")[0]
    for option in OPTION_NAMES:
        assert f"| `{option}` |" in text, option
    for line in INTERPRETATIONS:
        assert line in interpretations
    for name, variant in VARIANTS.items():
        for option, source in variant.sources.items():
            if "interpretation" in source:
                assert f"`{name}`, `{option}`: {source}" in interpretations, (name, option)
    for topic in ("revoking bidder pays into the kitty", "\"auto\"` at 6 and 7", "at 2 players",
                  "floater's pack", "Écarté Nap is allowed with five to seven players", "Sedan"):
        assert topic in interpretations, topic


def test_readme_points_only_at_the_projects_own_rules_document():
    readme = (ROOT / "README.md").read_text()
    assert "docs/RULES.md" in readme
    assert readme.count("RULES.md") == readme.count("docs/RULES.md")
