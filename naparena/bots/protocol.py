"""The seat protocol's messages, shared by both ends: JSON lines between a match and a bot process.

`docs/PROTOCOL.md` is the specification and `naparena/schemas/protocol/` holds a JSON
Schema for every message. Cards and bids are encoded as in the match logs: a card is its
int, a bid its name, a suit its int, an exchange or discard a sorted array of cards.

This module turns views, answers and records into message bytes and back. It lives in
the bots layer because `naparena serve` (a bot's end) needs it as much as the match does.
"""

from __future__ import annotations

import json
import marshal
import sys
from operator import itemgetter
from typing import Any

from naparena.game.engine import base_bid
from naparena.game.rules import TRICKS_NEEDED, Rules, stakes
from naparena.game.view import View

#: Bumped on any change a bot could notice; a bot answers the handshake with the version it speaks.
VERSION = 1
#: The longest line either end reads, newline included: an answer is a few dozen bytes,
#: and the largest request (a Sir Garnet discard, 252 legal answers) is under 8 KiB.
MAX_LINE = 1 << 16

#: The largest integer every JSON reader holds exactly (an IEEE double's 53-bit mantissa:
#: JavaScript's `JSON.parse`, jq). Every integer naparena sends is within ±this.
MAX_SAFE_INT = (1 << 53) - 1

# A view travels without its rules: they are in the match message, once per match.
# Its two properties go along, so a bot in any language has what an inline bot has.
_RULES = View._fields.index("rules")
VIEW_KEYS = tuple(f for f in View._fields if f != "rules")
VIEW_PROPERTIES = ("led", "pack", "peep_card")
_KEEP = tuple(i for i in range(len(View._fields)) if i != _RULES)
_SENT = itemgetter(*_KEEP)  # a view's fields but its rules, as one tuple, in C

#: What a Python seat on the match's own interpreter may ask for instead of JSON lines:
#: the match's messages as marshal frames (`frame`), which rebuild a view's tuples in C.
#: marshal's format belongs to one Python version, so the tag names it; any other peer
#: never sees the offer (it goes only to naparena's own Python seats) and speaks JSON.
FRAMES = f"marshal-{marshal.version}-{sys.implementation.cache_tag}"
#: A frame's first byte after its length: what its body is.
DECIDE, HAND_START, EVENT, LINE = b"d", b"h", b"e", b"j"
FRAME_HEAD = 4  # bytes of a frame's length (of its kind byte and body), little-endian


class ProtocolError(Exception):
    """A message that breaks the protocol; the text quotes the offending line."""


# --- the match's end ------------------------------------------------------------------

def hello(params: dict[str, Any], frames: bool = False) -> bytes:
    """The handshake; `frames` offers `FRAMES` (to naparena's own Python seats only)."""
    data: dict[str, Any] = {"type": "hello", "protocol": VERSION, "params": params}
    if frames:
        data["frames"] = FRAMES
    return _line(data)


def match_start(info: dict[str, Any], seed: int) -> bytes:
    """`info` is what an inline bot's `start_match` gets; its `Rules` go as their options.

    The bot's seed is 64 bits, more than a double holds: `seed` is it reduced to 53 bits
    (exact in every language), `seed_text` the whole seed in decimal, which a Python seat
    uses so that it plays as the same bot inline would.
    """
    return _line({"type": "match", **info, "rules": info["rules"].as_dict(),
                  "contracts": contracts(info["rules"]), "seed": wire_seed(seed), "seed_text": str(seed)})


def contracts(rules: Rules) -> list[dict[str, Any]]:
    """Every contract a hand of these rules can be played in, low to high: its name, the
    tricks it needs (0: lose every trick) and its stakes per opponent, doubling applied,
    so a bot in any language need not know the payout tables."""
    names = [b for b in rules.ladder if b in rules.bids]
    if rules.all_pass == "eldest_one":
        names.insert(0, "one")  # played only when everyone passes
    out = []
    for name in names:
        base = base_bid(name)
        win, loss = stakes(rules, base)
        out.append({"bid": name, "tricks": TRICKS_NEEDED[base], "win": win, "loss": loss})
    return out


def wire_seed(seed: int) -> int:
    """A seed as the protocol's `seed` carries it: its low 53 bits."""
    return seed & MAX_SAFE_INT


