"""Processes as another user than the test's (root's): the service's user of a production
install, for the tests of what `sudo` does to the files the service reads."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import pytest

from station.cli import main

SERVICE_UID = 65534  # nobody: the service's user in these tests (it owns the state folder)
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root, as `sudo` gives")


def state_folder() -> Path:
    """A folder of the service's user's, which it can reach (tmp_path's parents are
    root's 0700): remove it after."""
    folder = Path(tempfile.mkdtemp(prefix="tokens-", dir="/tmp"))
    os.chmod(folder, 0o750)
    os.chown(folder, SERVICE_UID, SERVICE_UID)
    return folder


def read_as_service(path: Path) -> subprocess.CompletedProcess[bytes]:
    """The token file read by the service's user (not root), as the station would."""
    return subprocess.run(
        ["cat", str(path)],
        user=SERVICE_UID,
        group=SERVICE_UID,
        extra_groups=[],
        capture_output=True,
        check=False,
    )


def in_child_as(uid: int, argv: list[str]) -> tuple[int, str]:
    """`station ARGV` in a forked child that has become user `uid` (this checkout's
    Python is under root's home, which the user cannot reach to start one of its own);
    its exit status and stderr."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.dup2(write, 2)
            os.setgroups([])  # not root's group 0 any more
            os.setgid(uid)
            os.setuid(uid)
            sys.stderr = os.fdopen(2, "w", closefd=False)
            code = main(argv)
            sys.stderr.flush()
        except BaseException:  # say what, for the test's message
            traceback.print_exc()
            sys.stderr.flush()
            code = 99
        os._exit(code)
    os.close(write)
    with os.fdopen(read) as f:
        err = f.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), err
