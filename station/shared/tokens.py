"""API tokens: random bearer tokens, stored only as their sha256.

A token is `secrets.token_urlsafe(32)` (256 random bits), so a plain sha256 is enough
to store it (no salt or slow hash is needed against guessing). The hashes live in the
config (`[api] tokens`) and in a token file managed by `station token add/revoke`
(`[api] token_file`); the service re-reads the file when it changes, so a revoked token
stops working at once. Lookup compares hashes in constant time.

Roles: display < viewer < dealer < supervisor, each allowed what the one below is (a
`display` token reads only the table display's data: `station.api.display`); `rig` (test
rigs only, refused unless `[api] allow_rig` is on) may do everything.

The file is the service's (its user reads it, mode 0600): `station token add` run by
root (`sudo`) keeps the file's owner, group and mode, and a new file in a folder gets the
folder's owner, so the service can still read it; a service that cannot read its token
file says what to chown, at start or, running, in its log.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import pwd
import secrets
import stat
import tempfile
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
#: A new token file's mode: its hashes are the service's alone.
MODE = 0o600

log = logging.getLogger("station.tokens")


def user_name(uid: int) -> str:
    """A user's name (its number if it has none)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _owner_of(path: Path) -> str:
    try:
        return user_name(path.stat().st_uid)
    except OSError:
        return "?"


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
    except PermissionError:
        me = user_name(os.geteuid())
        raise ConfigError(
            f"token file {path}: user {me} may not read it (it is {_owner_of(path)}'s): "
            f"give it back with `sudo chown {me} {path}` (and `station token add` as "
            f"{me}, or as root, from then on)"
        ) from None
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


def write_token_file(path: Path, entries: list[TokenEntry], owner: int | None = None) -> None:
    """Rewrite the token file atomically (a crash leaves the old or the new file), with
    the old file's owner, group and mode; a new file is 0600 and, written by root, the
    folder's owner's (or `owner`'s). ConfigError, with what to run, if the folder is
    missing or the owner cannot be kept."""
    lines = ["# API tokens (sha256 only), managed by `station token add/revoke`.\n"]
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for e in entries:
        # JSON strings are valid TOML basic strings for these values.
        name, role = orjson.dumps(e.name).decode(), orjson.dumps(e.role).decode()
        lines.append(f'\n[[token]]\nname = {name}\nrole = {role}\nsha256 = "{e.sha256}"\n')
    lines.append(f"\n# written {stamp}\n")
    uid, gid, mode = _keep(path, owner)
    me = user_name(os.geteuid())
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except PermissionError:
        raise ConfigError(
            f"token file {path}: user {me} may not write in {path.parent} (it is "
            f"{_owner_of(path.parent)}'s): run `station token` as that user (sudo -u "
            f"{_owner_of(path.parent)} ...) or as root"
        ) from None
    try:
        with os.fdopen(fd, "w") as f:
            os.fchmod(f.fileno(), mode)
            if (uid, gid) != (os.geteuid(), os.getegid()):
                try:
                    os.fchown(f.fileno(), uid, gid)
                except PermissionError:
                    raise ConfigError(
                        f"token file {path} is {user_name(uid)}'s: user {me} cannot keep "
                        f"it so; run `sudo -u {user_name(uid)} station token ...` or as root"
                    ) from None
            f.write("".join(lines))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself on disk
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _keep(path: Path, owner: int | None) -> tuple[int, int, int]:
    """The owner, group and mode the rewritten file gets: the file's, else (a new file)
    `owner`'s or, for root, the folder's owner and group, else the writer's; 0600."""
    try:
        st = path.stat()
    except FileNotFoundError:
        pass
    else:
        uid = st.st_uid if owner is None else owner
        return uid, st.st_gid, stat.S_IMODE(st.st_mode)
    try:
        folder = path.parent.stat()
    except FileNotFoundError:
        raise ConfigError(missing_folder(path)) from None
    if owner is not None:
        return owner, pwd.getpwuid(owner).pw_gid, MODE
    if os.geteuid() == 0:
        return folder.st_uid, folder.st_gid, MODE
    return os.geteuid(), os.getegid(), MODE


def missing_folder(path: Path) -> str:
    """What to do when the token file's folder is not there yet."""
    return (
        f"the token file's folder {path.parent} does not exist (the service never started?): "
        f"start the service once (its unit's StateDirectory= makes it), or make it for the "
        f"service's user, as root: `station token add --owner USER ...` (e.g. --owner "
        f"baccarat) or `sudo install -d -o baccarat -g baccarat -m 0750 {path.parent}`"
    )


class TokenStore:
    """The tokens the service accepts: the config's, the token file's, and (demo only)
    tokens made at start and kept in memory as hashes."""

    def __init__(self, configured: tuple[TokenEntry, ...] = (), token_file: Path | None = None):
        self._configured = list(configured)
        self._extra: list[TokenEntry] = []
        self._file = token_file
        self._file_stamp: tuple[int, int, int] | None = None
        self._from_file: list[TokenEntry] = []
        self._problem: str | None = None  # why the file cannot be read now (said once)
        self._refresh()

    @property
    def count(self) -> int:
        """How many tokens it knows (the config's, the file's, the demo's)."""
        return len(self._configured) + len(self._from_file) + len(self._extra)

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
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = (0, 0, 0)
        if stamp != self._file_stamp:
            self._from_file = read_token_file(self._file) if stamp != (0, 0, 0) else []
            self._file_stamp = stamp

    def _refresh_running(self) -> None:
        """`_refresh` in a running service: a file it cannot read (a half-edited one, one
        re-owned by root) keeps the last good list, and the log says why, once."""
        try:
            self._refresh()
        except ConfigError as exc:
            if str(exc) != self._problem:
                log.warning(
                    "%s; until then the tokens added or revoked since are not seen (the "
                    "last list read is kept)",
                    exc,
                )
                self._problem = str(exc)
            return
        if self._problem is not None:
            log.info("token file %s: read again; its tokens are the ones in use", self._file)
            self._problem = None

    def identify(self, token: str) -> Identity | None:
        """The identity of a presented token, or None if it is unknown."""
        self._refresh_running()
        digest = token_hash(token)
        found: Identity | None = None
        for e in (*self._configured, *self._from_file, *self._extra):
            # Every entry is compared, in constant time, so timing says nothing.
            if hmac.compare_digest(digest, e.sha256):
                found = Identity(e.name, e.role)
        return found
