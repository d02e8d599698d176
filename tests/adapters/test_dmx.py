"""DMX's own call over its recipe: the publisher and seller from the first imp, one imp per banner
and video, tagids required, an identifier required; a video bid's markup gets its nurl."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestInfo, ResponseData
from tests.adapters.helpers import requests_of

ENDPOINT = "https://dmx.example.com/b"
BANNER = {"format": [{"w": 300, "h": 250}]}
VIDEO = {"mimes": ["video/mp4"]}


def adapter() -> Any:
    return build_adapter("dmx", AdapterConfig("dmx", ENDPOINT))


def calls_for(request: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
    return requests_of(adapter(), request, RequestInfo(bidder="dmx"))


def imp(params: Any, **media: Any) -> dict[str, Any]:
    return {"id": "a", **(media or {"banner": BANNER}), "ext": {"bidder": params}}


def test_publisher_and_seller_from_the_first_imp():
    params = {"publisher_id": "p1", "seller_id": "s 1", "tagid": "t"}
    calls, bodies, errors = calls_for({"id": "r", "user": {"id": "u"}, "site": {"page": "x"}, "imp": [imp(params)]})
    assert errors == []
    assert calls[0].uri == ENDPOINT + "?sellerid=s+1"
    assert bodies[0]["site"]["publisher"] == {"id": "p1", "ext": {"dmx": {"id": "p1"}}}
    assert bodies[0]["imp"][0] == {**imp(params), "banner": {**BANNER, "w": 300, "h": 250}, "tagid": "t", "secure": 1}


def test_one_imp_per_banner_and_video():
    params = {"memberid": "m", "dmxid": "d", "bidfloor": 0.5}
    _, bodies, _ = calls_for({"id": "r", "user": {"id": "u"}, "imp": [imp(params, banner=BANNER, video=VIDEO)]})
    sent = bodies[0]["imp"]
    assert [(one["banner"].get("w"), one["video"].get("protocols")) for one in sent] == [
        (300, None),
        (None, [2, 3, 5, 6, 7, 8]),
    ]
    assert {(one["tagid"], one["bidfloor"]) for one in sent} == {("d", 0.5)}


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        (
            {"imp": [imp({"publisher_id": "p", "tagid": "t"})]},
            "No user id or app id found. Could not send request to DMX.",
        ),
        ({"user": {"id": "u"}, "imp": [imp({"tagid": "t"})]}, "Missing Params for auction to be send"),
        ({"user": {}, "imp": [imp({"publisher_id": "p", "tagid": "t"})]}, "This request contained no identifier"),
        ({"app": {"publisher": {}}, "imp": [imp({"publisher_id": "p"})]}, "This request contained no identifier"),
    ],
)
def test_requests_that_get_no_call(request_, error):
    calls, _, errors = calls_for({"id": "r", **request_})
    assert calls == []
    assert [e.message for e in errors] == [error]


@pytest.mark.parametrize(
    ("top", "sent"),
    [
        ({"app": {"publisher": {}}, "device": {"ifa": "x"}}, 1),  # the IFA becomes the app id
        ({"user": {"ext": {"eids": [{"source": "s"}]}}}, 1),
        ({"user": {"ext": {"eids": []}}}, 0),
    ],
)
def test_identifiers(top, sent):
    calls, _, _ = calls_for({"id": "r", **top, "imp": [imp({"publisher_id": "p", "tagid": "t"})]})
    assert len(calls) == sent


def test_an_imp_without_tagid_is_left_out():
    calls, bodies, _ = calls_for({"id": "r", "user": {"id": "u"}, "imp": [imp({"publisher_id": "p"})]})
    assert calls[0].imp_ids == []
    assert bodies[0]["imp"] is None


def test_video_markup_gets_the_nurl():
    request = {"id": "r", "user": {"id": "u"}, "imp": [imp({"publisher_id": "p", "tagid": "t"}, video=VIDEO)]}
    calls, _ = adapter().make_requests(request, RequestInfo(bidder="dmx"))
    bid = {"id": "b", "impid": "a", "price": 1, "nurl": "n", "adm": "<Impression>x</Impression><Impression/>"}
    result, errors = adapter().make_bids(
        request, calls[0], ResponseData(200, orjson.dumps({"seatbid": [{"bid": [bid]}]}))
    )
    assert errors == []
    assert result.bids[0].bid["adm"] == "<Impression>x</Impression><Impression><![CDATA[n]]></Impression><Impression/>"
