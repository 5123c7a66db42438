"""Generates docs/VARIANTS.md from the variant data, so the docs cannot drift from the code.

`python -m naparena.tools.docs > docs/VARIANTS.md`; a test checks the file is current.
"""

from __future__ import annotations

from naparena.game.rules import OPTION_NAMES, VARIANTS

INTRO = """# Variants

Generated from `naparena/game/rules.py` by `python -m naparena.tools.docs > docs/VARIANTS.md`
(a test fails when this file is out of date). `naparena variants NAME` prints the same.
Sources: `000` Wikipedia (modern), `001` pagat.com, `002` older Wikipedia,
`003` W. H. Peel, *Round Games with Cards*, `004` a Hoyle-style account. A value marked
*interpretation* is a choice RULES.md (or naparena, where RULES.md is silent) made
where the sources are silent or disagree.
"""


def _value(v) -> str:
    if isinstance(v, tuple):
        return ", ".join(v)
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("interpretation", "*interpretation*")


def variants_markdown() -> str:
    lines = [INTRO]
    for v in VARIANTS.values():
        lines += [f"## `{v.name}`", "", v.description, "", "| option | value | source |", "|---|---|---|"]
        for option in OPTION_NAMES:
            lines.append(f"| `{option}` | {_value(v.options[option])} | {_cell(v.sources.get(option, ''))} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(variants_markdown(), end="")
