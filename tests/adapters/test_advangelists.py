"""Advangelists' own rules over its recipe: banners sized from their first format (which leaves the
list), no publisher or site domain sent, exactly one seatbid in the answer."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://nep.example.com/xp/get?pubid={{.PublisherID}}"
PARAMS = {"pubid": "p1", "placement": "x"}


def adapter() -> Any:
    return build_adapter("advangelists", AdapterConfig("advangelists", ENDPOINT))


def request(*imps: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"id": "r", "imp": list(imps), **top}


def imp(imp_id: str, params: Any = PARAMS, **media: Any) -> dict[str, Any]:
    return {"id": imp_id, **(media or {"video": {"mimes": ["a"]}}), "ext": {"bidder": params}}


@pytest.mark.parametrize(
    ("banner", "sent"),
    [
        ({"w": 1, "h": 2, "format": [{"w": 3, "h": 4}]}, {"w": 1, "h": 2, "format": [{"w": 3, "h": 4}]}),
        ({"format": [{"w": 3, "h": 4}, {"w": 5, "h": 6}]}, {"w": 3, "h": 4, "format": [{"w": 5, "h": 6}]}),
        ({"w": 1, "format": [{"w": 3, "h": 4}]}, {"w": 3, "h": 4}),
        ({"w": 1}, None),
    ],
)
def test_banner_sized_from_its_first_format(banner: dict[str, Any], sent: Any) -> None:
    calls, bodies, errors = requests_of(adapter(), request(imp("a", banner=banner)), RequestInfo("advangelists"))
    if sent is None:
        assert calls == [] and [e.message for e in errors] == [
            "Expected at least one banner.format entry or explicit w/h"
        ]
    else:
        assert errors == [] and bodies[0]["imp"][0]["banner"] == sent


def test_size_errors_come_after_params_errors_and_calls_go_per_pubid() -> None:
    imps = [imp("a", banner={"w": 1}), imp("b", {"pubid": ""}), imp("c"), imp("d", {"pubid": "p2"})]
    site = {"domain": "d", "page": "p", "publisher": {"id": "x"}}
    calls, bodies, errors = requests_of(adapter(), request(*imps, site=site), RequestInfo("advangelists"))
    assert [e.message for e in errors] == [
        "No pubid value provided",
        "Expected at least one banner.format entry or explicit w/h",
    ]
    assert sorted(call.uri for call in calls) == [ENDPOINT.replace("{{.PublisherID}}", p) for p in ("p1", "p2")]
    assert all(body["site"] == {"page": "p"} and "ext" not in body["imp"][0] for body in bodies)


@pytest.mark.parametrize(("seatbids", "count"), [([], 0), ([{"bid": []}, {"bid": []}], 2)])
def test_answer_needs_one_seatbid(seatbids: list[Any], count: int) -> None:
    answer, errors = bids_for(adapter(), request(imp("a")), {"id": "r", "seatbid": seatbids})
    assert answer is None and [e.message for e in errors] == [f"Invalid SeatBids count: {count}"]


def test_bids_typed_by_their_imp() -> None:
    body = {"seatbid": [{"bid": [{"id": "1", "impid": "a", "price": 1}, {"id": "2", "impid": "b", "price": 1}]}]}
    req = request(imp("a"), imp("b", banner={"w": 1, "h": 1}))
    answer, errors = bids_for(adapter(), req, body)
    assert errors == [] and answer is not None
    assert [bid.bid_type for bid in answer.bids] == ["video", "banner"]
