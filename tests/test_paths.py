"""Paths as users type them: every command that takes a run folder or file gives the same
answer for a relative, absolute, `./`, `../`, trailing-slash or symlinked spelling, run
from the folder a user would be in; runs are told apart by what they hold, never by how
they are spelt. Each comparison has a control that shows it can fail."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from naparena.arena.records.rundir import MATCHES, STANDINGS
from naparena.arena.session import Session
from tests.helpers import invoke, write_tournament

# (the folder the command is typed in, relative to the project; the run as typed there)
FORMS = [
    ("", "logs/A"),
    ("", "logs/A/"),
    ("", "./logs/A"),
    ("", "ABSOLUTE"),
    ("", "link"),
    ("", "link/"),
    ("sub", "../logs/A"),
    ("sub", "../link/"),
    ("sub/deeper", "../../logs/A/"),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder: logs/A (two seed streams), logs/half (the first stream of A's
    file: every match of it is one of A's), logs/renamed (a copy of A), logs/other (another
    seed), a link to A, and sub/deeper for typing `../` paths from."""
    root = tmp_path_factory.mktemp("project")
    for name, seeds, seed in (("A", 2, 7), ("half", 1, 7), ("other", 2, 8)):
        file = write_tournament(root / name, name="N1", seed=seed, seeds=seeds, hands=4)
        Session.open(file, root / "logs" / name, workers=1).play()
    shutil.copytree(root / "logs" / "A", root / "logs" / "renamed")
    (root / "link").symlink_to(root / "logs" / "A")
    (root / "sub" / "deeper").mkdir(parents=True)
    return root


def typed(project: Path, form: str) -> str:
    return str(project / "logs" / "A") if form == "ABSOLUTE" else form


def at(project: Path, where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project / where)


def from_project(project: Path, where: str, name: str) -> str:
    """`logs/NAME` as typed in `where` (relative to the project)."""
    return str(Path(*[".."] * len(Path(where).parts), "logs", name))


def boards(listing: dict) -> dict[str, int]:
    [entry] = listing["lists"]
    return {row["bot"]: row["boards"] for row in entry["bots"]}


def ratings(*runs: str) -> dict:
    result = invoke("ratings", "--json", *runs)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize(("where", "form"), FORMS)
def test_ratings_book_a_run_given_twice_once_however_it_is_spelt(project, monkeypatch, where, form):
    at(project, where, monkeypatch)
    alone = boards(ratings(from_project(project, where, "A")))
    twice = ratings(from_project(project, where, "A"), typed(project, form))
    assert boards(twice) == alone
    assert twice["runs"][1]["played_before"] == twice["runs"][1]["matches"]
    # Control: a run of other seeds adds its boards, so equal counts above are no accident.
    more = boards(ratings(from_project(project, where, "A"), from_project(project, where, "other")))
    assert all(more[bot] > alone[bot] for bot in alone)


@pytest.mark.parametrize("where", ["", "sub"])
def test_a_renamed_copy_and_a_run_sharing_half_its_matches_are_booked_once(project, monkeypatch, where):
    at(project, where, monkeypatch)
    a, half, copy = (from_project(project, where, n) for n in ("A", "half", "renamed"))
    alone = boards(ratings(a))
    assert boards(ratings(a, copy)) == alone
    assert boards(ratings(a, half)) == alone and boards(ratings(half, a)) == alone
    listed = ratings(half, a)["runs"]
    assert listed[1]["played_before"] * 2 == listed[1]["matches"]  # A's first stream is half's
    assert 0 < boards(ratings(half))["random"] < alone["random"]  # control: half alone has fewer


def output(*args: str) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


