"""A minimal drop-in bot: copy this file into `bots/` and rename the bot to start your own.

The same module works unchanged as an installed plug-in: declare it under the
`naparena` entry-point group in your package's pyproject.toml.
"""

from naparena import Bot, hookimpl


class ExampleBot(Bot):
    name = "example"  # the name tournament files use; must be unique across all plug-ins
    description = "Plays its highest legal card; bids the lowest bid with 3+ cards of a suit."

    def bid(self, view):
        # Three cards of one suit can lead trumps and draw the others' trumps:
        # worth the cheapest contract. Otherwise passing risks nothing.
        longest = max(sum(1 for card in view.hand if card // 13 == suit) for suit in range(4))
        bids = [bid for bid in view.legal if bid != "pass"]
        # view.legal lists bids from low to high, so the first real bid is the cheapest.
        if longest >= 3 and bids:
            return bids[0]
        return "pass"

    def play(self, view):
        # Cards are ints suit * 13 + rank; rank (card % 13) is what wins a trick.
        # The card int breaks rank ties so the bot's choice never depends on order.
        return max(view.legal, key=lambda card: (card % 13, card))


# Every other decision (peep, exchange, trumps, ...) keeps the Bot default,
# which is always legal and never costs chips.


@hookimpl
def register_bots(register):
    # naparena calls this once when it loads the file; register each bot class.
    register(ExampleBot)
