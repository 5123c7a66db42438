"""Tampering: every edit of a finished run's files is caught by `naparena verify`, with a
message naming the file, and `report` refuses a run whose files are not its own.

The run exercises what the logs must re-deal: a shuffle-after-Nap variant with a
purchase stock (pagat's gathering, the stock, the cards bought), Sir Garnet (its hand in
dealt order), and a bot disqualified so that skipped stubs exist.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from naparena.arena.records.rundir import MANIFEST, MATCHES, STANDINGS
from naparena.bots import plugins
from naparena.cli import app

BROKEN = '''
from naparena import Bot, hookimpl


class Broken(Bot):
    name = "broken"
    description = "bids four when it can, then raises on every card"

    def bid(self, view):
        return "four" if "four" in view.legal else "pass"

    def play(self, view):
        raise RuntimeError("no cards today")


@hookimpl
def register_bots(register):
    register(Broken)
'''


def make_run(folder: Path, seed: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bots").mkdir(exist_ok=True)
    (folder / "bots" / "broken.py").write_text(BROKEN)
    data = {"tournament": {"name": "tamper", "seed": seed, "seeds": 2, "hands": 12, "table": 3,
                           # Not duplicate: duplicate boards deal every hand from its own seed,
                           # and the gathered pack is what these logs must also re-deal.
                           "duplicate": False, "timeout": 60.0, "max_fault_share": 0.3,
                           # plain: the luck fields' own forgeries are test_luck's, and
                           # re-deriving them would be most of each verify here
                           "estimator": "plain"},
            # Two broken seats: a table left with one well-behaved bot is skipped, and the
            # others are played on with the stand-in in the broken seats.
            "bots": [{"name": "random"}, {"name": "heuristic"}, {"name": "cautious"}, {"name": "broken"},
                     {"name": "broken", "alias": "wrecked"}],
            "variants": [{"name": "purchase"}, {"name": "sir-garnet"}]}
    (folder / "t.toml").write_text(tomli_w.dumps(data))
    result = CliRunner().invoke(app, ["run", str(folder / "t.toml"), "--workers", "1",
                                      "--log-dir", str(folder / "logs")])
    assert result.exit_code == 3, result.output  # finished, with the skipped matches said
    [run_dir] = (folder / "logs").iterdir()
    return run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(plugins.DISABLE_AUTOLOAD_ENV, "1")
        base = tmp_path_factory.mktemp("tamper")
        return make_run(base / "a", seed=5), make_run(base / "b", seed=6)


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


def save(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data))


def played(run_dir: Path) -> list[Path]:
    return [f for f in sorted((run_dir / MATCHES).glob("*.json")) if "skipped" not in load(f)]


def skipped(run_dir: Path) -> list[Path]:
    return [f for f in sorted((run_dir / MATCHES).glob("*.json")) if "skipped" in load(f)]


def first_hand_with(run_dir: Path, key: str) -> tuple[Path, dict, int]:
    for f in played(run_dir):
        data = load(f)
        for i, hand in enumerate(data["hands"]):
            if key in hand:
                return f, data, i
    raise AssertionError(f"no hand has {key}")


# --- the edits: each changes a copy of the run and returns the file it touched ---------

def swap_aliases(run, other):
    f = played(run)[0]
    data = load(f)
    data["bots"][0], data["bots"][1] = data["bots"][1], data["bots"][0]
    save(f, data)
    return f.name


def swap_aliases_everywhere(run, other):
    f = played(run)[0]
    data = load(f)
    data["bots"][0], data["bots"][1] = data["bots"][1], data["bots"][0]
    seats = data["match"]["seats"]
    seats[0], seats[1] = seats[1], seats[0]
    save(f, data)
    return f.name


def match_from_another_run(run, other):
    f = played(run)[1]
    shutil.copy(other / MATCHES / f.name, f)
    return f.name


def delete_a_match(run, other):
    f = played(run)[2]
    f.unlink()
    return f.name


def fake_skipped_stub(run, other):
    f = played(run)[0]
    data = load(f)
    save(f, {"format": data["format"], "match": data["match"], "skipped": "disqualified: random"})
    return f.name


def edit_header_index(run, other):
    f = played(run)[1]
    data = load(f)
    data["match"]["index"] += 1
    save(f, data)
    return f.name


def edit_header_variant(run, other):
    f = played(run)[0]
    data = load(f)
    data["variant"] = "sir-garnet" if data["variant"] == "purchase" else "purchase"
    save(f, data)
    return f.name


def edit_standings(run, other):
    data = load(run / STANDINGS)
    data["variants"]["purchase"]["bots"][0]["chips"] += 10
    save(run / STANDINGS, data)
    return STANDINGS


def swap_standings_rows(run, other):
    data = load(run / STANDINGS)
    rows = data["variants"]["purchase"]["bots"]
    rows[0]["bot"], rows[1]["bot"] = rows[1]["bot"], rows[0]["bot"]
    save(run / STANDINGS, data)
    return STANDINGS


def edit_manifest_seed(run, other):
    data = load(run / MANIFEST)
    data["seed"] += 1
    save(run / MANIFEST, data)
    return MANIFEST


def edit_manifest_config_seed(run, other):
    data = load(run / MANIFEST)
    data["tournament"]["seed"] += 1
    data["seed"] += 1
    save(run / MANIFEST, data)
    return MANIFEST


def forge_summary_only_match(run, other):
    f = played(run)[0]
    data = load(f)
    del data["hands"]
    save(f, data)
    return f.name


def edit_cut(run, other):
    f, data, i = first_hand_with(run, "cut")
    data["hands"][i]["cut"] += 1
    save(f, data)
    return f.name


def edit_gather_order(run, other):
    f, data, i = first_hand_with(run, "gathered")
    gathered = data["hands"][i]["gathered"]
    gathered[0], gathered[1] = gathered[1], gathered[0]
    save(f, data)
    return f.name


def edit_stock(run, other):
    f, data, i = first_hand_with(run, "stock")
    stock = data["hands"][i]["stock"]
    stock[0], stock[-1] = stock[-1], stock[0]
    save(f, data)
    return f.name


def edit_bought(run, other):
    f, data, i = first_hand_with(run, "bought")
    data["hands"][i]["bought"][0][1][0] = (data["hands"][i]["bought"][0][1][0] + 1) % 52
    save(f, data)
    return f.name


def edit_garnet_order(run, other):
    f, data, i = first_hand_with(run, "garnet")
    data["hands"][i]["garnet"].reverse()
    save(f, data)
    return f.name


def swap_dealt_cards(run, other):
    f = played(run)[0]
    data = load(f)
    deal = data["hands"][0]["deal"]
    held = [h for h in deal if h]
    held[0][0], held[1][0] = held[1][0], held[0][0]
    save(f, data)
    return f.name


def rename_beyond_the_schedule(run, other):
    f = played(run)[0]
    f.rename(f.with_name("000999.json"))
    return "000999.json"


def edit_header_rules(run, other):
    f = played(run)[0]
    data = load(f)
    data["rules"]["sedan_trumps"] = not data["rules"]["sedan_trumps"]
    save(f, data)
    return f.name


def edit_header_stack(run, other):
    f = played(run)[0]
    data = load(f)
    data["stack"] = 100
    save(f, data)
    return f.name


def edit_manifest_config_hash(run, other):
    data = load(run / MANIFEST)
    data["config_hash"] = "00000000"
    save(run / MANIFEST, data)
    return MANIFEST


def edit_skip_reason(run, other):
    f = skipped(run)[0]
    data = load(f)
    data["skipped"] = "disqualified: heuristic"
    save(f, data)
    return f.name


def played_where_skipped(run, other):
    f = skipped(run)[0]
    data = load(f)
    match = data["match"]
    # A played log of the same variant, its header dressed up as this match.
    donor = load(next(p for p in played(run) if load(p)["variant"] == match["variant"]))
    bots = load(run / MANIFEST)["tournament"]["bots"]
    donor["bots"] = [next(b for b in bots if b["alias"] == alias) for alias in match["seats"]]
    donor["match"] = match
    donor["seed"] = match["seed"]
    save(f, donor)
    return f.name


def with_stand_in(run) -> Path:
    return next(f for f in played(run) if "stand_ins" in load(f)["match"])


def drop_stand_ins(run, other):
    f = with_stand_in(run)
    data = load(f)
    del data["match"]["stand_ins"]
    save(f, data)
    return f.name


def move_stand_in(run, other):
    f = with_stand_in(run)
    data = load(f)
    data["match"]["stand_ins"] = [(data["match"]["stand_ins"][0] + 1) % len(data["match"]["seats"])]
    save(f, data)
    return f.name


def edit_summary_chips(run, other):
    f = played(run)[0]
    data = load(f)
    data["summary"]["seats"][0]["chips"] += 5
    data["summary"]["seats"][1]["chips"] -= 5
    save(f, data)
    return f.name


EDITS = [swap_aliases, swap_aliases_everywhere, match_from_another_run, delete_a_match, fake_skipped_stub,
         edit_header_index, edit_header_variant, edit_standings, swap_standings_rows, edit_manifest_seed,
         edit_manifest_config_seed, forge_summary_only_match, edit_cut, edit_gather_order, edit_stock,
         edit_bought, edit_garnet_order, swap_dealt_cards, rename_beyond_the_schedule, edit_header_rules,
         edit_header_stack, edit_manifest_config_hash, edit_skip_reason, played_where_skipped,
         edit_summary_chips, drop_stand_ins, move_stand_in]

# Edits that leave every hand's own replay intact: `report` must refuse these too.
BINDING = {swap_aliases, swap_aliases_everywhere, match_from_another_run, delete_a_match, fake_skipped_stub,
           edit_header_index, edit_header_variant, edit_standings, swap_standings_rows, edit_manifest_seed,
           edit_manifest_config_seed, forge_summary_only_match, rename_beyond_the_schedule, edit_header_rules,
           edit_header_stack, edit_manifest_config_hash, edit_skip_reason, played_where_skipped,
           drop_stand_ins, move_stand_in}


def test_the_untouched_run_verifies_and_reports(runs):
    run, _ = runs
    assert skipped(run), "the run must hold skipped stubs (broken and wrecked are disqualified)"
    with_stand_in(run)
    for key in ("gathered", "stock", "bought", "garnet"):
        first_hand_with(run, key)
    result = CliRunner().invoke(app, ["verify", str(run)])
    assert result.exit_code == 0, result.output
    assert "verify ok" in result.output
    assert CliRunner().invoke(app, ["report", str(run), "--json"]).exit_code == 0


@pytest.mark.parametrize("edit", EDITS, ids=lambda e: e.__name__)
def test_verify_catches_the_edit_and_names_the_file(runs, tmp_path, edit):
    run, other = runs
    copy = shutil.copytree(run, tmp_path / "run")
    touched = edit(copy, other)
    result = CliRunner().invoke(app, ["verify", str(copy)])
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    mismatches = [line for line in result.output.splitlines() if line.startswith("mismatch")]
    assert any(touched in line for line in mismatches), result.output
    if edit in BINDING:
        report = CliRunner().invoke(app, ["report", str(copy)])
        assert report.exit_code == 2, report.output
        assert "fails its checks" in report.output
