"""`station token add|revoke|list`: API tokens in the token file (hashes only)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from station.commands.common import add_config_option, load_config
from station.commands.options import EXIT_OK, EXIT_USAGE
from station.shared.config import ROLES


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "token",
        help="add, revoke or list API tokens",
        description="Tokens are stored as sha256 hashes in [api] token_file; "
        "a running station sees changes at once.",
    )
    tsub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    a = tsub.add_parser(
        "add",
        help="make a token (printed once, never stored)",
        description="Make a token for a name and a role, print it once, and keep only its "
        "SHA-256 in the token file; a running service reads the file again at once.",
    )
    a.add_argument(
        "--role",
        required=True,
        choices=ROLES,
        help="what the token may do, each role also what the ones before it may: "
        f"{', '.join(ROLES)} (rig needs [api] allow_rig); required",
    )
    a.add_argument(
        "--name", required=True, help="who holds it, e.g. game-server or alice; required, unique"
    )
    a.add_argument(
        "--owner",
        metavar="USER",
        default=None,
        help="as root: the service's user, who gets the token file (and its folder, made "
        "if missing, mode 0750); default: the file's owner, else the folder's",
    )
    r = tsub.add_parser(
        "revoke",
        help="remove a token by name",
        description="Remove a token by its name from the token file; a running service "
        "refuses it from then on (an open WebSocket of it is closed within a second).",
    )
    r.add_argument(
        "name", metavar="NAME", help="the token's name (as `station token list` shows it)"
    )
    ls = tsub.add_parser(
        "list",
        help="list token names and roles (the file's and the config's)",
        description="List the tokens' names and roles, from the token file and the config "
        "(never a token: only their hashes are kept).",
    )
    for q in (a, r, ls):
        add_config_option(q)
        q.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from station.live.config import ConfigError
    from station.shared.config import TokenEntry
    from station.shared.tokens import new_token, read_token_file, token_hash, write_token_file

    # Tokens connect to nothing: the broker's and the webhooks' secrets are not read.
    config = load_config(args, f"token {args.action}", secrets=False)
    if config is None:
        return EXIT_USAGE
    path = config.api.token_file
    try:
        entries = read_token_file(path)
    except ConfigError as exc:
        print(f"station token: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.action == "list":
        if not entries and not config.api.tokens:
            print(
                f"station token list: no tokens in {path} (add one with `station token add`)",
                file=sys.stderr,
            )
        for e in config.api.tokens:
            print(f"{e.name}\t{e.role}\t(config {config.source})")
        for e in entries:
            print(f"{e.name}\t{e.role}\t({path})")
        return EXIT_OK
    if args.action == "add":
        owner = _owner(args.owner, path)
        if isinstance(owner, str):
            print(f"station token add: {owner}", file=sys.stderr)
            return EXIT_USAGE
        name = args.name.strip()
        taken = {e.name for e in (*entries, *config.api.tokens)}
        if not name or name in taken:
            print(
                f"station token add: the name {args.name!r} is "
                f"{'taken' if name else 'empty'}; pick another",
                file=sys.stderr,
            )
            return EXIT_USAGE
        token = new_token()
        entry = TokenEntry(name=name, role=args.role, sha256=token_hash(token))
        try:
            write_token_file(path, [*entries, entry], owner)
        except ConfigError as exc:
            print(f"station token add: {exc}", file=sys.stderr)
            return EXIT_USAGE
        print(token)
        print(
            f"token {name!r} ({args.role}) added to {path}; it is shown only this once",
            file=sys.stderr,
        )
        if args.role == "rig" and not config.api.allow_rig:
            print("note: rig tokens are refused unless [api] allow_rig = true", file=sys.stderr)
        return EXIT_OK
    kept = [e for e in entries if e.name != args.name]
    if len(kept) == len(entries):
        where = (
            " (it is in the config: remove it there)"
            if any(e.name == args.name for e in config.api.tokens)
            else ""
        )
        print(
            f"station token revoke: no token named {args.name!r} in {path}{where}", file=sys.stderr
        )
        return EXIT_USAGE
    try:
        write_token_file(path, kept)
    except ConfigError as exc:
        print(f"station token revoke: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"token {args.name!r} revoked", file=sys.stderr)
    return EXIT_OK


def _owner(user: str | None, path: Path) -> int | str | None:
    """`--owner USER` as a user id, its folder made for it if missing (root only); or
    what is wrong, in words."""
    import grp
    import os
    import pwd

    if user is None:
        return None
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return f"--owner {user}: no such user (the service's is `baccarat` in docs/install.md)"
    if os.geteuid() != 0:
        return f"--owner {user}: only root can give a file to another user (run it with sudo)"
    if not path.parent.exists():
        path.parent.mkdir(mode=0o750, parents=True)
        os.chown(path.parent, entry.pw_uid, entry.pw_gid)
        print(
            f"made {path.parent} for {user}:{grp.getgrgid(entry.pw_gid).gr_name} (mode 0750)",
            file=sys.stderr,
        )
    return entry.pw_uid
