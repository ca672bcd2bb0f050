"""The run itself: every collected test has an id of its own (pytest counts progress and
lists durations by id; schemathesis's per-operation tests once shared one: see
tests/service/conftest.py)."""

from __future__ import annotations

from collections import Counter

import pytest


def test_every_test_has_an_id_of_its_own(request: pytest.FixtureRequest) -> None:
    ids = Counter(item.nodeid for item in request.session.items)
    assert [nodeid for nodeid, n in ids.items() if n > 1] == []
