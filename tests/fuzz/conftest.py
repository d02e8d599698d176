"""Hypothesis profiles for the fuzz suite.

``make test`` runs the ``ci`` profile: a fixed, derandomised set of examples per test, so a run
is repeatable and fast. ``make fuzz`` runs the ``fuzz`` profile: random examples, many of them,
with the example database under .cache/hypothesis so a finding is replayed first next time.
``HBS_FUZZ_EXAMPLES`` overrides the number of examples per test in either profile.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from tests.fuzz.harness import Harness

_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
_EXAMPLES = os.environ.get("HBS_FUZZ_EXAMPLES")

settings.register_profile(
    "ci", max_examples=int(_EXAMPLES or 150), deadline=None, derandomize=True, database=None,
    suppress_health_check=_CHECKS, print_blob=True,
)
settings.register_profile(
    "fuzz", max_examples=int(_EXAMPLES or 20_000), deadline=None, derandomize=False,
    database=DirectoryBasedExampleDatabase(".cache/hypothesis"), suppress_health_check=_CHECKS, print_blob=True,
)
settings.load_profile(os.environ.get("HBS_FUZZ_PROFILE", "ci"))


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    """The application under fuzz (tests/fuzz/harness.py), one per test module."""
    h = Harness(tmp_path_factory.mktemp("fuzz"))
    yield h
    h.close()
