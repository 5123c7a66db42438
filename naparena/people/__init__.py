"""People at the table: the human seat, its terminal and web fronts, the live page."""
