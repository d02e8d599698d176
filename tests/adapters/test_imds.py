"""IMDS's own rules over its recipe: the request's ext becomes {"seatId": <the first sent imp's>},
the endpoint is the first sent imp's, and only banner and video bids are kept."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters import build_adapter
from hbserver.adapters.base import AdapterConfig, RequestData, RequestInfo, ResponseData
from tests.adapters.helpers import requests_of

ENDPOINT = "http://imds.example.com/bids/{{.AccountID}}?src={{.SourceId}}"


def imp(imp_id: str, seat: str, tag: str = "t", **media: Any) -> dict[str, Any]:
    return {"id": imp_id, **(media or {"banner": {"w": 1, "h": 1}}), "ext": {"bidder": {"seatId": seat, "tagId": tag}}}


def adapter() -> Any:
    return build_adapter("imds", AdapterConfig("imds", ENDPOINT))


@pytest.mark.parametrize(
    ("imps", "uri", "ext", "errors"),
    [
        (
            [imp("a", "s 1"), imp("b", "s2")],
            "http://imds.example.com/bids/s+1?src=pbs-go%2F1.0.0",
            {"seatId": "s 1"},
            0,
        ),
        ([imp("a", ""), imp("b", "s2")], "http://imds.example.com/bids/s2?src=pbs-go%2F1.0.0", {"seatId": "s2"}, 1),
    ],
)
def test_request_ext_and_endpoint_from_the_first_sent_imp(imps, uri, ext, errors):
    request = {"id": "r", "imp": imps, "ext": {"prebid": {"debug": True}}}
    calls, bodies, errs = requests_of(adapter(), request, RequestInfo(bidder="imds"))
    assert [call.uri for call in calls] == [uri]
    assert bodies[0]["ext"] == ext
    assert len(errs) == errors


@pytest.mark.parametrize(
    ("media", "impid", "want"),
    [
        ({"banner": {}}, "a", "banner"),
        ({"video": {}}, "a", "video"),
        ({"native": {}}, "a", None),  # let go silently
        ({"audio": {}}, "a", None),
        ({"video": {}}, "zzz", "banner"),  # no such imp: banner
    ],
)
def test_only_banner_and_video_bids_are_kept(media, impid, want):
    request = {"id": "r", "imp": [imp("a", "s", **media)]}
    answer = {"seatbid": [{"bid": [{"id": "b", "impid": impid, "price": 1}]}]}
    response, errors = adapter().make_bids(
        request, RequestData("POST", ENDPOINT), ResponseData(200, orjson.dumps(answer))
    )
    assert errors == []
    assert [bid.bid_type for bid in response.bids] == ([want] if want else [])
