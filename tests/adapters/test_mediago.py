"""MediaGo adapter: endpoint macros from the first imp's token and region, banner sizes from the
first format, the token requirement, and bid typing by mtype then imp."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.mediago import build
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("mediago", "https://{{.Host}}.mediago.io/api/bid?tn={{.AccountID}}"))
INFO = RequestInfo(bidder="mediago")


def imp(imp_id: str = "i", banner: Any = None, **params: Any) -> dict[str, Any]:
    return {"id": imp_id, "banner": banner or {"w": 1, "h": 2}, "ext": {"bidder": {"token": "t", **params}}}


@pytest.mark.parametrize(
    ("params", "uri"),
    [
        ({"region": "APAC"}, "https://jp.mediago.io/api/bid?tn=t"),
        ({"region": "EU"}, "https://eu.mediago.io/api/bid?tn=t"),
        ({"region": "xx"}, "https://us.mediago.io/api/bid?tn=t"),
        ({"token": "a/b c&d"}, "https://us.mediago.io/api/bid?tn=a%2Fb%20c&d"),
    ],
)
def test_endpoint(params, uri):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp(**params), imp("j", token="other")]}, INFO)
    assert errors == []
    assert [(c.uri, c.imp_ids, c.headers["X-Openrtb-Version"]) for c in calls] == [(uri, ["i", "j"], "2.5")]


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": [{"w": 3, "h": 4}, {"w": 5, "h": 6}]}, {"w": 3, "h": 4}),
        ({"w": 0, "h": 7, "format": [{"w": 3, "h": 4}]}, {"w": 3, "h": 4}),
        ({"w": 1, "h": 2, "format": [{"w": 3, "h": 4}]}, {"w": 1, "h": 2}),
        ({"format": [{"h": 4}]}, {"w": 0, "h": 4}),
        ({"w": 0}, {"w": 0}),
    ],
)
def test_banner_size(banner, want):
    _, bodies, _ = requests_of(ADAPTER, {"id": "r", "imp": [imp(banner=banner)]}, INFO)
    sent = bodies[0]["imp"][0]["banner"]
    assert {key: sent[key] for key in ("w", "h") if key in sent} == want


@pytest.mark.parametrize(
    ("imps", "error"),
    [
        ([imp(token="")], "mediago token not found"),
        ([{"id": "i", "ext": "x"}], 'expect { or n, but found "'),
        ([{"id": "i", "ext": {"bidder": "x"}}], 'expect { or n, but found "'),
        ([], "mediago token not found"),
    ],
)
def test_refused(imps, error):
    calls, _, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert calls == []
    assert [e.message for e in errors] == [error]


@pytest.mark.parametrize(
    ("mtype", "media", "kind"),
    [
        (1, "video", "banner"),
        (4, "video", "native"),
        (2, "banner", "banner"),
        (0, "native", "native"),
        (2, "video", None),
    ],
)
def test_bid_type(mtype, media, kind):
    bid = {"id": "b", "impid": "i", "price": 1, "mtype": mtype}
    response, errors = bids_for(ADAPTER, {"imp": [{"id": "i", media: {}}]}, {"id": "r", "seatbid": [{"bid": [bid]}]})
    assert response is not None
    assert [t.bid_type for t in response.bids] == ([kind] if kind else [])
    assert [(e.message, e.code) for e in errors] == (
        [] if kind else [(f"Unsupported MType {mtype}", ErrorCode.BAD_SERVER_RESPONSE)]
    )
