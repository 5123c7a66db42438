"""`python -m naparena` runs the command line."""

from naparena.cli import main

if __name__ == "__main__":
    main()