def request(view: View) -> bytes:
    """One decision: every field of the seat's `View` except `rules`, which the match message gave."""
    return b'{"type":"decide","view":' + _view_json(view) + b"}\n"


def hand_start(view: View) -> bytes:
    return b'{"type":"hand_start","view":' + _view_json(view) + b"}\n"


def event(data: dict[str, Any]) -> bytes:
    return _line({"type": "event", "event": data})


def hand_end(record: dict[str, Any]) -> bytes:
    return _line({"type": "hand_end", "record": record})


MATCH_END = b'{"type":"match_end"}\n'
SHUTDOWN = b'{"type":"shutdown"}\n'


# --- frames: the same messages to a seat that asked for `FRAMES` -------------------------

def frame(kind: bytes, body: bytes) -> bytes:
    return (len(body) + 1).to_bytes(FRAME_HEAD, "little") + kind + body


#: marshal's version 2, the newest without back-references: writing one needs no table
#: of the objects already written (a third of the cost of a view's frame).
_MARSHAL = 2


def request_frame(view: View) -> bytes:
    """A decision as a frame: the view's fields but its rules, marshalled (the seat has the
    rules from the match message)."""
    body = marshal.dumps(_SENT(view), _MARSHAL)
    return (len(body) + 1).to_bytes(FRAME_HEAD, "little") + DECIDE + body


def hand_start_frame(view: View) -> bytes:
    return frame(HAND_START, marshal.dumps(_SENT(view), _MARSHAL))


def event_frame(data: dict[str, Any]) -> bytes:
    """An event as a frame: marshalled, its tuples kept, as an inline bot gets it (an
    event marshal cannot write, which the engine never makes, goes as its JSON line)."""
    try:
        return frame(EVENT, marshal.dumps(data, _MARSHAL))
    except ValueError:
        return frame(LINE, event(data))


def line_frame(line: bytes) -> bytes:
    """Any JSON line message as a frame: the match start and end, a hand end, shutdown."""
    return frame(LINE, line)


def view_from_fields(fields: tuple[Any, ...], rules: Rules | None) -> View:
    """A framed view's fields → the `View` an inline bot would have been given."""
    return View(fields[:_RULES] + (rules,) + fields[_RULES:])


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


# The standard library's json, held to the protocol's JSON: compact, UTF-8, no NaN or
# Infinity either way. A seat imports it anyway; orjson would add its own imports (uuid
# and more: 7 ms of a cold seat's start) for microseconds a message, and decisions to
# naparena's own seats travel as frames, not JSON.
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_decode = json.JSONDecoder(parse_constant=_no_constant).decode


def dumps(data: Any) -> bytes:
    """`data` as the protocol's compact JSON text."""
    return _encode(data).encode()


def loads(text: bytes) -> Any:
    """A JSON text → its value; a `ValueError` for anything not JSON (invalid UTF-8,
    NaN, nesting too deep to read)."""
    try:
        return _decode(text.decode())
    except RecursionError:
        raise ValueError("nested too deep") from None


def _view_json(view: View) -> bytes:
    fields = dict(zip(VIEW_KEYS, [view[i] for i in _KEEP]))
    fields["led"] = view.led
    fields["pack"] = view.pack
    fields["peep_card"] = view.peep_card
    return dumps(fields)


def _line(data: dict[str, Any]) -> bytes:
    return dumps(data) + b"\n"


def read_hello(line: bytes) -> dict[str, Any]:
    """The bot's handshake answer, checked: its name, version, accepted params and wishes."""
    data = _object(line)
    if data.get("type") == "error":
        raise ProtocolError(f"the bot refused the handshake: {str(data.get('message', ''))[:200]}")
    if data.get("type") != "hello":
        raise ProtocolError(f"expected a hello message, got {_quote(line)}")
    if data.get("protocol") != VERSION:
        raise ProtocolError(f"the bot speaks protocol {data.get('protocol')!r}, not {VERSION}: {_quote(line)}")
    if not isinstance(data.get("name"), str) or not data["name"]:
        raise ProtocolError(f"hello without a name: {_quote(line)}")
    for key, kind in (("version", str), ("params", dict), ("events", bool), ("hand_start", bool),
                      ("hand_end", bool), ("frames", str)):
        if key in data and not isinstance(data[key], kind):
            raise ProtocolError(f"hello field {key!r} has the wrong type: {_quote(line)}")
    return data


