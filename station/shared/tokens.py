"""API tokens: random bearer tokens, stored only as their sha256.

A token is `secrets.token_urlsafe(32)` (256 random bits), so a plain sha256 is enough
to store it (no salt or slow hash is needed against guessing). The hashes live in the
config (`[api] tokens`) and in a token file managed by `station token add/revoke`
(`[api] token_file`); the service re-reads the file when it changes, so a revoked token
stops working at once. Lookup compares hashes in constant time.

Roles: display < viewer < dealer < supervisor, each allowed what the one below is (a
`display` token reads only the table display's data: `station.api.display`); `rig` (test
rigs only, refused unless `[api] allow_rig` is on) may do everything.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson
from pydantic import ValidationError

from station.shared.config import ROLES, TokenEntry
from station.shared.sections import ConfigError, describe

#: display < viewer < dealer < supervisor < rig
RANK = {role: rank for rank, role in enumerate(ROLES)}


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def allows(role: str, needed: str) -> bool:
    """Whether a token of `role` may do what needs `needed`."""
    return RANK[role] >= RANK[needed]


@dataclass(frozen=True)
class Identity:
    """Who a request is: the token's name and role."""

    name: str
    role: str


def read_token_file(path: Path) -> list[TokenEntry]:
    """The tokens of a token file; a missing file has none."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return []
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"token file {path}: {exc}") from exc
    entries = []
    for i, item in enumerate(data.get("token", [])):
        try:
            entries.append(TokenEntry.model_validate(item))
        except ValidationError as exc:
            raise ConfigError(
                describe(exc, TokenEntry, (f"token {i + 1}",), source=f"token file {path}")
            ) from None
    return entries


def write_token_file(path: Path, entries: list[TokenEntry]) -> None:
    """Rewrite the token file atomically (a crash leaves the old or the new file)."""
    lines = ["# API tokens (sha256 only), managed by `station token add/revoke`.\n"]
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for e in entries:
        # JSON strings are valid TOML basic strings for these values.
        name, role = orjson.dumps(e.name).decode(), orjson.dumps(e.role).decode()
        lines.append(f'\n[[token]]\nname = {name}\nrole = {role}\nsha256 = "{e.sha256}"\n')
    lines.append(f"\n# written {stamp}\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("".join(lines))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class TokenStore:
    """The tokens the service accepts: the config's, the token file's, and (demo only)
    tokens made at start and kept in memory as hashes."""

    def __init__(self, configured: tuple[TokenEntry, ...] = (), token_file: Path | None = None):
        self._configured = list(configured)
        self._extra: list[TokenEntry] = []
        self._file = token_file
        self._file_stamp: tuple[int, int] | None = None
        self._from_file: list[TokenEntry] = []
        self._refresh()

    def add_memory(self, name: str, role: str) -> str:
        """A new token held only in memory (demo tokens); returns the token."""
        token = new_token()
        self._extra.append(TokenEntry(name=name, role=role, sha256=token_hash(token)))
        return token

    def _refresh(self) -> None:
        if self._file is None:
            return
        try:
            st = os.stat(self._file)
            stamp = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = (0, 0)
        if stamp != self._file_stamp:
            self._from_file = read_token_file(self._file) if stamp != (0, 0) else []
            self._file_stamp = stamp

    def identify(self, token: str) -> Identity | None:
        """The identity of a presented token, or None if it is unknown."""
        with contextlib.suppress(ConfigError):  # a half-edited file: keep the last good list
            self._refresh()
        digest = token_hash(token)
        found: Identity | None = None
        for e in (*self._configured, *self._from_file, *self._extra):
            # Every entry is compared, in constant time, so timing says nothing.
            if hmac.compare_digest(digest, e.sha256):
                found = Identity(e.name, e.role)
        return found
