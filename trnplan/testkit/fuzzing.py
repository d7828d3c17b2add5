"""What the fuzz tests share: hypothesis settings scaled by TRNPLAN_FUZZ_SCALE, and outcome counting.

Needs hypothesis (the `test` extra); only the fuzz tests import this module.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import event as _event
from hypothesis.control import currently_in_test_context

SCALE = float(os.environ.get("TRNPLAN_FUZZ_SCALE", "1"))
"""Multiplies every fuzz test's example count (0.1 for a quick run)."""


def event(label: str) -> None:
    """Count an outcome for --hypothesis-show-statistics (outside a hypothesis test, do nothing)."""
    if currently_in_test_context():
        _event(label)


def examples(n: int) -> settings:
    """Settings for `n` examples (times SCALE, at least 10), with no deadline: a case may parse megabytes."""
    return settings(
        max_examples=max(10, round(n * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )
