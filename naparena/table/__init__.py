"""The table: the one place a hand, and a match, is played with bots in their seats.

Every entry point that seats bots plays through it: the match runner (`arena/match/play.py`),
`naparena check`, `naparena.testing`, the environments, `verify --rerun` (through the match
runner) and `naparena bench`. So every lifecycle hook (`start_match`, `start_hand`,
`observe`, `end_hand`, `end_match`), every fault rule, the time-out's wording and the keys
of the match info are written once, here. It knows the engine and the bots, nothing of
processes, files or runs: the arena brings the watchdog's slot and the place to record.
"""

from naparena.table.play import Seat, Table, match_info, public_record
from naparena.table.rules import rules_of
from naparena.table.watch import BotTimeout, Supervisor, fault_kind

__all__ = ["BotTimeout", "Seat", "Supervisor", "Table", "fault_kind", "match_info", "public_record", "rules_of"]
