"""Signed runs: the organizer's Ed25519 signature over the hash of every file of a run
(manifest, standings, each match log), in the run's `signature.json`. Anyone holding the
organizer's public key can then trust the files without playing them again — time-outs
included, which a re-run can only take as given.

Keys are PEM files (`naparena keygen`); a public key may also be given as its one-line
text, `ed25519:` and the key's 32 bytes in base64.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from naparena.arena.records import jsontext
from naparena.arena.records.rundir import MANIFEST, MATCHES, SIGNATURE, STANDINGS, RunDir, write_file
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
        raise RunError("signing needs the cryptography package: pip install 'naparena[sign]'") from None
    return ed25519


def public_text(key: Ed25519PublicKey) -> str:
    """The one-line form of a public key: what an organizer publishes."""
    from cryptography.hazmat.primitives import serialization
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PREFIX + base64.b64encode(raw).decode()


def generate(path: Path) -> str:
    """Write a new private key to `path` (readable by its owner only) and its public key
    to `path.pub`; return the public key's one-line text. Never overwrites."""
    from cryptography.hazmat.primitives import serialization
    key = _crypto().Ed25519PrivateKey.generate()
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
    from cryptography.hazmat.primitives import serialization
    _crypto()  # one clear RunError where cryptography is missing; then the typed import below
    from cryptography.hazmat.primitives.asymmetric import ed25519
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except OSError as e:
        raise RunError(f"{flag} {path}: cannot read it: {e.strerror or e}") from None
    except (ValueError, TypeError) as e:
        raise RunError(f"{flag} {path}: not an unencrypted PEM private key ({e})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise RunError(f"{flag} {path}: a {type(key).__name__.removeprefix('_')}, not an Ed25519 key")
    return key


def load_public(given: str, flag: str = "--signed-by") -> Ed25519PublicKey:
    """A public key from its one-line text or a PEM file, or one RunError naming the problem."""
    from cryptography.hazmat.primitives import serialization
    _crypto()  # one clear RunError where cryptography is missing; then the typed import below
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


def file_hashes(rd: RunDir) -> dict[str, str]:
    """The SHA-256 of every canonical file of the run, by its path in the run directory."""
    paths = {MANIFEST: rd.manifest, **({STANDINGS: rd.standings} if rd.standings.exists() else {}),
             **{f"{MATCHES}/{p.name}": p for p in rd.match_files()}}
    return {name: "sha256:" + hashlib.sha256(p.read_bytes()).hexdigest() for name, p in paths.items()}


def _message(public: str, files: dict[str, str]) -> bytes:
    return CONTEXT + jsontext.dumps({"files": files, "public_key": public}, sort_keys=True, compact=True).encode()


def sign_run(run_dir: str | Path, key: Ed25519PrivateKey) -> int:
    """Sign every file of the run as it stands; return how many were signed."""
    rd = RunDir(run_dir)
    files = file_hashes(rd)
    public = public_text(key.public_key())
    signature = base64.b64encode(key.sign(_message(public, files))).decode()
    data = {"format": FORMAT, "algorithm": "ed25519", "public_key": public, "files": files, "signature": signature}
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


def check_signature(run_dir: str | Path, key: Ed25519PublicKey) -> list[tuple[str, str]]:
    """Every way the run is not as `key` signed it: (file, problem); empty when it is."""
    from cryptography.exceptions import InvalidSignature
    rd = RunDir(run_dir)
    if not rd.signature.exists():
        return [(SIGNATURE, "missing: the run is unsigned, so nothing vouches for its files (time-outs included)")]
    try:
        data = json.loads(rd.signature.read_bytes())
        public, files, signature = data["public_key"], data["files"], base64.b64decode(data["signature"])
        assert data.get("format") == FORMAT and isinstance(files, dict)
    except (OSError, ValueError, KeyError, TypeError, AssertionError, binascii.Error):
        return [(SIGNATURE, "damaged: not a naparena signature file")]
    expected = public_text(key)
    if public != expected:
        return [(SIGNATURE, f"signed by {public}, not by {expected}")]
    try:
        key.verify(signature, _message(public, files))
    except InvalidSignature:
        return [(SIGNATURE, "the signature does not match its list of files: the list was changed")]
    found = file_hashes(rd)
    out = [(name, "changed since it was signed") for name in sorted(found.keys() & files.keys())
           if found[name] != files[name]]
    out += [(name, "missing, though it was signed") for name in sorted(files.keys() - found.keys())]
    out += [(name, "not signed (added after the signature)") for name in sorted(found.keys() - files.keys())]
    return out

