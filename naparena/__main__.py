"""`python -m naparena` runs the command line."""

from .cli import main

main()
