"""Proof that a property test met the cases it is about.

A property that holds "whenever a deny applies" also holds when hypothesis never generated a deny that
applies. A :class:`Tally` counts each interesting case as the test meets it (and reports it to hypothesis
with ``event``, shown by ``--hypothesis-show-statistics``); :meth:`Tally.require` then fails the test when a
case came up less often than it must::

    def test_deny_always_wins() -> None:
        seen = Tally()

        @given(...)
        def check(spec, request) -> None:
            assume(a_deny_applies)
            seen("a server deny applies" if ... else "a tool deny applies")
            ...

        check()
        seen.require({"a server deny applies": 50, "a tool deny applies": 50})

Minimums are set well under the counts a run sees (hypothesis is random): they catch a generator that
stopped producing a case, not a slightly unlucky run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from hypothesis import event

__all__ = ["Tally"]


class Tally:
    """How many times each labelled case came up while a property ran."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def __call__(self, label: str) -> None:
        event(label)
        self.counts[label] += 1

    def require(self, minimums: Mapping[str, int]) -> None:
        """Fail unless every labelled case came up at least its minimum number of times."""
        short = {label: self.counts[label] for label, least in minimums.items() if self.counts[label] < least}
        assert not short, (
            f"too few of the cases this property is about: {short} (needed {dict(minimums)}; all counts "
            f"{dict(self.counts)}); the generator no longer produces them often enough for the test to mean anything"
        )
