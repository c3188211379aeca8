"""Schemas that are recognised but cannot be replayed yet (exit status 2, one line).

The other systems' reference folders of ``shared/reference`` (SchedInspector, CQSim/DRAS,
DeepRM, split window) each have their own layout; until the system lands, a file of theirs is
reported as ``schema '<name>' is not supported yet`` instead of "unknown schema".  When a
system is implemented, its recogniser here is replaced by a real schema module (see
:mod:`jaxsched.conformance`).
"""

from __future__ import annotations

from collections.abc import Callable

from jaxsched.conformance.base import SchemaNotSupported


class Pending:
    """A recognised schema without a checker: ``check`` raises :class:`SchemaNotSupported`.

    A document with a ``"schema"`` string is recognised by that tag alone (it starts with
    ``tag``); one without, by ``test(doc)`` on its layout."""

    def __init__(self, name: str, description: str, tag: str, test: Callable[[dict], bool]):
        self.NAME, self.DESCRIPTION, self._tag, self._test = name, description, tag, test

    def matches(self, doc) -> bool:
        if not isinstance(doc, dict):
            return False
        if isinstance(doc.get("schema"), str):
            return doc["schema"].startswith(self._tag)
        return bool(self._test(doc))

    def check(self, doc, traces_dir, **kwargs):
        raise SchemaNotSupported(f"schema {self.NAME!r} ({self.DESCRIPTION}) is not supported yet")

    def __repr__(self) -> str:
        return f"Pending({self.NAME!r})"


def _first_row(doc) -> dict:
    rows = doc.get("results")
    return rows[0] if isinstance(rows, list) and rows and isinstance(rows[0], dict) else {}


SCHEMAS = ()  # cqsim-reference: jaxsched.conformance.cqsim
