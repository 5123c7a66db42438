"""A corpus of malformed and hostile tournament files: each one exits 2 with one line on
stderr naming the file and the key, no traceback, and nothing written.

The file sits at a long path, so a message that wrapped at 80 columns would show as
more than one line. A few cases (a FIFO, /dev/zero, markup in a name) also run as real
processes, with stderr a pipe as in a script.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from naparena.cli import app
from tests.helpers import naparena

TOURNAMENT = '[tournament]\nname = "t"\n'
BOTS = '[[bots]]\nname = "random"\n[[bots]]\nname = "heuristic"\n'
VARIANTS = '[[variants]]\nname = "classic"\n'


def doc(settings: str = "", bots: str = BOTS, variants: str = VARIANTS, extra: str = "",
        tournament: str = TOURNAMENT) -> str:
    return tournament + settings + "\n" + bots + variants + extra


def many_bots(n: int, table: int = 4) -> str:
    return doc(f"table = {table}\n", bots="".join(f'[[bots]]\nname = "random"\nalias = "r{i}"\n' for i in range(n)))


TEN_BOTS = "".join(f'[[bots]]\nname = "random"\nalias = "r{i}"\n' for i in range(10))
SPRT = '[sprt]\na = "random"\nb = "heuristic"\ndelta = 20.0\n'

# (case id, file text or bytes, the key the message must name; "" for a file-level problem)
CORPUS = [
    # [tournament]
    ("no-tournament-table", BOTS + VARIANTS, "tournament"),
    ("tournament-not-a-table", "tournament = 5\n" + BOTS + VARIANTS, "tournament"),
    ("name-missing", doc(tournament="[tournament]\nseed = 1\n"), "tournament.name"),
    ("name-empty", doc(tournament='[tournament]\nname = ""\n'), "tournament.name"),
    ("name-with-space", doc(tournament='[tournament]\nname = "a b"\n'), "tournament.name"),
    ("name-closing-markup", doc(tournament='[tournament]\nname = "[/]"\n'), "tournament.name"),
    ("name-evil-markup", doc(tournament='[tournament]\nname = "evil[/]"\n'), "tournament.name"),
    ("name-bold-markup", doc(tournament='[tournament]\nname = "[bold]x"\n'), "tournament.name"),
    ("name-number", doc(tournament="[tournament]\nname = 5\n"), "tournament.name"),
    ("name-too-long", doc(tournament=f'[tournament]\nname = "{"x" * 100}"\n'), "tournament.name"),
    ("seed-negative", doc("seed = -1"), "tournament.seed"),
    ("seed-float", doc("seed = 1e9"), "tournament.seed"),
    ("seed-too-large", doc("seed = 99999999999999999999"), "tournament.seed"),
    ("seeds-zero", doc("seeds = 0"), "tournament.seeds"),
    ("seeds-float", doc("seeds = 1e9"), "tournament.seeds"),
    ("seeds-billion", doc("seeds = 1000000000"), "tournament.seeds"),
    ("hands-zero", doc("hands = 0"), "tournament.hands"),
    ("hands-trillion", doc("hands = 1000000000000"), "tournament.hands"),
    ("hands-bool", doc("hands = true"), "tournament.hands"),
    ("hands-string", doc('hands = "10"'), "tournament.hands"),
    ("table-one", doc("table = 1"), "tournament.table"),
    ("table-eight", doc("table = 8"), "tournament.table"),
    ("duplicate-string", doc('duplicate = "yes"'), "tournament.duplicate"),
    ("workers-negative", doc("workers = -1"), "tournament.workers"),
    ("workers-hundred-thousand", doc("workers = 100000"), "tournament.workers"),
    ("stack-negative", doc("stack = -5"), "tournament.stack"),
    ("stack-huge", doc("stack = 1000000000000"), "tournament.stack"),
    ("timeout-zero", doc("timeout = 0"), "tournament.timeout"),
    ("timeout-nano", doc("timeout = 1e-9"), "tournament.timeout"),
    ("timeout-nan", doc("timeout = nan"), "tournament.timeout"),
    ("timeout-inf", doc("timeout = inf"), "tournament.timeout"),
    ("timeout-negative", doc("timeout = -1.0"), "tournament.timeout"),
    ("timeout-billion", doc("timeout = 1e9"), "tournament.timeout"),
    ("fault-share-zero", doc("max_fault_share = 0.0"), "tournament.max_fault_share"),
    ("fault-share-two", doc("max_fault_share = 2.0"), "tournament.max_fault_share"),
    ("bots-dir-empty", doc('bots_dir = ""'), "tournament.bots_dir"),
    ("bots-dir-missing", doc('bots_dir = "no-such-folder"'), "tournament.bots_dir"),
    ("bots-dir-is-a-file", doc('bots_dir = "t.toml"'), "tournament.bots_dir"),
    ("bots-dir-nul", doc('bots_dir = "a\\u0000b"'), "tournament.bots_dir"),
    ("log-dir-empty", doc('log_dir = ""'), "tournament.log_dir"),
    ("log-dir-number", doc("log_dir = 5"), "tournament.log_dir"),
    ("unknown-setting", doc("hand = 5"), "tournament.hand"),
    ("markup-setting-name", doc('"[red]x" = 5'), 'tournament."[red]x"'),
    ("bots-inside-tournament", doc('bots = ["random"]'), "tournament.bots"),
    ("unknown-top-level", doc(extra="[botz]\nx = 1\n"), "botz"),
    # [[bots]]
    ("no-bots", doc(bots=""), "bots"),
    ("bots-number", "bots = 5\n" + TOURNAMENT + VARIANTS, "bots"),
    ("bots-single-table", doc(bots='[bots]\nname = "random"\n'), "bots"),
    ("bots-empty-array", "bots = []\n" + TOURNAMENT + VARIANTS, "bots"),
    ("bots-entry-number", "bots = [1]\n" + TOURNAMENT + VARIANTS, "bots[1]"),
    ("bot-name-missing", doc(bots='[[bots]]\nalias = "x"\n'), "bots[1].name"),
    ("bot-name-number", doc(bots="[[bots]]\nname = 5\n"), "bots[1].name"),
    ("bot-unknown", doc(bots='[[bots]]\nname = "nosuchbot"\n'), "bots[1].name"),
    ("bot-name-markup", doc(bots='[[bots]]\nname = "[/]"\n'), "bots[1].name"),
    ("bot-name-evil-markup", doc(bots='[[bots]]\nname = "evil[/]"\n'), "bots[1].name"),
    ("alias-markup", doc(bots=BOTS + '[[bots]]\nname = "random"\nalias = "[/]"\n'), "bots[3].alias"),
    ("alias-evil-markup", doc(bots=BOTS + '[[bots]]\nname = "random"\nalias = "evil[/]"\n'), "bots[3].alias"),
    ("alias-empty", doc(bots='[[bots]]\nname = "random"\nalias = ""\n'), "bots[1].alias"),
    ("alias-twice", doc(bots=BOTS + '[[bots]]\nname = "random"\n'), "bots[3].alias"),
    ("params-number", doc(bots='[[bots]]\nname = "random"\nparams = 5\n'), "bots[1].params"),
    ("params-unknown", doc(bots='[[bots]]\nname = "heuristic"\nparams = { zzz = 1 }\n'), "bots[1].params.zzz"),
    ("pimc-samples-negative", doc(bots=BOTS + '[[bots]]\nname = "pimc"\nparams = { samples = -5 }\n'),
     "bots[3].params.samples"),
    ("pimc-samples-text", doc(bots=BOTS + '[[bots]]\nname = "pimc"\nparams = { samples = "x" }\n'),
     "bots[3].params.samples"),
    ("pimc-budget-nan", doc(bots=BOTS + '[[bots]]\nname = "pimc"\nparams = { time_budget = nan }\n'),
     "bots[3].params.time_budget"),
    ("pimc-nodes-huge", doc(bots=BOTS + '[[bots]]\nname = "pimc"\nparams = { max_nodes = 1000000000000 }\n'),
     "bots[3].params.max_nodes"),
    ("aggression-huge", doc(bots='[[bots]]\nname = "heuristic"\nparams = { aggression = 1e6 }\n'),
     "bots[1].params.aggression"),
    ("bot-unknown-key", doc(bots='[[bots]]\nname = "random"\ncolour = "red"\n'), "bots[1].colour"),
    ("two-hundred-aliases", many_bots(200), "bots"),
    ("sixty-bots-at-four", many_bots(60), "bots"),
    ("seeds-times-tables", doc("seeds = 10000\n", bots=TEN_BOTS), "tournament.seeds"),
    ("hands-times-matches", doc("seeds = 1000\nhands = 1000000\n"), "tournament.hands"),
    # [[variants]]
    ("no-variants", doc(variants=""), "variants"),
    ("variants-empty-array", "variants = []\n" + TOURNAMENT + BOTS, "variants"),
    ("variants-single-table", doc(variants='[variants]\nname = "classic"\n'), "variants"),
    ("variant-name-missing", doc(variants='[[variants]]\nbase = "classic"\n'), "variants[1].name"),
    ("variant-unknown", doc(variants='[[variants]]\nname = "nosuch"\n'), "variants[1].name"),
    ("variant-name-markup", doc(variants='[[variants]]\nname = "[bold]x"\n'), "variants[1].name"),
    ("override-without-base", doc(variants='[[variants]]\nname = "classic"\nbids = ["three"]\n'),
     "variants[1].bids"),
    ("base-unknown", doc(variants='[[variants]]\nname = "mine"\nbase = "nosuch"\n'), "variants[1].base"),
    ("named-variant-with-base", doc(variants='[[variants]]\nname = "classic"\nbase = "classic"\n'),
     "variants[1].name"),
    ("bid-unknown", doc(variants='[[variants]]\nname = "mine"\nbase = "classic"\nbids = ["zzz"]\n'),
     "variants[1].bids"),
    ("bid-markup", doc(variants='[[variants]]\nname = "mine"\nbase = "classic"\nbids = ["[/]"]\n'),
     "variants[1].bids"),
    ("pack-thirteen", doc(variants='[[variants]]\nname = "mine"\nbase = "classic"\npack = 13\n'),
     "variants[1].pack"),
    ("option-typo", doc(variants='[[variants]]\nname = "mine"\nbase = "classic"\npackk = 32\n'),
     "variants[1].packk"),
    ("ante-negative", doc(variants='[[variants]]\nname = "mine"\nbase = "classic"\ndealer_ante = -1\n'),
     "variants[1].dealer_ante"),
    ("ante-huge", doc(variants='[[variants]]\nname = "mine"\nbase = "classic"\ndealer_ante = 1000000000000\n'),
     "variants[1].dealer_ante"),
    ("variant-twice", doc(variants=VARIANTS + VARIANTS), "variants[2].name"),
    ("pack-too-small-for-table", doc("table = 7", variants='[[variants]]\nname = "mine"\nbase = "classic"\n'
                                                          'pack = 32\n'), "variants[1].pack"),
    ("floater-at-two", doc("table = 2", variants='[[variants]]\nname = "floater"\n'), "variants[1]"),
    # [sprt]
    ("sprt-unknown-bot", doc(extra=SPRT.replace('a = "random"', 'a = "nobody"')), "sprt.a"),
    ("sprt-delta-zero", doc(extra=SPRT.replace("delta = 20.0", "delta = 0.0")), "sprt.delta"),
    ("sprt-number", "sprt = 5\n" + doc(), "sprt"),
    ("sprt-same-bot", doc(extra=SPRT.replace('b = "heuristic"', 'b = "random"')), "sprt.b"),
    ("sprt-variant-unknown", doc(extra=SPRT + 'variant = "nosuch"\n'), "sprt.variant"),
    ("sprt-alpha-large", doc(extra=SPRT + "alpha = 0.7\n"), "sprt.alpha"),
    # the file itself
    ("syntax-error", doc() + "this is not toml\n", ""),
    ("not-utf8", doc().encode() + b"# \xff\xfe\n", ""),
    ("empty-file", "", "tournament"),
    ("huge-file", doc() + ("# padding padding padding\n" * 50_000), ""),
    ("nested-too-deep", doc() + "x = " + "[" * 5000 + "]" * 5000 + "\n", ""),
]

assert len(CORPUS) >= 80


def long_folder(tmp_path: Path) -> Path:
    """A folder with a path well past 80 characters, so a wrapped message would show."""
    folder = tmp_path / ("a-folder-with-a-long-name-so-messages-are-long" * 2)
    folder.mkdir()
    return folder


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def assert_one_line_naming(stderr: str, file: Path, key: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, lines
    [line] = lines
    assert line.startswith("error: "), line
    assert str(file) in line, line
    if key:
        assert f": {key}:" in line, (key, line)


@pytest.mark.parametrize("case, text, key", CORPUS, ids=[c[0] for c in CORPUS])
def test_a_hostile_tournament_file_gives_one_line_naming_the_file_and_key(tmp_path, monkeypatch, case, text, key):
    folder = long_folder(tmp_path)
    monkeypatch.chdir(folder)
    path = folder / "t.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    before = listing(folder)
    result = CliRunner().invoke(app, ["run", str(path)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert_one_line_naming(result.stderr, path, key)
    assert result.stdout == ""
    assert listing(folder) == before, "nothing may be written"


def test_markup_in_values_is_shown_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.toml"
    path.write_text(doc(tournament='[tournament]\nname = "[bold]x"\n'))
    result = CliRunner().invoke(app, ["run", str(path)])
    assert '"[bold]x"' in result.stderr
    path.write_text(BOTS + VARIANTS)
    result = CliRunner().invoke(app, ["run", str(path)])
    assert "[tournament]" in result.stderr and "[[bots]]" not in result.stderr
    path.write_text(TOURNAMENT + VARIANTS)
    assert "[[bots]]" in CliRunner().invoke(app, ["run", str(path)]).stderr


def test_bots_dir_option_naming_a_missing_folder_or_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.toml"
    path.write_text(doc())
    for target, problem in (("nowhere", "does not exist"), ("t.toml", "is a file, not a folder")):
        result = CliRunner().invoke(app, ["run", str(path), "--bots-dir", target])
        assert result.exit_code == 2
        assert result.stderr.startswith("error: --bots-dir:") and problem in result.stderr


def test_ecarte_at_five_players_warns(tmp_path, monkeypatch):
    from naparena.arena.setup.reader import caveats, parse_tournament
    t = parse_tournament(doc("table = 5\nduplicate = false", variants='[[variants]]\nname = "ecarte"\n'), "t.toml")
    [warning] = caveats(t)
    assert "variants[1]" in warning and "at most four" in warning
    assert caveats(parse_tournament(doc("table = 4", variants='[[variants]]\nname = "ecarte"\n'), "t.toml")) == []


@pytest.mark.parametrize(("settings", "variant", "bots", "warned"), [
    ("table = 5", "hoyle", ["cautious", "random", "heuristic"], "cautious (1.18×), random (1.06×)"),
    ("table = 5", "floater", ["random", "heuristic", "bold"], "random (1.23×)"),
    ("table = 4", "seven-card", ["cautious", "heuristic"], "cautious (1.05×)"),
    # the controls: plain play, a table where duplicate narrowed, a bot it narrowed, other rules
    ("table = 5\nduplicate = false", "hoyle", ["cautious", "random"], None),
    ("table = 3", "hoyle", ["cautious", "random"], None),
    ("table = 5", "hoyle", ["heuristic", "bold"], None),
    ("table = 5", 'house"\nbase = "hoyle"\ndealer_ante = 1\n#"', ["cautious", "random"], None),
])
def test_duplicate_where_it_was_measured_to_widen_a_bots_interval_warns_before_play(settings, variant, bots, warned):
    from naparena.arena.setup.reader import duplicate_caveats, parse_tournament
    text = doc(settings, bots="".join(f'[[bots]]\nname = "{b}"\n' for b in bots),
               variants=f'[[variants]]\nname = "{variant}"\n')
    out = duplicate_caveats(parse_tournament(text, "t.toml"))
    if warned is None:
        assert out == []
    else:
        [warning] = out
        assert warning.startswith("t.toml: variants[1]: ") and warned in warning and "duplicate = false" in warning


# --- as real processes, stderr a pipe -------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "markup-name"])
def test_hostile_files_as_a_real_process(tmp_path, kind):
    folder = long_folder(tmp_path)
    path = folder / "t.toml"
    if kind == "fifo":
        os.mkfifo(path)  # reading it would wait forever for a writer
        key = ""
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")  # reading it would never end
        key = ""
    else:
        path.write_text(doc(bots='[[bots]]\nname = "evil[/]"\n'))
        key = "bots[1].name"
    before = listing(folder)
    done = naparena("run", path, cwd=folder)
    assert done.returncode == 2, done.stderr
    assert_one_line_naming(done.stderr, path, key)
    assert listing(folder) == before


@pytest.mark.parametrize("args", [["run", "t.toml", "--workers", "100000"],
                                  ["check", "random", "--hands", "10000000000"],
                                  ["check", "random", "--timeout", "1e-9"]])
def test_command_line_numbers_have_bounds_too(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.toml").write_text(doc())
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "logs").exists()
