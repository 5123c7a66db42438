"""The one writer (and strict reader) of JSON text: every JSON file a run writes and every
`--json` output goes through `dumps`, which writes strict JSON (RFC 8259): no NaN, no
Infinity, which JavaScript's `JSON.parse` and strict readers refuse. A value with no
number (an interval that cannot exist) is `null`, with a reason beside it where it is
made; a float that is not a number reaching this writer is a bug, named by where it is.
Match logs are written by `logs.py` (orjson, integers only).
"""

from __future__ import annotations

import json
import math
from typing import Any

from naparena.errors import NaparenaError


class NotJson(NaparenaError):
    """A value JSON cannot hold (NaN or an infinity) reached the writer: a bug, told in one line."""


def dumps(data: Any, *, indent: int | None = None, sort_keys: bool = False, compact: bool = False,
          ensure_ascii: bool = True) -> str:
    """`data` as strict JSON text (`compact`: no spaces after separators)."""
    separators = (",", ":") if compact else None
    try:
        return json.dumps(data, indent=indent, sort_keys=sort_keys, allow_nan=False, separators=separators,
                          ensure_ascii=ensure_ascii)
    except ValueError:
        found = _non_finite(data, "")
        if found is None:
            raise
        where, value = found
        raise NotJson(f"{where or 'the value'} is {value!r}, which JSON cannot hold: a naparena bug, "
                      "please report it") from None


def loads(text: str | bytes) -> Any:
    """JSON text read strictly: NaN, Infinity and -Infinity are refused (Python's json
    reads them by default, so a test reading them back would not see them)."""
    return json.loads(text, parse_constant=_refuse)


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _non_finite(data: Any, path: str) -> tuple[str, float] | None:
    """(where, value) of the first float in `data` that is not finite; None: there is none."""
    if isinstance(data, float) and not math.isfinite(data):
        return path, data
    if isinstance(data, dict):
        items: Any = data.items()
    elif isinstance(data, (list, tuple)):
        items = enumerate(data)
    else:
        return None
    for key, value in items:
        found = _non_finite(value, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}".lstrip("."))
        if found is not None:
            return found
    return None
