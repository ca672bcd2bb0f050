"""The schema versions of the files the programs keep: one place, which the schemas use and
`station --version` prints (the upgrade steps compare them before and after).

A newer station migrates an older file at start, step by step; an older station refuses a
newer file. Raise a number here with the migration that goes with it (and a CHANGELOG
line). Nothing is imported: `station --version` stays as quick as Python's start.
"""

from __future__ import annotations

#: The station's journal (`station.live.journal.schema`), in SQLite's `user_version`.
JOURNAL = 4
#: The floor archive (`station.floor.schema`), in SQLite's `user_version`.
ARCHIVE = 6
