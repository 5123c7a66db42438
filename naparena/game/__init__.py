"""The rules engine: cards, rules and variants, views, and the pure state machine of a hand."""
