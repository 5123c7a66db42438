"""The project's own exception types; the CLI turns them into one clear message."""

import difflib
from collections.abc import Iterable


def did_you_mean(word: object, choices: Iterable[object]) -> str:
    """" (did you mean 'x'?)" for the choice closest to a misspelt `word`, or "": the one
    hint every "unknown …" message gives (a bot, a variant, a rules option, a key)."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class NaparenaError(Exception):
    """Base of every error naparena reports to a user without a traceback."""

    exit_code = 1


class RulesError(NaparenaError):
    """A rules option or variant that cannot be played."""

    exit_code = 2

    def __init__(self, option: str, message: str):
        self.option = option
        self.message = message
        super().__init__(f"rules option '{option}': {message}")


class ConfigError(NaparenaError):
    """A tournament file that cannot be run: names the file, the key and the problem."""

    exit_code = 2

    def __init__(self, path: str, key: str, message: str):
        self.path = path
        self.key = key
        self.message = message
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{key}: {message}" if key else f"{where}{message}")


class PluginError(NaparenaError):
    """A bot plug-in that cannot be loaded or registered."""

    exit_code = 2


class RunError(NaparenaError):
    """Bad input outside a tournament file: a run directory that cannot be resumed,
    reported or verified, an unknown variant name, a hand a log does not have."""

    exit_code = 2


class HandshakeError(NaparenaError):
    """A bot under `naparena check` that could not start or shake hands: it misbehaved,
    so exit 1 as for any other fault, with the reason and its stderr."""

    exit_code = 1
