"""The live station's tests: schemathesis's items, one per API operation, each with an id
of its own again.

pytest 9.2 builds an item's id from its original name and its parametrization only, and
schemathesis makes one item per operation with the operation in its name but not as a
parametrization: every item got the bare test's id. pytest then counted 3 tests done of
15 (the progress stopped at "[20%]"), `--durations` listed the same name again and again,
and a failure could not be told apart from its neighbours. The operation ("GET
/api/state") goes back into the id, as schemathesis names the item.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        operation = getattr(item, "operation_label", None)
        if operation is not None and not item.nodeid.endswith(f"[{operation}]"):
            item._id = item._id.with_params(operation)  # type: ignore[attr-defined]
