"""Opera Ads' own rules: the device check, one call per imp and media object with its flat copy,
and the bids' imp ids read back (the params, endpoint and wording are recipe steps)."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.operaads import build, flat_imp, origin_imp
from tests.adapters.helpers import bids_for, requests_of

ADAPTER = build(AdapterConfig("operaads", "https://o.example/{{.PublisherID}}?ep={{.AccountID}}"))
PARAMS = {"bidder": {"placementId": "pl", "endpointId": "ep", "publisherId": "pub"}}
DEVICE = {"os": "android"}


@pytest.mark.parametrize(
    ("impid", "origin"),
    [("a:opa:banner", ("a", "banner")), ("a:b:opa:video", ("a:b", "video")), ("a", ("a", "")), ("a:x", ("", "x"))],
)
def test_origin_imp(impid, origin):
    assert origin_imp(impid) == origin


@pytest.mark.parametrize(
    ("kind", "media", "want"),
    [
        ("banner", {"w": 0, "h": 5, "format": [{"w": 1, "h": 2}]}, {"w": 1, "h": 2, "format": [{"w": 1, "h": 2}]}),
        ("banner", {"w": 3, "h": 5}, {"w": 3, "h": 5}),
        ("native", {"request": '{"b":"<", "a":1}'}, {"request": '{"native":{"a":1,"b":"\\u003c"}}'}),
        ("native", {"request": '{"native":{"b":1}}'}, {"request": '{"native":{"b":1}}'}),
        ("native", {"request": ""}, {"request": ""}),
    ],
)
def test_flat_imp(kind, media, want):
    imp = {"id": "i", kind: media, "audio": {"mimes": []}, "video" if kind == "banner" else "banner": {}}
    assert flat_imp(imp, kind) == {"id": f"i:opa:{kind}", kind: want, "audio": {"mimes": []}}


@pytest.mark.parametrize(("kind", "media"), [("banner", {"w": 3}), ("native", {"request": "[1]"})])
def test_flat_imp_failures(kind, media):
    with pytest.raises(ValueError):
        flat_imp({"id": "i", kind: media}, kind)


def test_calls_per_media_object():
    imps = [
        {"id": "a", "banner": {"w": 1, "h": 1}, "native": {"request": '{"native":{}}'}, "ext": PARAMS},
        {"id": "b", "banner": {}, "ext": PARAMS},
        {"id": "c", "audio": {"mimes": ["a"]}, "ext": PARAMS},
    ]
    request = {"id": "r", "device": DEVICE, "imp": imps}
    calls, bodies, errors = requests_of(ADAPTER, request, RequestInfo("operaads"))
    assert [e.message for e in errors] == ["Size information missing for banner"]
    assert [c.imp_ids for c in calls] == [["a:opa:native"], ["a:opa:banner"]]
    assert {c.uri for c in calls} == {"https://o.example/pub?ep=ep"}
    assert [b["imp"][0]["tagid"] for b in bodies] == ["pl", "pl"]


def test_device_os_required():
    request = {"id": "r", "device": {"ua": "x"}, "imp": [{"id": "a", "banner": {"w": 1, "h": 1}, "ext": PARAMS}]}
    _, _, errors = requests_of(ADAPTER, request, RequestInfo("operaads"))
    assert [e.message for e in errors] == ["Impression is missing device OS information"]


def test_bids_read_back():
    bids = [
        {"id": "1", "impid": "a:opa:video", "price": 1},
        {"id": "2", "impid": "a:opa:banner", "price": 0},
        {"id": "3", "impid": "a", "price": 1},
    ]
    response, errors = bids_for(ADAPTER, {}, {"cur": "EUR", "seatbid": [{"bid": bids}]})
    assert not errors and response.currency == "USD"
    assert [(t.bid["impid"], t.bid_type) for t in response.bids] == [("a", "video")]
