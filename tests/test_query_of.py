"""hbserver.web.query.query_of against aiohttp's request.query, row by row and at random."""

from __future__ import annotations

import random

import pytest
from aiohttp.test_utils import make_mocked_request

from hbserver.web.query import query_of

ROWS = [
    ("/setuid", {}),
    ("/setuid?", {}),
    ("/setuid?bidder=appnexus&uid=u-1&gdpr=0&f=i", {"bidder": "appnexus", "uid": "u-1", "gdpr": "0", "f": "i"}),
    ("/event?t=win&t=imp", {"t": "win"}),  # the first value wins, as MultiDict.get
    ("/event?a&b=&c=1=2", {"a": "", "b": "", "c": "1=2"}),
    ("/event?x=a+b&y+z=1", {"x": "a b", "y z": "1"}),
    ("/event?&&x=1&&", {"x": "1"}),
    ("/event?=v&x=1", {"x": "1"}),  # the empty name is not kept
    ("/event?uid=a%20b&x=%2B", {"uid": "a b", "x": "+"}),  # percent-escapes: yarl decodes
    ("/event?x=1#frag", {"x": "1"}),  # a fragment: yarl drops it
]


@pytest.mark.parametrize(("target", "expected"), ROWS)
def test_rows(target: str, expected: dict[str, str]) -> None:
    request = make_mocked_request("GET", target)
    found = query_of(request)
    assert {name: found.get(name) for name in expected} == expected
    assert {name for name in found if name} == set(expected)


def test_random_queries_read_as_aiohttp_reads_them() -> None:
    rng = random.Random(7)
    alphabet = "ab=&+ %2Bc#"
    for _ in range(400):
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        request = make_mocked_request("GET", "/x?" + query)
        try:
            reference = make_mocked_request("GET", "/x?" + query).query
        except ValueError:
            continue
        found = query_of(request)
        for name in reference:
            if name:
                assert found.get(name) == reference.get(name), query
        assert {n for n in found if n} == {n for n in reference if n}, query
