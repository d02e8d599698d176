"""One test per PBS-Go adapter fixture per bidder (README of ../shared/fixtures/pbs-adapters).

Run: ``.venv/bin/python -m pytest -q tests/conformance`` (``-k appnexus`` for one bidder). Without the
fixtures directory (or without a bidder's adapter module) the cases are skipped, except under
``CI=true`` where that is a failure. ``HBSERVER_PBS_FIXTURES`` points the runner at another copy. The
session ends with a table of fixtures, passed and excepted per bidder (see conftest.py).

A bidder whose PBS-Go test runs no JSON test (``GO_TEST_FACTS[...].no_json_test``, e.g. ucfunnel)
has JSON files that are bare bid requests, not fixtures: each is checked as one
(``harness.run_bare_request``: one call to the URI its facts name, every imp id, no error) and counts
as a passed case like any fixture.
"""

from __future__ import annotations

import os

import pytest

from hbserver.adapters import adapter_module
from tests.conformance.exceptions import read_exceptions
from tests.conformance.harness import (
    BIDDERS,
    GO_TEST_FACTS,
    UnknownAdapter,
    fixtures_root,
    fixtures_source,
    make_adapter,
    run_bare_request,
    run_fixture,
)
from tests.conformance.loader import fixture_paths, load_bare_request, load_fixture

ROOT = fixtures_root()
EXCEPTIONS = read_exceptions()
# A code served by another adapter's builder without fixtures of its own (mediafuse, emx_digital) runs
# that adapter's fixtures, built under its own code.
CASES = [
    pytest.param(bidder, folder, path, id=f"{bidder}/{folder}/{path.name}")
    for bidder in BIDDERS
    for folder, path in (fixture_paths(ROOT, fixtures_source(bidder)) if ROOT.is_dir() else ())
]


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def test_fixtures_present():
    if ROOT.is_dir():
        return
    message = f"PBS adapter fixtures not found at {ROOT}: conformance cases not run"
    if _in_ci():
        pytest.fail(message)
    pytest.skip(message)


def test_exceptions_name_fixtures():
    if not ROOT.is_dir():
        pytest.skip(f"PBS adapter fixtures not found at {ROOT}")
    missing = [key for key in EXCEPTIONS if not (ROOT / key).is_file()]
    assert not missing, f"EXCEPTIONS.md lists fixtures that do not exist: {missing}"


@pytest.mark.parametrize(("bidder", "folder", "path"), CASES)
def test_fixture(bidder, folder, path, record_property):
    key = f"{fixtures_source(bidder)}/{folder}/{path.name}"
    record_property("conformance_bidder", bidder)
    try:
        adapter = make_adapter(bidder)
    except UnknownAdapter:
        message = f"no adapter module {adapter_module(bidder)} yet"
        if _in_ci():
            pytest.fail(message)
        pytest.skip(message)
    facts = GO_TEST_FACTS.get(fixtures_source(bidder))
    if facts is not None and facts.no_json_test:  # a bare request, checked for what it is
        problems = run_bare_request(load_bare_request(path, bidder, folder), adapter, facts)
        assert not problems, f"{key} ({facts.no_json_test}):\n  " + "\n  ".join(problems)
        return
    fixture = load_fixture(path, bidder, folder)
    if key not in EXCEPTIONS:
        problems = run_fixture(fixture, adapter)
        assert not problems, f"{key}:\n  " + "\n  ".join(problems)
        return
    problems = run_fixture(fixture, adapter, check_error_text=False)
    assert not problems, f"{key} (excepted: error wording only):\n  " + "\n  ".join(problems)
    stale = not run_fixture(fixture, make_adapter(bidder))
    assert not stale, f"{key} passes with exact error texts: remove it from EXCEPTIONS.md"
    record_property("conformance_excepted", True)
