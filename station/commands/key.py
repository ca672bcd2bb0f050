"""`station key init|show|rotate`: the station's signing key (`[journal] signing_key`).

`init` makes the key pair: the private key a new file (mode 0600, never overwritten), the
public key printed, for whoever verifies the journal (`station journal verify
--public-key`, the floor). `show` prints the public key again. `rotate` hands over to a new
key while the old one is at hand: the old key endorses the new one (the endorsement is
public, appended to `<signing_key>.rotations`), the new key takes the old one's file, and
the old key is gone. Only the running station writes the journal, so the hand-over is
journaled at its next start: a `signing key rotated` notice carrying the endorsement,
signed by the new key, which signs every row from there.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from station.commands.common import add_config_option, load_config
from station.commands.options import EXIT_OK, EXIT_USAGE


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "key",
        help="make, show or rotate the key that signs the journal",
        description="The station's Ed25519 key pair: the private key at [journal] "
        "signing_key signs every journal row; the public key checks them "
        "(`station journal verify --public-key`).",
    )
    ksub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    init = ksub.add_parser(
        "init",
        help="make the key pair and print the public key",
        description="Write a new private key to [journal] signing_key (mode 0600; an "
        "existing file is never overwritten) and print its public key.",
    )
    show = ksub.add_parser(
        "show",
        help="print the public key",
        description="Print the public key of [journal] signing_key (its fingerprint on stderr).",
    )
    rotate = ksub.add_parser(
        "rotate",
        help="hand over to a new key",
        description="Make a new key, have the old one endorse it (appended to "
        "<signing_key>.rotations), put it in the old one's place and destroy the old one. "
        "Restart the station: it journals the hand-over at its next start.",
    )
    for q in (init, show, rotate):
        add_config_option(q)
        q.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from station.shared.signing import SigningError

    prog = f"key {args.action}"
    config = load_config(args, prog, secrets=False)
    if config is None:
        return EXIT_USAGE
    path = config.journal.signing_key
    if path is None:
        print(
            f"station {prog}: [journal] signing_key is not set in {config.source}: give it "
            'the key\'s file (e.g. signing_key = "journal-key.pem", beside the config) and '
            "run again",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        if args.action == "init":
            return _init(path)
        if args.action == "show":
            return _show(path)
        rotations = config.journal.rotations
        assert rotations is not None
        return _rotate(path, rotations)
    except SigningError as exc:
        print(f"station {prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _init(path: Path) -> int:
    from station.shared.signing import SigningKey

    key = SigningKey.generate()
    key.save(path)
    print(key.public.text)
    print(
        f"signing key written to {path} (mode 0600; keep a copy offline); its fingerprint "
        f"is {key.public.fingerprint}; give the public key above to whoever verifies the "
        "journal",
        file=sys.stderr,
    )
    return EXIT_OK


def _show(path: Path) -> int:
    from station.shared.signing import SigningKey

    public = SigningKey.load(path).public
    print(public.text)
    print(f"fingerprint {public.fingerprint} ({path})", file=sys.stderr)
    return EXIT_OK


def _rotate(path: Path, rotations: Path) -> int:
    """The new key is written beside the old one first, the endorsement recorded, and only
    then the new key renamed over the old: an interruption leaves the old key in place
    (and `<path>.new`, which a next rotate refuses until it is removed)."""
    from station.live.journal.keys import add_endorsement
    from station.shared.keychain import Endorsement
    from station.shared.signing import SigningError, SigningKey

    old = SigningKey.load(path)
    new = SigningKey.generate()
    staged = path.with_name(path.name + ".new")
    if staged.exists():
        raise SigningError(
            f"{staged} exists: a rotation was interrupted; remove it and rotate again"
        )
    new.save(staged)
    add_endorsement(rotations, Endorsement(old.public, new.public, old.endorse(new.public)))
    os.replace(staged, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    print(new.public.text)
    print(
        f"key {old.public.fingerprint} handed over to {new.public.fingerprint} (endorsed "
        f"in {rotations}); the old key is destroyed. Restart the station: it journals the "
        "hand-over at its next start and signs with the new key from there. Verify with the "
        "new public key above",
        file=sys.stderr,
    )
    return EXIT_OK
