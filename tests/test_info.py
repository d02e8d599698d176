"""/info/bidders, /info/bidders/{name} and /bidders/params (PBS-Go's shapes), against the real app."""

from __future__ import annotations

import json
import os

import pytest

from hbserver.adapters.params import SCHEMAS
from hbserver.bidders import BUILTIN_ADAPTERS, BUILTIN_ALIASES, BUILTIN_CODES, PBS_JAVA_SPELLINGS
from hbserver.bidders.registry import read_definitions

HOST = {"adapters": {"mybidder": {"alias_of": "generic", "endpoint": "https://bids.example/ortb"},
                     "appnexus": {"disabled": True}}}
# disabled by default (PBS's bidder-info: ix, rubicon, magnite, appStockSSP, selectmedia) or by HOST
DISABLED = frozenset({code for code, d in read_definitions().items() if d.get("disabled")} | {"appnexus"})


def go_sorted(codes) -> list[str]:
    return sorted(codes, key=lambda code: code.encode())


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", lambda: BUILTIN_CODES | {"mybidder"}),
        ("?enabledonly=false", lambda: BUILTIN_CODES | {"mybidder"}),
        ("?baseadaptersonly=true", lambda: BUILTIN_ADAPTERS),
        ("?enabledonly=TRUE", lambda: (BUILTIN_CODES | {"mybidder"}) - DISABLED),
        ("?enabledonly=true&baseadaptersonly=true", lambda: BUILTIN_ADAPTERS - DISABLED),
    ],
    ids=["all", "enabledonly-false", "base-only", "enabled-only", "both"],
)
async def test_bidder_list(make_client, query, expected):
    client = await make_client(HOST)
    response = await client.get("/info/bidders" + query)
    assert response.status == 200
    assert response.content_type == "application/json"
    assert await response.json() == go_sorted(expected())


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("?enabledonly=yes", "Invalid value for 'enabledonly' query param, must be of boolean type"),
        ("?baseadaptersonly=1", "Invalid value for 'baseadaptersonly' query param, must be of boolean type"),
    ],
)
async def test_bidder_list_bad_flag(make_client, query, text):
    client = await make_client()
    response = await client.get("/info/bidders" + query)
    assert response.status == 400
    assert await response.text() == text


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("adform", {"status": "ACTIVE", "usesHttps": True, "maintainer": {"email": "scope.sspp@adform.com"},
                    "capabilities": {"app": {"mediaTypes": ["banner", "native", "video"]},
                                     "site": {"mediaTypes": ["banner", "native", "video"]}},
                    "aliasOf": "adf", "openrtb": {"version": "2.5", "gpp-supported": False}}),
        ("PubMatic", {"status": "ACTIVE", "usesHttps": True, "maintainer": {"email": "header-bidding@pubmatic.com"},
                      "capabilities": {"app": {"mediaTypes": ["banner", "video", "native"]},
                                       "site": {"mediaTypes": ["banner", "video", "native"]}},
                      "openrtb": {"version": "2.6", "gpp-supported": True}, "endpointCompression": "gzip"}),
        ("appnexus", {"status": "DISABLED", "maintainer": {"email": "prebid@microsoft.com"}}),
        ("mybidder", {"status": "ACTIVE", "usesHttps": True,
                      "capabilities": {"app": {"mediaTypes": ["banner", "video", "native", "audio"]},
                                       "site": {"mediaTypes": ["banner", "video", "native", "audio"]},
                                       "dooh": {"mediaTypes": ["banner", "video", "native", "audio"]}},
                      "aliasOf": "generic", "openrtb": {"version": "2.5", "gpp-supported": False}}),
    ],
    ids=["catalogue-alias", "case-insensitive", "disabled", "host-alias"],
)
async def test_bidder_detail(make_client, name, expected):
    client = await make_client(HOST)
    response = await client.get(f"/info/bidders/{name}")
    assert response.status == 200
    assert await response.json() == expected


async def test_bidder_detail_all_and_unknown(make_client):
    client = await make_client(HOST)
    everything = await (await client.get("/info/bidders/all")).json()
    assert set(everything) == BUILTIN_CODES | {"mybidder"}
    assert everything["epsilon"]["aliasOf"] == "conversant"
    response = await client.get("/info/bidders/nosuchbidder")
    assert response.status == 404
    assert await response.text() == "unknown bidder: nosuchbidder"
    response = await client.get("/info/bidders/" + "x" * 300)
    assert response.status == 404
    assert len(await response.text()) < 100


async def test_bidder_params(make_client):
    client = await make_client(HOST)
    response = await client.get("/bidders/params")
    assert response.status == 200
    schemas = await response.json()
    assert set(schemas) == BUILTIN_CODES | {"mybidder"}
    assert schemas["criteo"] == json.loads((SCHEMAS / "criteo.json").read_text())
    for alias in BUILTIN_ALIASES:  # an alias is validated by its adapter's schema
        assert schemas[alias] == schemas[alias_parent(alias)]
    assert schemas["mybidder"] == schemas["generic"] == {"type": "object"}


def alias_parent(code: str) -> str:
    from hbserver.bidders.registry import read_definitions

    return read_definitions()[code]["alias_of"]


async def test_every_pbs_go_code_is_served(make_client):
    """/info/bidders against PBS-Go's bidder-info names (each bidder's and its aliases' files under
    ../shared/fixtures/pbs-adapters): every PBS-Go code is served, and the only others are hbserver's
    ``generic`` and PBS-Java's spellings of PBS-Go codes."""
    from tests.conformance.harness import fixtures_root

    root = fixtures_root()
    if not root.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"PBS fixtures not found at {root}")
        pytest.skip(f"PBS fixtures not found at {root}")
    pbs_go = {path.parent.name for path in root.glob("*/bidder-info.yaml")}
    pbs_go |= {path.stem for path in root.glob("*/aliases/*.yaml")}
    client = await make_client()
    served = set(await (await client.get("/info/bidders")).json())
    assert len(pbs_go) == 385
    assert not pbs_go - served, f"PBS-Go codes hbserver lacks: {sorted(pbs_go - served)}"
    assert served - pbs_go == {"generic", *PBS_JAVA_SPELLINGS}


@pytest.mark.parametrize(("spelling", "code"), sorted(PBS_JAVA_SPELLINGS.items()))
async def test_pbs_java_spellings_are_aliases(make_client, spelling, code):
    client = await make_client()
    detail = await (await client.get(f"/info/bidders/{spelling}")).json()
    served = await (await client.get(f"/info/bidders/{code}")).json()
    assert detail["aliasOf"] == code
    assert {key: value for key, value in detail.items() if key != "aliasOf"} == served
