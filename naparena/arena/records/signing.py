"""Signed runs: the organizer's Ed25519 signature over the hash of every file of a run
(manifest, standings, each match log), in the run's `signature.json`. Anyone holding the
organizer's public key can then trust the files without playing them again — time-outs
included, which a re-run can only take as given.

A signature vouches only for what was checked. A session with the key signs what it
played when it ends, finished or interrupted (an unfinished run's signature says so,
and covers its checkpoints); `resume --sign` first holds every file an earlier session
wrote to that record (`vouch_for_earlier`): a file changed since is refused by name, and
one no record covers is replayed, and refused if the replay differs or it holds a
time-out (time is what a replay cannot check). The manifest names the signer
(`signed_by`), so plain `verify` says when a signed run has lost its signature.

Keys are PEM files (`naparena keygen`); a public key may also be given as its one-line
text, `ed25519:` and the key's 32 bytes in base64. A private key others may read is
refused, as ssh refuses it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from naparena.arena.records import jsontext
from naparena.arena.records.checkpoint import hands_path
from naparena.arena.records.rundir import (
    CHECKPOINTS,
    MANIFEST,
    MATCHES,
    SIGNATURE,
    SIGNED_BY,
    STANDINGS,
    RunDir,
    write_file,
)
from naparena.arena.records.verify import time_dependent, verify_match
from naparena.errors import RunError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

FORMAT = 1
PREFIX = "ed25519:"
# Signed with the statement, so a signature made for anything else never passes here.
CONTEXT = b"naparena run signature 1\n"


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise RunError("signing needs the cryptography package, which this install lacks: "
                       "pip install 'naparena[sign]'") from None
    return ed25519


def public_text(key: Ed25519PublicKey) -> str:
    """The one-line form of a public key: what an organizer publishes."""
    from cryptography.hazmat.primitives import serialization
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PREFIX + base64.b64encode(raw).decode()


def generate(path: Path) -> str:
    """Write a new private key to `path` (readable by its owner only) and its public key
    to `path.pub`; return the public key's one-line text. Never overwrites."""
    ed25519 = _crypto()  # one clear RunError where cryptography is missing, before any other import of it
    from cryptography.hazmat.primitives import serialization
    key = ed25519.Ed25519PrivateKey.generate()
    public = Path(f"{path}.pub")
    for p in (path, public):
        if p.exists():
            raise RunError(f"{p} exists; keygen never overwrites a key")
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(private_pem)
    except OSError as e:
        raise RunError(f"{path}: cannot write it: {e.strerror or e}") from None
    write_file(public, key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return public_text(key.public_key())


def load_private(path: Path, flag: str = "--sign") -> Ed25519PrivateKey:
    """The private key in PEM file `path`, or one RunError naming the flag, file and problem."""
    _crypto()  # one clear RunError where cryptography is missing; then the typed imports below
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    _owner_only(Path(path), flag)
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except OSError as e:
        raise RunError(f"{flag} {path}: cannot read it: {e.strerror or e}") from None
    except (ValueError, TypeError) as e:
        raise RunError(f"{flag} {path}: not an unencrypted PEM private key ({e})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise RunError(f"{flag} {path}: a {type(key).__name__.removeprefix('_')}, not an Ed25519 key")
    return key


def _owner_only(path: Path, flag: str) -> None:
    """Refuse a private key that anyone but its owner may read or write, as ssh does
    ("UNPROTECTED PRIVATE KEY FILE ... will be ignored"): a key others could read is not
    the organizer's alone, and whatever it signs proves nothing."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return  # reading it says why
    if mode & 0o077:
        raise RunError(f"{flag} {path}: its permissions {mode:04o} let others read or change it; a private key "
                       f"must be its owner's alone (chmod 600 {path}), as ssh requires")


def load_public(given: str, flag: str = "--signed-by") -> Ed25519PublicKey:
    """A public key from its one-line text or a PEM file, or one RunError naming the problem."""
    _crypto()  # one clear RunError where cryptography is missing; then the typed imports below
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    if given.startswith(PREFIX):
        try:
            return ed25519.Ed25519PublicKey.from_public_bytes(base64.b64decode(given[len(PREFIX):], validate=True))
        except (ValueError, binascii.Error) as e:
            raise RunError(f"{flag} {given}: not an Ed25519 public key ({e})") from None
    try:
        key = serialization.load_pem_public_key(Path(given).read_bytes())
    except OSError as e:
        raise RunError(f"{flag} {given}: cannot read it: {e.strerror or e} (give a public key file or "
                       f"its text, {PREFIX}…)") from None
    except ValueError as e:
        raise RunError(f"{flag} {given}: not a PEM public key ({e})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise RunError(f"{flag} {given}: a {type(key).__name__.removeprefix('_')}, not an Ed25519 key")
    return key


def file_hashes(rd: RunDir, checkpoints: bool = False) -> dict[str, str]:
    """The SHA-256 of every canonical file of the run, by its path in the run directory;
    with `checkpoints`, of its part-played matches' checkpoint files too."""
    paths = {MANIFEST: rd.manifest, **({STANDINGS: rd.standings} if rd.standings.exists() else {}),
             **{f"{MATCHES}/{p.name}": p for p in rd.match_files()}}
    if checkpoints:
        paths.update(_checkpoint_files(rd))
    return {name: _hash(p) for name, p in paths.items()}


def _hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _checkpoint_files(rd: RunDir) -> dict[str, Path]:
    return {f"{CHECKPOINTS}/{p.name}": p for p in sorted(rd.checkpoint_files()) if p.suffix in (".json", ".hands")
            and p.is_file()}


def _message(public: str, files: dict[str, str], complete: bool = True) -> bytes:
    statement: dict[str, Any] = {"files": files, "public_key": public}
    if not complete:  # said only where it applies: a finished run's statement is as it always was
        statement["complete"] = False
    return CONTEXT + jsontext.dumps(statement, sort_keys=True, compact=True).encode()


def sign_run(run_dir: str | Path, key: Ed25519PrivateKey, complete: bool = True) -> int:
    """Sign every file of the run as it stands; return how many were signed. An unfinished
    run (`complete` false: interrupted) is signed as far as it went, its checkpoints too,
    for `resume --sign` to hold the files to."""
    rd = RunDir(run_dir)
    files = file_hashes(rd, checkpoints=not complete)
    public = public_text(key.public_key())
    signature = base64.b64encode(key.sign(_message(public, files, complete))).decode()
    data: dict[str, Any] = {"format": FORMAT, "algorithm": "ed25519", "public_key": public, "files": files,
                            "signature": signature}
    if not complete:
        data["complete"] = False
    write_file(rd.signature, (jsontext.dumps(data, indent=1, sort_keys=True) + "\n").encode())
    return len(files)


def signer(run_dir: str | Path) -> str | None:
    """The public key a run's signature file names (not checked), or None if unsigned."""
    rd = RunDir(run_dir)
    if not rd.signature.exists():
        return None
    try:
        data = json.loads(rd.signature.read_bytes())
        return str(data["public_key"])
    except (OSError, ValueError, KeyError, TypeError):
        return "(unreadable)"


def _record(rd: RunDir, key: Ed25519PublicKey) -> tuple[dict[str, str], bool] | tuple[str, str]:
    """The files the run's signature by `key` vouches for and whether it is a finished run's;
    or (file, problem) where there is no such valid signature."""
    from cryptography.exceptions import InvalidSignature
    if not rd.signature.exists():
        return (SIGNATURE, "missing: the run is unsigned, so nothing vouches for its files (time-outs included)")
    try:
        data = json.loads(rd.signature.read_bytes())
        public, files, signature = data["public_key"], data["files"], base64.b64decode(data["signature"])
        complete = data.get("complete", True)
        assert data.get("format") == FORMAT and isinstance(files, dict) and isinstance(complete, bool)
    except (OSError, ValueError, KeyError, TypeError, AssertionError, binascii.Error):
        return (SIGNATURE, "damaged: not a naparena signature file")
    expected = public_text(key)
    if public != expected:
        return (SIGNATURE, f"signed by {public}, not by {expected}")
    try:
        key.verify(signature, _message(public, files, complete))
    except InvalidSignature:
        return (SIGNATURE, "the signature does not match its list of files: the list was changed")
    return files, complete


def check_signature(run_dir: str | Path, key: Ed25519PublicKey) -> list[tuple[str, str]]:
    """Every way the run is not as `key` signed it: (file, problem); empty when it is. An
    unfinished run's signature (interrupted) vouches for its files so far."""
    rd = RunDir(run_dir)
    record = _record(rd, key)
    if isinstance(record[0], str):
        return [(record[0], str(record[1]))]
    files, complete = record
    assert isinstance(files, dict)
    found = file_hashes(rd, checkpoints=not complete)
    out = [(name, "changed since it was signed") for name in sorted(found.keys() & files.keys())
           if found[name] != files[name]]
    out += [(name, "missing, though it was signed") for name in sorted(files.keys() - found.keys())]
    out += [(name, "not signed (added after the signature)") for name in sorted(found.keys() - files.keys())]
    return out


def complete(run_dir: str | Path) -> bool:
    """Whether the run's signature (if any) is a finished run's, as the file says (not checked)."""
    try:
        return json.loads(RunDir(run_dir).signature.read_bytes()).get("complete", True) is not False
    except (OSError, ValueError, AttributeError):
        return True


def lost_signature(run_dir: str | Path) -> str | None:
    """What plain `verify` says of a run whose manifest names its signer but whose
    signature file is gone (None: it is there, or the run was never signed)."""
    rd = RunDir(run_dir)
    try:
        by = rd.read_manifest().get(SIGNED_BY)
    except RunError:
        return None
    if by is None or rd.signature.exists():
        return None
    return f"missing: the manifest says the run is signed by {by}, but {SIGNATURE} is gone"


def vouch_for_earlier(run_dir: str | Path, key: Ed25519PrivateKey) -> list[int]:
    """Before `resume --sign` plays: hold every file an earlier session wrote to what the
    run's signature by this key recorded. A file changed since is refused (a `RunError`
    naming it); a match file no record covers is replayed, and refused if the replay
    differs or it holds a time-out or a hang (which only a record vouches for); a
    checkpoint no record covers is refused if its hands hold one. Returns the matches
    continued from such a checkpoint: `vouch_for_continued` replays them once played."""
    rd = RunDir(run_dir)
    record = _record(rd, key.public_key())
    files: dict[str, str] = record[0] if isinstance(record[0], dict) else {}
    problems: list[tuple[str, str]] = []
    on_disk = {MANIFEST: rd.manifest, **{f"{MATCHES}/{p.name}": p for p in rd.match_files()},
               **_checkpoint_files(rd)}
    continued = []
    for name, path in on_disk.items():
        if name in files:
            if _hash(path) != files[name]:
                problems.append((name, "changed since it was signed (while the run was interrupted?)"))
            continue
        if name.startswith(MATCHES + "/"):
            problems += [(name, p) for p in _replayed(path)]
        elif name.startswith(CHECKPOINTS + "/") and path.suffix == ".json":
            problems += [(name, p) for p in _checkpoint_problems(path)]
            continued.append(int(path.stem))
    if problems:
        raise RunError(_refusal(run_dir, problems))
    return continued


def vouch_for_continued(run_dir: str | Path, matches: list[int]) -> None:
    """After `resume --sign` played: the matches it continued from a checkpoint no record
    covered replay to their logs (their first hands were an earlier session's)."""
    rd = RunDir(run_dir)
    problems = [(f"{MATCHES}/{rd.match_path(i).name}", p) for i in matches if rd.has_match(i)
                for p in _replayed(rd.match_path(i))]
    if problems:
        raise RunError(_refusal(run_dir, problems) + "; the run is finished, unsigned")


def _replayed(path: Path) -> list[str]:
    from naparena.arena.records.logs import read_match
    try:
        logged = read_match(path)
    except RunError as e:
        return [str(e).removeprefix(f"{path}: ")]
    found = verify_match(logged)
    hangs, time_outs = time_dependent(logged.data)
    if time_outs or hangs:
        n = len(time_outs) + len(hangs)
        found.append(f"holds {n} time-out(s) or hang(s), which no replay can check and no signature of this run "
                     "vouches for (played by a session without --sign)")
    return found


def _checkpoint_problems(path: Path) -> list[str]:
    """A checkpoint's hands (as far as its state vouches) holding a time-dependent fault."""
    try:
        size = json.loads(path.read_bytes())["body_bytes"]
        body = hands_path(path).read_bytes()[:size]
        hands = json.loads(b"[" + body[:-1] + b"]") if body else []
    except (OSError, ValueError, KeyError, TypeError):
        return ["an unreadable checkpoint"]
    _, time_outs = time_dependent({"hands": hands})
    if time_outs:
        return [f"its first hands hold {len(time_outs)} time-out(s), which no signature of this run vouches for"]
    return []


def _refusal(run_dir: str | Path, problems: list[tuple[str, str]]) -> str:
    name, problem = problems[0]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return (f"{run_dir}: not signing: {name}: {problem}{more}; a signature vouches only for files this key "
            f"signed or that replay as logged (naparena verify {run_dir} checks them)")
