"""View keeps a NamedTuple's interface while being built by tuple's own constructor."""

import pickle

import pytest

from naparena.game.engine import Match
from naparena.game.rules import make_rules
from naparena.game.view import View, _Fields


@pytest.fixture
def view():
    hand = Match(make_rules("classic"), 4, 7).next_hand()
    return hand.view()


def test_fields_and_attributes_agree(view):
    assert View._fields == _Fields._fields and len(view) == len(View._fields) == 22
    assert [getattr(view, name) for name in View._fields] == list(view)
    assert view.kind == "bid" and view.legal and view.trick == () and view.led is None


def test_namedtuple_methods(view):
    assert view._asdict()["seat"] == view.seat
    moved = view._replace(seat=3)
    assert type(moved) is View and moved.seat == 3 and moved.hand == view.hand
    with pytest.raises(ValueError, match="unexpected field names"):
        view._replace(colour="red")
    assert View._make(list(view)) == view
    assert repr(view).startswith("View(kind='bid', seat=")


def test_immutable_and_picklable(view):
    with pytest.raises(AttributeError):
        view.seat = 2
    again = pickle.loads(pickle.dumps(view))
    assert type(again) is View and again == view


def test_match_statement_binds_fields_in_order(view):
    match view:
        case View(kind, seat, legal):
            assert (kind, seat, legal) == (view.kind, view.seat, view.legal)
        case _:
            pytest.fail("a View must match its positional fields")
