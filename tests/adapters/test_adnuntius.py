"""Adnuntius adapter: its own rules (the fixtures cover the rest): ad units and networks, the query
(tzo from the clock, GDPR to the extra-info URL, noCookies, eids as Go writes them), the winning
unit per imp, prices in thousands, net/gross bids, sizes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from hbserver.adapters.adnuntius import build, eids_json
from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from tests.adapters.helpers import requests_of

INFO = RequestInfo(bidder="adnuntius")


def adapter(offset_minutes: int = 0):
    built = build(AdapterConfig("adnuntius", "http://adn.example/i", {"extra_info": "http://eu.example/i"}))
    built.now = lambda: datetime(2016, 1, 1, tzinfo=timezone(timedelta(minutes=offset_minutes)))
    return built


def imp(imp_id: str = "i", params=None, **media) -> dict:
    return {"id": imp_id, **(media or {"banner": {"w": 300, "h": 250}}), "ext": {"bidder": params or {"auId": "9"}}}


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        (
            [imp("a", {"auId": "1", "network": "n1"}), imp("b", {"auId": "2", "network": "n2"})],
            [["1-a:banner"], ["2-b:banner"]],
        ),
        ([imp("a", {"auId": "1"}), imp("b", {"auId": "2", "network": "default"})], [["1-a:banner", "2-b:banner"]]),
        ([imp("a", banner={"format": [{"w": 1, "h": 2}]}, native={"request": "{}"})], [["9-a:banner", "9-a:native"]]),
        ([imp("a", audio={})], []),
    ],
)
def test_ad_units_by_network(imps, want):
    calls, bodies, errors = requests_of(adapter(), {"id": "r", "imp": imps}, INFO)
    assert errors == []
    assert sorted([unit["targetId"] for unit in body["adUnits"]] for body in bodies) == want
    assert all(call.imp_ids == [i["id"] for i in imps] for call in calls)


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        ({"banner": {"format": [{"w": 300, "h": 250}, {"w": 728}]}}, {"dimensions": [[300, 250], [728, 0]]}),
        ({"banner": {"w": 300, "h": 600}}, {"dimensions": [[300, 600]]}),
        ({"banner": {"w": 300}}, {}),
        ({"native": {"request": '{"ver":"1.2"}'}}, {"adType": "NATIVE", "nativeRequest": {"ortb": {"ver": "1.2"}}}),
        ({"native": {"request": "null"}}, {"adType": "NATIVE"}),
    ],
)
def test_ad_unit(fields, want):
    _, bodies, _ = requests_of(adapter(), {"id": "r", "imp": [imp("a", {"auId": "1"}, **fields)]}, INFO)
    unit = bodies[0]["adUnits"][0]
    assert {key: value for key, value in unit.items() if key not in ("auId", "targetId")} == {
        "nativeRequest": {},
        **want,
    }


@pytest.mark.parametrize(
    ("top", "offset", "want_base", "want_query"),
    [
        ({}, 0, "http://adn.example/i", {"format": ["prebidServer"], "tzo": ["0"]}),
        ({}, 120, "http://adn.example/i", {"format": ["prebidServer"], "tzo": ["-120"]}),
        ({}, -300, "http://adn.example/i", {"format": ["prebidServer"], "tzo": ["300"]}),
        (
            {"regs": {"ext": {"gdpr": 1}}, "user": {"ext": {"consent": "C"}}},
            0,
            "http://eu.example/i",
            {"gdpr": ["1"], "consentString": ["C"], "format": ["prebidServer"], "tzo": ["0"]},
        ),
        ({"regs": {"ext": {"gdpr": 2}}}, 0, "http://adn.example/i", {"format": ["prebidServer"], "tzo": ["0"]}),
        (
            {"device": {"ext": {"noCookies": True}}},
            0,
            "http://adn.example/i",
            {"format": ["prebidServer"], "noCookies": ["true"], "tzo": ["0"]},
        ),
        (
            {"user": {"ext": {"eids": [{"source": "s", "uids": []}]}}},
            0,
            "http://adn.example/i",
            {"format": ["prebidServer"], "tzo": ["0"]},
        ),
    ],
)
def test_query(top, offset, want_base, want_query):
    calls, _, errors = requests_of(adapter(offset), {"id": "r", "imp": [imp()], **top}, INFO)
    assert errors == []
    parts = urlsplit(calls[0].uri)
    assert (f"{parts.scheme}://{parts.netloc}{parts.path}", parse_qs(parts.query)) == (want_base, want_query)
    assert list(parse_qs(parts.query)) == sorted(want_query)


def test_eids_as_go_writes_them():
    eids = [
        {
            "inserter": "",
            "matcher": "m",
            "mm": 3,
            "source": "a&b",
            "uids": [{"id": "x", "atype": 0, "ext": {"k": 1}}],
            "ext": None,
        }
    ]
    assert eids_json(eids) == '[{"matcher":"m","mm":3,"source":"a\\u0026b","uids":[{"id":"x","ext":{"k":1}}]}]'


@pytest.mark.parametrize(
    ("request_patch", "want"),
    [
        (
            {"imp": [imp(params={"auId": "1", "bidType": 1})]},
            (
                ErrorCode.BAD_INPUT,
                "Error unmarshalling ExtImpValues: cannot unmarshal openrtb_ext.ImpExtAdnunitus.BidType: "
                'expects " or n, but found 1',
            ),
        ),
        (
            {"imp": [imp(video={"w": 1})]},
            (ErrorCode.BAD_INPUT, "ignoring imp id=i, Adnuntius supports only native and banner"),
        ),
        (
            {"imp": [imp(native={"request": ""})]},
            (ErrorCode.BAD_INPUT, "Error unmarshalling Native: do not know how to skip: 0"),
        ),
        ({"user": {"ext": "x"}}, (ErrorCode.UNKNOWN, 'failed to parse Ext User: expect { or n, but found "')),
        (
            {"site": {"ext": 1}},
            (
                ErrorCode.UNKNOWN,
                "failed to parse site Ext: [failed to parse site ext in Adnuntius: expect { or n, but found 1]",
            ),
        ),
        (
            {"device": {"ext": {"noCookies": "yes"}}},
            (
                ErrorCode.BAD_INPUT,
                "failed to parse URL: [failed to parse device ext: cannot unmarshal "
                'adnuntius.extDeviceAdnuntius.NoCookies: expect t or f, but found "]',
            ),
        ),
    ],
)
def test_refused(request_patch, want):
    calls, _, errors = requests_of(adapter(), {"id": "r", "imp": [imp()], **request_patch}, INFO)
    assert (calls, [(e.code, e.message) for e in errors]) == ([], [want])


def ad(ad_id: str, amount: float, **fields) -> dict:
    base = {
        "adId": ad_id,
        "creativeWidth": "300",
        "creativeHeight": "250",
        "bid": {"amount": amount, "currency": "NOK"},
    }
    return {**base, **fields}


def answer(*units) -> bytes:
    return orjson.dumps({"adUnits": list(units)})


@pytest.mark.parametrize(
    ("params", "units", "want"),
    [
        (
            {"auId": "9"},
            [
                {"targetId": "9-i:banner", "matchedAdCount": 1, "html": "B", "ads": [ad("b", 1.5)]},
                {"targetId": "9-i:native", "matchedAdCount": 1, "nativeJson": {"ortb": {"v": 1}}, "ads": [ad("n", 2)]},
            ],
            [("n", 2000, "native", '{"v":1}')],
        ),
        ({"auId": "9"}, [{"targetId": "9-i", "matchedAdCount": 0, "ads": [ad("b", 1)]}], []),
        ({"auId": "8"}, [{"targetId": "9-i", "matchedAdCount": 1, "ads": [ad("b", 1)]}], []),
        (
            {"auId": "9", "bidType": "NET"},
            [
                {
                    "targetId": "9-i",
                    "matchedAdCount": 1,
                    "html": "H",
                    "ads": [ad("b", 1, netBid={"amount": 0.5})],
                    "deals": [ad("d", 3, html="D")],
                }
            ],
            [("b", 500, "banner", "H"), ("d", 0, "banner", "D")],
        ),
    ],
)
def test_bids(params, units, want):
    request = {"imp": [imp(params=params)]}
    response, errors = adapter().make_bids(request, RequestData("POST", "u"), ResponseData(200, answer(*units)))
    assert errors == []
    assert response is not None
    assert [(t.bid["id"], t.bid["price"], t.bid_type, t.bid.get("adm")) for t in response.bids] == want
    assert response.currency == ("NOK" if want else "USD")


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (400, b"", (ErrorCode.BAD_INPUT, "Status code: 400, Request malformed")),
        (204, b"", (ErrorCode.BAD_SERVER_RESPONSE, "Status code: 204, Something went wrong with your request")),
        (
            200,
            answer({"targetId": "9-i", "matchedAdCount": 1, "ads": [ad("b", 1, creativeWidth="x")]}),
            (ErrorCode.BAD_SERVER_RESPONSE, "Value of width: x is not a string"),
        ),
        (
            200,
            answer({"targetId": "9-i", "matchedAdCount": 1, "nativeJson": {}, "ads": [ad("b", 1)]}),
            (ErrorCode.BAD_SERVER_RESPONSE, "Failed to parse native json where imp id=i"),
        ),
        (
            200,
            answer({"ads": [{"creativeHeight": 250}]}),
            (ErrorCode.UNKNOWN, 'cannot unmarshal adnuntius.Ad.CreativeHeight: expects " or n, but found 2'),
        ),
    ],
)
def test_failed_answers(status, body, want):
    response, errors = adapter().make_bids({"imp": [imp()]}, RequestData("POST", "u"), ResponseData(status, body))
    assert response is None
    assert [(e.code, e.message) for e in errors] == [want]


def test_the_clock_defaults_to_local_time():
    built = build(AdapterConfig("adnuntius", "http://adn.example/i"))
    assert built.now().tzinfo is not None
    assert abs(built.now().astimezone(UTC) - datetime.now(UTC)) < timedelta(minutes=1)
