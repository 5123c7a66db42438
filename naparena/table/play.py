"""A match at one table: the seats, their lifecycle hooks, and the two loops that play a hand.

`Table.play` is what every entry point that plays whole matches calls; `Table.play_hand`
plays one hand the careful way (hooks, events, crash replay, dead seats) for those that
deal their own hands. The lean loop (`_fast_hands`) is the careful one with nothing to
call but decisions; tests/test_one_table.py shows the two give the same bytes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Container, Sequence
from functools import partial
from typing import Any

import orjson

from naparena.bots.bot import DECISIONS, Bot, wants_events
from naparena.bots.protocol import hand_end as hand_end_message
from naparena.errors import RunError
from naparena.game.engine import BID, PLAY, Hand, Match
from naparena.game.rules import Rules
from naparena.table.watch import DECISION, HAND, KILLED, MATCH, SEAT, BotTimeout, Supervisor, fault_kind


class Seat:
    """One bot at the table, with its bound decision methods and counters."""

    def __init__(self, bot: Any, alias: str):
        self.bot, self.alias = bot, alias
        self.decide: dict[str, Callable[[Any], Any]] = {k: getattr(bot, k) for k in DECISIONS}
        cls = type(bot)
        # A seat process: its wishes come from its handshake, it always gets the hand's
        # end, and the watchdog leaves its decisions alone (the channel keeps the time).
        self.remote: bool = getattr(bot, "remote", False)
        self.events: bool = bot.events if self.remote else wants_events(bot)
        self.hand_start: bool = bot.hand_start_wanted if self.remote else _overrides(cls, "start_hand")
        self.hand_end = False if self.remote else _overrides(cls, "end_hand")
        self.watched = not self.remote
        self.decisions = 0
        self.dead = False


def _overrides(cls: type, name: str) -> bool:
    return getattr(cls, name) is not getattr(Bot, name)


def match_info(index: int, seat: int, aliases: Sequence[str], rules: Rules, hands: int, timeout: float,
               first_hand: int = 0) -> dict[str, Any]:
    """What `start_match` tells a bot. `first_hand`: 0, or the hand a match resumed from its
    checkpoint goes on from (the bot is new then, its random source as it was at that hand)."""
    return {"match": index, "seat": seat, "seats": list(aliases), "players": len(aliases), "rules": rules,
            "hands": hands, "timeout": timeout, "first_hand": first_hand}


PRIVATE_KEYS = ("deal", "peep_card", "floater", "garnet", "pre", "cut", "gathered", "stock", "bought")


def public_record(record: dict[str, Any]) -> dict[str, Any]:
    """A finished hand as every seat may see it: no dealt cards, no private decisions, and
    faults by kind only (an illegal answer may hold the bot's own cards)."""
    public = {k: v for k, v in record.items() if k not in PRIVATE_KEYS}
    if "faults" in public:
        public["faults"] = tuple((d, s, k, fault_kind(r)) for d, s, k, r in public["faults"])
    return public


Book = Callable[[dict[str, Any]], None]


class Table:
    """Bots in their seats under one supervisor. `seats` holds None for a seat played from
    outside (a learner's): it gets no hooks. The lifecycle, in order: `start_match`, then
    hands (`play`, or `play_hand` for each), then `end_match`."""

    def __init__(self, seats: Sequence[Seat | None], watch: Supervisor):
        self.seats, self.watch = list(seats), watch
        self.bots = [(i, s) for i, s in enumerate(seats) if s is not None]
        # Seat processes that asked for the hand's end (every one, unless its hello said not).
        self.told = [s.bot for _, s in self.bots if s.remote and s.bot.hand_end_wanted]
        self.counts = [0] * len(self.seats)  # decisions the lean loop asked, per seat
        self.listeners: list[tuple[int, Seat]] = []  # this hand's seats that asked for events
        self.mark = _mark(None)
        self.lean_now: bool | None = None  # `lean()`, once `decide_until` asked

    def start_match(self, index: int, aliases: Sequence[str], rules: Rules, hands: int, timeout: float,
                    first_hand: int = 0) -> None:
        watch = self.watch
        watch.slot[MATCH] = index
        watch.new_hand(-1)
        for i, seat in self.bots:
            info = match_info(index, i, aliases, rules, hands, timeout, first_hand)
            watch.hook(seat, i, partial(_calling, seat.bot, "start_match", info))

    def end_match(self, hands: int) -> None:
        self.watch.new_hand(hands)
        for i, seat in self.bots:
            self.watch.hook(seat, i, seat.bot.end_match)

    def lean(self) -> bool:
        """Whether the lean loop may play: no crash to replay, nothing to call but decisions."""
        watch = self.watch
        return (not watch.crashes and not watch.given
                and not any(s.events or s.hand_start or s.hand_end for _, s in self.bots))

    def play(self, match: Match, hands: int, book: Book, after: Callable[[], None] | None = None,
             careful: bool = False) -> None:
        """Deal and play `hands` hands of `match`, booking each finished hand's record,
        then calling `after` (a checkpoint). `careful`: never the lean loop (a test's)."""
        if not careful and self.lean():
            self._fast_hands(match, hands, book, after)
        else:
            play_hands(match, hands, self.play_hand, lambda record: self._booked(record, book, after))

    def _booked(self, record: dict[str, Any], book: Book, after: Callable[[], None] | None) -> None:
        book(record)
        if self.told:
            self.tell_hand_end(record)
        if after is not None:
            after()

    def tell_hand_end(self, record: dict[str, Any]) -> None:
        """Queue the public record for every seat process (sent with its next request)."""
        message = hand_end_message(public_record(record))  # encoded once for every seat
        for bot in self.told:
            bot.queue(message)

    def play_hand(self, hand: Hand) -> None:
        """One hand, the careful way: start_hand, each decision (events after it), end_hand."""
        self.start_hand(hand)
        while not hand.over:
            self.decide(hand)
            if self.listeners:
                self.tell(hand)
        self.end_hand(hand)

    def start_hand(self, hand: Hand) -> None:
        """`start_hand` for the seats that want it; events are followed from here (`tell`)."""
        watch = self.watch
        watch.new_hand(hand.hand_no)
        for i, seat in self.bots:
            if seat.hand_start:
                view = hand.view(i)
                watch.hook(seat, i, partial(_calling, seat.bot, "start_hand", view))
        self.listeners = [(i, s) for i, s in self.bots if s.events and not s.dead]
        self.mark = _mark(hand)

    def tell(self, hand: Hand) -> None:
        """Send the public events since the last `tell` to the seats that asked for them."""
        if self.listeners:
            self.mark = _tell(hand, self.mark, self.listeners, self.watch)

    def end_hand(self, hand: Hand) -> None:
        """A finished hand, before the match books it: the settle event, then `end_hand`."""
        if not self.listeners and not any(s.hand_end for _, s in self.bots):
            return
        public = public_record(hand.record())
        for i, seat in self.bots:
            if seat.events:
                self.watch.hook(seat, i, partial(_calling, seat.bot, "observe", {"type": "settle", **public}))
            if seat.hand_end:
                self.watch.hook(seat, i, partial(_calling, seat.bot, "end_hand", public))

    def decide(self, hand: Hand) -> None:
        """The acting seat's one decision, supervised, answered in `hand`."""
        i, kind = hand.to_act, hand.kind
        assert i is not None and kind is not None  # someone is to act until the hand is over
        seat = self.seats[i]
        assert seat is not None, "a seat played from outside answers for itself"
        if seat.dead:
            hand.apply(hand.legal()[0])  # a crashed bot's seat: the first legal answer
            return
        seat.decisions += 1
        watch = self.watch
        reason = watch.crashes.get((hand.hand_no, i, hand.decisions))
        given = watch.given.get((hand.hand_no, i, hand.decisions))
        answer = None
        if reason is not None:
            seat.dead = True
        elif given is not None:
            reason = self._time_out(seat, hand, given, seat.decide[kind], i)
        else:
            answer, reason = watch.ask(hand, seat.decide[kind], i, seat.watched)
        if reason is not None:
            hand.fault(reason)
        else:
            hand.apply(answer)

    def decide_until(self, hand: Hand, outside: int, kinds: Container[str] | None = None) -> None:
        """The bots' decisions in `hand` until it is over or the seat played from outside
        (`outside`: a learner's) is to answer one of `kinds` (None: any decision; its
        other decisions are its own bot's). Each decision is `decide`'s, events told after
        each; with nothing but decisions to call (`lean`), the lean loop's inline
        supervision instead, as `_fast_hands` plays, for the batched environments."""
        if self.lean_now is None:  # the seats' wishes and the replay's crashes hold for the whole match
            self.lean_now = self.lean()
        if not self.lean_now:
            while (i := hand.to_act) is not None and not (i == outside and (kinds is None or hand.kind in kinds)):
                self.decide(hand)
                if self.listeners:
                    self.tell(hand)
            return
        watch, seats, counts = self.watch, self.seats, self.counts
        slot, view, apply = watch.slot, hand.acting_view, hand.apply
        while (i := hand.to_act) is not None:
            kind = hand.kind
            assert kind is not None  # set with to_act
            if i == outside and (kinds is None or kind in kinds):
                return
            seat = seats[i]
            assert seat is not None, "a seat played from outside answers for itself"
            counts[i] += 1
            slot[DECISION] = hand.decisions
            slot[SEAT] = i if seat.watched else -1
            try:
                answer = seat.decide[kind](view())
            except BaseException as e:
                hand.fault(watch.refused(e, hand))
            else:
                slot[SEAT] = -1
                if slot[KILLED] and watch.overran():
                    hand.fault(watch.late)
                else:
                    apply(answer)

    def _time_out(self, seat: Seat, hand: Hand, reason: str, decide: Callable[[Any], object], i: int) -> str:
        """A logged time-out replayed as it happened. A seat process is given up on without
        being asked (its crash noted, its seat played by the fallback from here), as it was
        killed then. An in-process bot is asked as it was then, so its own state moves on the
        same way, and faulted whatever it answers."""
        if seat.remote:
            return self.watch.exception(seat.bot.give_up(reason), hand)
        self.watch.ask(hand, decide, i, seat.watched)
        return reason

    def _fast_hands(self, match: Match, hands: int, book: Book, after: Callable[[], None] | None) -> None:
        """The common case, kept lean: every seat alive, nobody listening for events.

        The same supervision as `Supervisor.ask`, written out inline because this runs once
        per decision of every match. `marks[i]` is what the watchdog slot shows for seat i:
        the seat, or -1 for a seat process.
        """
        watch, counts = self.watch, self.counts
        decide = [s.decide for s in self.seats if s is not None]
        assert len(decide) == len(self.seats), "the lean loop plays bots in every seat"
        marks = [i if s is not None and s.watched else -1 for i, s in enumerate(self.seats)]
        slot = watch.slot
        for _ in range(hands):
            hand = match.next_hand()
            slot[HAND] = hand.hand_no
            view, apply = hand.acting_view, hand.apply
            while not hand.over:
                i, kind = hand.to_act, hand.kind
                assert i is not None and kind is not None  # someone is to act until the hand is over
                counts[i] += 1
                slot[DECISION] = hand.decisions
                slot[SEAT] = marks[i]
                try:
                    answer = decide[i][kind](view())
                except BaseException as e:
                    hand.fault(watch.refused(e, hand))
                else:
                    slot[SEAT] = -1
                    if slot[KILLED] and watch.overran():
                        hand.fault(watch.late)
                    else:
                        apply(answer)
            match.finish(hand)
            self._booked(hand.record(), book, after)


def play_hands(match: Match, hands: int, play: Callable[[Hand], None], book: Book | None) -> None:
    """The match's loop: deal each of `hands` hands, `play` it, settle it, `book` its record
    (None: no record is made, as the bare engine's benchmark wants). A replay (`verify`)
    plays with the log's answers where a table plays with its seats."""
    for _ in range(hands):
        hand = match.next_hand()
        play(hand)
        match.finish(hand)
        if book is not None:
            book(hand.record())


def feed(hand: Hand, logged: dict[str, Any], decisions: list[int] | None = None,
         watch: Callable[[Hand, Any, str | None], None] | None = None) -> None:
    """Give the hand its logged answers; count each seat's answered decisions. `watch(hand,
    answer, fault)` sees each decision just before it is answered (a replay's hook)."""
    bids = deque(logged["bids"])
    pre = deque(logged.get("pre", ()))
    plays = deque(c for _, trick, _ in logged["tricks"] for _, c in trick)
    plays.extend(c for _, c in logged.get("trick", ()))
    faults = {f[0]: f[3] for f in logged.get("faults", ())}
    guard = 0
    while not hand.over:
        guard += 1
        if guard > 1000:
            raise RunError(f"hand {logged.get('n')}: the log does not finish the hand")
        kind, fault = hand.kind, faults.get(hand.decisions)
        if kind == BID:
            while bids and bids[0][0] != hand.to_act:
                bids.popleft()  # a bid no one was asked for: Sir Garnet's forced Nap
            answer = bids.popleft()[1] if bids else None
        elif kind == PLAY:
            answer = None if fault is not None else (plays.popleft() if plays else None)
        else:
            answer = pre.popleft()[2] if pre else None
            answer = tuple(answer) if isinstance(answer, list) else answer
        if decisions is not None and hand.to_act is not None and not (fault or "").startswith(("crash:", "hang:")):
            decisions[hand.to_act] += 1
        if watch is not None:
            watch(hand, answer, fault)
        if fault is not None:
            hand.fault(fault)
        else:
            hand.apply(answer)


def record_into(body: bytearray, add: Book) -> Book:
    """`book` for a match log: `add` the record (a summary's), and its JSON, comma-ended, into `body`."""
    dumps = orjson.dumps

    def book(record: dict[str, Any]) -> None:
        add(record)
        body.extend(dumps(record))
        body.extend(b",")
    return book


def _calling(bot: Any, name: str, *args: Any) -> None:
    """`bot.name(*args)`, the method looked up inside the supervised call: a bot's own
    attribute lookup is its code too."""
    getattr(bot, name)(*args)


Mark = tuple[int, int, int, int, int, int | None, int | None]


def _mark(hand: Hand | None) -> Mark:
    if hand is None:
        return (0, 0, 0, 0, 0, None, None)
    return (len(hand.bids), len(hand.tricks), len(hand.trick), len(hand.peeps),
            len(hand.exchanges), hand.garnet_taker, hand.trumps)


def _tell(hand: Hand, mark: Mark, listeners: list[tuple[int, Seat]], watch: Supervisor) -> Mark:
    """Send the public events since `mark` to the bots that asked for them."""
    events: list[dict[str, Any]] = []
    nb, nt, np_, npe, nx, garnet, trumps = mark
    for who, bid in hand.bids[nb:]:
        events.append({"type": "bid", "seat": who, "bid": bid})
    for who in hand.peeps[npe:]:
        events.append({"type": "peep", "seat": who})
    for who, n in hand.exchanges[nx:]:
        events.append({"type": "exchange", "seat": who, "cards": n})
    if hand.garnet_taker is not None and garnet is None:
        events.append({"type": "garnet", "seat": hand.garnet_taker})
    if hand.trumps is not None and trumps is None and not hand.trumps_by_lead:
        events.append({"type": "trumps", "seat": hand.bidder, "suit": hand.trumps})
    plays = [p for _, ps, _ in hand.tricks for p in ps] + list(hand.trick)
    done = sum(len(ps) for _, ps, _ in hand.tricks[:nt]) + np_
    for who, card in plays[done:]:
        events.append({"type": "play", "seat": who, "card": card})
    for leader, _, winner in hand.tricks[nt:]:
        events.append({"type": "trick", "leader": leader, "winner": winner})
    for event in events:
        for i, seat in listeners:
            watch.hook(seat, i, partial(_calling, seat.bot, "observe", event))
    return _mark(hand)


__all__ = ["BotTimeout", "Seat", "Table", "match_info", "play_hands", "public_record", "record_into"]
