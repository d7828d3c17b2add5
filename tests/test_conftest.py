"""The suite's own machinery: what tests/conftest.py promises the other tests."""

from __future__ import annotations

import os

import pytest
from conftest import TERMINAL


@TERMINAL
def test_terminal_tests_share_one_worker(request: pytest.FixtureRequest) -> None:
    """Under `--dist loadgroup`, xdist runs a group on one worker by appending `@group` to the test's id; a
    pytest that ignores the renamed id (9.2 with xdist 3.8) would spread the terminal and signal tests
    over the workers, where their timing is not what they assume."""
    if "PYTEST_XDIST_WORKER" not in os.environ or not request.config.getvalue("loadgroup"):
        pytest.skip("groups apply only with xdist's --dist loadgroup")
    assert request.node.nodeid.endswith("@terminal"), request.node.nodeid
