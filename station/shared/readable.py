"""Why a file cannot be read by this process's user, in words an operator can act on.

"Permission denied" alone does not say which of the folders on the way is closed, to
whom, or what to run; a service installed as root for another user meets it first (a
config folder made 0750 root:root for a service that runs as `baccarat`).
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def why_unreadable(path: str | Path) -> str:
    """Which part of `path` this user may not pass (a folder) or read (the file), who owns
    it with what mode, and the command that lets the user's group in."""
    me, group = _name(os.geteuid()), _group(os.getegid())
    target = Path(path).absolute()
    for part in (*reversed(target.parents), target):
        is_file = part == target
        if os.access(part, os.R_OK if is_file else os.X_OK):
            continue
        try:
            st = part.stat()
        except OSError:
            break
        what = "read" if is_file else "open the folder"
        bits = "g+r" if is_file else "g+rx"
        return (
            f"user {me} may not {what} {part} (owner {_name(st.st_uid)}, group "
            f"{_group(st.st_gid)}, mode {stat.S_IMODE(st.st_mode):04o}): let the "
            f"service's group in with `sudo chgrp {group} {part} && sudo chmod {bits} {part}`"
        )
    return f"user {me} may not read it"
