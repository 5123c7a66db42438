"""`python -m naparena` runs the command line."""

from naparena.cli import main

main()