_ANSWER = b'{"type":"answer","answer":'
_ANSWER_AT = len(_ANSWER)


def read_answer(line: bytes) -> tuple[Any, str | None]:
    """(answer, None), or (None, the bot's own error text) when it could not answer.

    Arrays become tuples, the type the engine's exchanges and discards have, so an
    answer means the same from a process as from an inline bot.
    """
    # A card as `answer` writes it (most answers): read without a JSON parser. Only
    # JSON's own form of a number qualifies (no leading zero, at most 18 digits).
    if line.startswith(_ANSWER) and line.endswith(b"}\n"):
        number = line[_ANSWER_AT:-2]
        if number.isdigit() and len(number) < 19 and (number[0] != 48 or len(number) == 1):
            return int(number), None
    data = _object(line)
    if data.get("type") != "answer":
        raise ProtocolError(f"expected an answer message, got {_quote(line)}")
    if "error" in data:
        return None, str(data["error"])[:200]
    if "answer" not in data:
        raise ProtocolError(f"answer message without an answer: {_quote(line)}")
    answer = data["answer"]
    return (tuples(answer) if isinstance(answer, list) else answer), None


def _object(line: bytes) -> dict[str, Any]:
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a line of more than {MAX_LINE} bytes: {_quote(line)}")
    try:
        data = loads(line)
    except ValueError:
        raise ProtocolError(f"not a JSON line: {_quote(line)}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"not a JSON object: {_quote(line)}")
    return data


def _quote(line: bytes) -> str:
    """The offending line, short enough for a log."""
    text = line.rstrip(b"\n").decode("utf-8", "replace")
    return repr(text if len(text) <= 120 else text[:120] + "…")


# --- the bot's end --------------------------------------------------------------------

def tuples(value: Any) -> Any:
    """JSON arrays back into the tuples a `View` holds, at every depth."""
    if isinstance(value, list):
        return tuple([tuples(v) if isinstance(v, list) else v for v in value])
    return value


def read_view(d: dict[str, Any], rules: Rules | None) -> View:
    """A request's view object → the same `View` an inline bot would have been given
    (`rules` None only for a peer that asks before the match message: its bot fails).

    Written out field by field in `View`'s order (a generic walk cost three times as
    much, once per decision); the protocol tests check the result equals the view sent.
    """
    legal = d["legal"]
    legal = tuple(map(tuple, legal)) if legal and type(legal[0]) is list else tuple(legal)
    return View((d["kind"], d["seat"], legal, tuple(d["hand"]), d["trumps"], tuple(map(tuple, d["trick"])),
                 tuple([(lead, tuple(map(tuple, plays)), won) for lead, plays, won in d["tricks"]]),
                 tuple(d["won"]), tuple(d["seen"]), tuple(map(tuple, d["bids"])), d["bidder"], d["contract"],
                 rules, d["players"], d["dealer"], tuple(d["active"]), d["hand_no"], tuple(d["chips"]),
                 d["kitty"], tuple(d["peeps"]), tuple(map(tuple, d["exchanges"])), d["garnet_taker"]))


def read_record(data: dict[str, Any]) -> dict[str, Any]:
    """A hand end's public record, its arrays as tuples like the engine's."""
    return {k: tuples(v) for k, v in data.items()}


def answer(value: object) -> bytes:
    if type(value) is int:  # a card, most answers
        return b'{"type":"answer","answer":%d}\n' % value
    return b'{"type":"answer","answer":' + dumps(value) + b"}\n"


def failure(text: str) -> bytes:
    return _line({"type": "answer", "error": text})


def bot_hello(name: str, version: str, params: dict[str, Any], events: bool, hand_start: bool,
              hand_end: bool = True, frames: str | None = None) -> bytes:
    """The bot's handshake; `hand_end` false asks for no hand_end messages, `frames` takes
    up the match's offer of frames."""
    data: dict[str, Any] = {"type": "hello", "protocol": VERSION, "name": name, "version": version,
                            "params": params, "events": events, "hand_start": hand_start}
    if not hand_end:
        data["hand_end"] = False
    if frames is not None:
        data["frames"] = frames
    return _line(data)


def refusal(message: str) -> bytes:
    return _line({"type": "error", "message": message})
