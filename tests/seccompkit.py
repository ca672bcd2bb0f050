"""A unit's `SystemCallFilter=` applied to a process, as systemd would, with libseccomp
through ctypes (no systemd needed, only `libseccomp.so.2` and `systemd-analyze` for the
groups' members).

What it models: the unit's deny lines (`~@privileged @resources`) and the allow lines
after them (which put calls back), over a filter that allows the rest; a call denied
fails with the unit's `SystemCallErrorNumber` (EPERM). The first allow-list line
(`@system-service`) is not modelled: it allows all that Python and the station use.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.systemdkit import unit_keys

LIBSECCOMP = ctypes.util.find_library("seccomp")
needs_seccomp = pytest.mark.skipif(
    LIBSECCOMP is None or shutil.which("systemd-analyze") is None,
    reason="needs libseccomp2 and systemd-analyze",
)
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO = 0x00050000


@functools.cache
def group(name: str) -> frozenset[str]:
    """A systemd syscall group's calls, nested groups expanded."""
    out = subprocess.run(
        ["systemd-analyze", "syscall-filter", name], capture_output=True, text=True, check=True
    ).stdout
    calls: set[str] = set()
    for line in out.splitlines()[1:]:
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        calls |= group(word) if word.startswith("@") else {word}
    return frozenset(calls)


def names(words: str) -> set[str]:
    found: set[str] = set()
    for word in words.split():
        found |= group(word) if word.startswith("@") else {word}
    return found


def denied_calls(unit: Path) -> set[str]:
    """The calls the unit's filter refuses, of those its deny lines name."""
    lines = unit_keys(unit)["Service"]["SystemCallFilter"]
    denied: set[str] = set()
    for line in lines[1:]:  # the first: the allow list itself
        if line.startswith("~"):
            denied |= names(line[1:])
        else:
            denied -= names(line)
    return denied


def apply_filter(denied: set[str]) -> None:
    """In this process (for good, its children too): each call of `denied` fails with
    EPERM. Meant for a child process's first lines (`python -c`)."""
    lib = ctypes.CDLL(LIBSECCOMP or "libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    assert ctx, "seccomp_init failed"
    for call in sorted(denied):
        number = lib.seccomp_syscall_resolve_name(call.encode())
        if number < 0:  # not a call of this architecture
            continue
        rc = lib.seccomp_rule_add(ctx, SCMP_ACT_ERRNO | errno.EPERM, number, 0)
        assert rc == 0, (call, rc)
    assert lib.seccomp_load(ctx) == 0, "seccomp_load failed"
