"""The rules a table plays, from a variant's name and its overrides: one reading, one error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from naparena.errors import RulesError
from naparena.game.rules import Rules, make_rules


def rules_of(variant: str | Rules = "classic", overrides: Mapping[str, Any] | None = None) -> Rules:
    """A named variant, or a custom one (a base variant and its `overrides`), as `Rules`. An
    unknown name or option is a `RulesError` that offers the nearest known one."""
    if isinstance(variant, Rules):
        if overrides:
            raise RulesError("overrides", "give overrides with a variant name, not with Rules")
        return variant
    try:
        return make_rules(variant, overrides)
    except RulesError as e:
        if e.option != "base":
            raise
        raise RulesError("variant", e.message) from None  # the caller's word, not the engine's