# Each command's answer, from which only the run's own spelling is taken out (ratings
# names each run as it was given).
COMMANDS = {
    "report": lambda run: output("report", "--json", run),
    "report tables": lambda run: output("report", "--wide", run),
    "verify": lambda run: output("verify", run),
    "compare": lambda run: output("compare", "--json", run, run),
    "ratings": lambda run: json.dumps([{k: v for k, v in r.items() if k not in ("dir", "before_in")}
                                       for r in ratings(run)["runs"]] + ratings(run)["lists"]),
    "replay": lambda run: output("replay", str(Path(run) / MATCHES / "000001.json")),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_answers_the_same_however_its_run_is_spelt(project, monkeypatch, command):
    answer = COMMANDS[command]
    monkeypatch.chdir(project)
    expected = answer("logs/A")
    assert expected == answer("logs/renamed")  # the same run by content, under another name
    # Control: another run answers otherwise (one of other seeds, or one of half the matches).
    assert {answer("logs/other"), answer("logs/half")} != {expected}
    for where, form in FORMS[1:]:
        at(project, where, monkeypatch)
        assert answer(typed(project, form)) == expected, (where, form)


def test_view_writes_the_same_page_however_its_run_is_spelt(project, monkeypatch):
    pages = []
    for n, (where, form) in enumerate(FORMS):
        at(project, where, monkeypatch)
        out = project / f"page{n}"
        out.mkdir()
        output("view", typed(project, form), "--out", str(out / "report.html"))
        pages.append((out / "report.html").read_bytes())
    assert all(page == pages[0] for page in pages)


@pytest.mark.parametrize(("where", "form"), [("", "logs/A/"), ("", "link"), ("sub", "../link/"),
                                             ("sub/deeper", "../../logs/A")])
def test_resume_ends_as_the_uninterrupted_run_however_it_is_spelt(project, monkeypatch, tmp_path, where, form):
    # An interrupted run: A with its standings and its last matches gone, reached the same ways.
    run = tmp_path / "logs" / "A"
    shutil.copytree(project / "logs" / "A", run)
    (run / STANDINGS).unlink()
    for f in sorted((run / MATCHES).iterdir())[-3:]:
        f.unlink()
    (tmp_path / "link").symlink_to(run)
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / where)
    assert json.loads(output("resume", form, "--workers", "1", "--json")) == \
        json.loads((project / "logs" / "A" / STANDINGS).read_bytes())
    assert (run / STANDINGS).read_bytes() == (project / "logs" / "A" / STANDINGS).read_bytes()


def test_a_drop_in_folder_named_from_beside_a_linked_tournament_folder_is_found(tmp_path, monkeypatch):
    """`naparena run link/t.toml --bots-dir ../real/bots`, typed in a folder beside a link
    to the tournament's folder: the drop-ins are where the user's shell says they are (the
    folder was once sought relative to the link, through `..` out of the real folder)."""
    file = write_tournament(tmp_path / "real", name="t", seeds=1, hands=2)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path / "work")
    assert file.exists()
    result = invoke("run", "link/t.toml", "--bots-dir", "../real/bots", "--workers", 1, "--log-dir", "logs")
    assert result.exit_code == 0, result.output
    # Control: a folder that does not exist is refused, naming it.
    missing = invoke("run", "link/t.toml", "--bots-dir", "../real/nothing", "--workers", 1, "--log-dir", "logs")
    assert missing.exit_code == 2 and "does not exist" in missing.output


@pytest.mark.parametrize(("where", "file"), [("", "A/N1.toml"), ("", "./A/N1.toml"), ("", "ABSOLUTE"),
                                             ("sub", "../A/N1.toml"), ("sub/deeper", "../../A//N1.toml")])
def test_verify_tournament_takes_the_file_as_typed(project, monkeypatch, where, file):
    at(project, where, monkeypatch)
    typed_file = str(project / "A" / "N1.toml") if file == "ABSOLUTE" else file
    result = invoke("verify", from_project(project, where, "A"), "--tournament", typed_file)
    assert result.exit_code == 0 and "tournament ok: 0 differences" in result.stdout, result.output
    # Control: the file of another seed is another run.
    other = str(Path(typed_file).parent.parent / "other" / "N1.toml")
    assert invoke("verify", from_project(project, where, "A"), "--tournament", other).exit_code == 1


def test_signing_keys_are_taken_as_typed(project, monkeypatch, tmp_path):
    pytest.importorskip("cryptography", reason="needs the sign extra")
    run = Path(shutil.copytree(project / "logs" / "A", tmp_path / "logs" / "A"))
    (tmp_path / "keys").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "keys")
    monkeypatch.chdir(tmp_path)
    assert invoke("keygen", "keys/organizer.key").exit_code == 0
    from naparena.arena.records.signing import load_private, sign_run
    sign_run(run, load_private(Path("keys/organizer.key")))
    for where, key in (("", "keys/organizer.key.pub"), ("", "./link/organizer.key.pub"),
                       ("sub", "../keys/organizer.key.pub"), ("sub", str(tmp_path / "link" / "organizer.key.pub"))):
        monkeypatch.chdir(tmp_path / where)
        result = invoke("verify", str(Path(from_project(tmp_path, where, "A"))), "--signed-by", key)
        assert result.exit_code == 0 and "signature ok" in result.stdout, (where, key, result.output)
    # Control: another key's signature is refused, however it is typed.
    monkeypatch.chdir(tmp_path)
    assert invoke("keygen", "keys/other.key").exit_code == 0
    assert invoke("verify", "logs/A", "--signed-by", "./keys/other.key.pub").exit_code == 1
