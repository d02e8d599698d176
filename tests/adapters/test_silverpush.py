"""SilverPush adapter: one call per imp, floors, banner sizes, video checks, publisher, user eids,
device facts from the user agent, and bid typing by mtype."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo, ResponseData
from hbserver.adapters.silverpush import build, device_type_of, os_of
from tests.adapters.helpers import requests_of

ENDPOINT = "http://localhost:8080/bidder/?identifier=5krH8Q"
ADAPTER = build(AdapterConfig("silverpush", ENDPOINT))
INFO = RequestInfo(bidder="silverpush")
PARAMS = {"publisherId": "pub"}
VIDEO = {"mimes": ["v"], "api": [1], "protocols": [2]}


def _one(imp_fields, params=PARAMS, **top):
    imp = {"id": "i", **imp_fields, "ext": {"bidder": params}}
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": [imp], **top}, INFO)
    return calls, bodies, errors


def test_one_call_per_imp():
    imps = [{"id": n, "banner": {"w": 1, "h": 1}, "ext": {"bidder": PARAMS}} for n in "ab"]
    calls, bodies, errors = requests_of(ADAPTER, {"id": "r", "imp": imps}, INFO)
    assert errors == []
    assert [(c.uri, c.imp_ids, c.headers["X-Openrtb-Version"]) for c in calls] == [
        (ENDPOINT, ["a"], "2.5"),
        (ENDPOINT, ["b"], "2.5"),
    ]
    assert bodies[0]["ext"] == {"bc": "sp_pb_ortb_1.0.0", "publisherId": "pub"}


@pytest.mark.parametrize(
    ("media", "params", "want"),
    [
        ({"banner": {"w": 1, "h": 1}}, PARAMS, 0.05),
        ({"video": VIDEO}, PARAMS, 0.1),
        ({"banner": {"w": 1, "h": 1}}, {**PARAMS, "bidfloor": 2.5}, 2.5),
        ({"native": {"request": "{}"}, "bidfloor": 0.3}, PARAMS, 0.3),
    ],
)
def test_floor(media, params, want):
    _, bodies, errors = _one(media, params)
    assert errors == [] and bodies[0]["imp"][0]["bidfloor"] == want


@pytest.mark.parametrize(
    ("media", "want"),
    [
        ({"banner": {"w": 1, "h": 1}, "video": VIDEO}, set()),  # PBS-Go's copy drops both
        ({"banner": {"format": [{"w": 3, "h": 4}]}}, {"banner"}),
        ({"video": VIDEO}, {"video"}),
    ],
)
def test_media_kept(media, want):
    _, bodies, _ = _one(media)
    assert {kind for kind in ("banner", "video") if kind in bodies[0]["imp"][0]} == want


@pytest.mark.parametrize(
    ("video", "want", "error"),
    [
        (VIDEO, {"maxduration": 120}, None),
        ({**VIDEO, "minduration": 10, "maxduration": 5}, {"maxduration": 10}, None),
        ({**VIDEO, "minduration": 3, "maxduration": 30}, {"minduration": 3, "maxduration": 30}, None),
        ({"mimes": ["v"], "api": [1]}, None, "Invalid or missing video field(s)"),
        ({**VIDEO, "minduration": -1, "maxduration": 5}, None, "Invalid or missing video field(s)"),
    ],
)
def test_video(video, want, error):
    calls, bodies, errors = _one({"video": video})
    if error:
        assert calls == [] and [(e.code, e.message) for e in errors] == [(ErrorCode.BAD_INPUT, error)]
        return
    sent = bodies[0]["imp"][0]["video"]
    assert {key: sent[key] for key in want} == want and ("minduration" in sent) == ("minduration" in want)


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"w": 0, "h": 5, "format": [{"w": 1, "h": 2}]}, (0, 5)),
        ({"format": [{"w": 1, "h": 2}]}, (1, 2)),
        ({"w": 9, "format": [{"w": 1, "h": 2}]}, (1, 2)),
        ({"format": []}, None),
    ],
)
def test_banner_size(banner, want):
    calls, bodies, errors = _one({"banner": banner})
    if want is None:
        assert calls == [] and errors[0].message == "No sizes provided for Banner."
    else:
        sent = bodies[0]["imp"][0]["banner"]
        assert (sent["w"], sent["h"]) == want


@pytest.mark.parametrize(
    ("top", "want"),
    [
        (
            {"site": {"publisher": {"id": "x", "name": "n"}}, "app": {"publisher": {"id": "y"}}},
            ("site", {"id": "pub", "name": "n"}),
        ),
        ({"site": {"page": "p"}}, ("site", {"id": "pub"})),
        ({"app": {"publisher": {"id": "y", "name": "n"}}}, ("app", {"id": "pub"})),
    ],
)
def test_publisher(top, want):
    _, bodies, _ = _one({"banner": {"w": 1, "h": 1}}, **top)
    place, publisher = want
    assert bodies[0][place]["publisher"] == publisher


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"publisherId": ""}, "Missing publisherId parameter."),
        ({"publisherId": 5}, "cannot unmarshal openrtb_ext.ImpExtSilverpush.PublisherId"),
        ({"publisherId": "p", "bidfloor": "1"}, "cannot unmarshal openrtb_ext.ImpExtSilverpush.BidFloor"),
        (7, "expect { or n, but found 7"),
    ],
)
def test_bad_params(params, want):
    calls, _, errors = _one({"banner": {"w": 1, "h": 1}}, params)
    assert calls == [] and errors[0].code == ErrorCode.BAD_INPUT and errors[0].message.startswith(want)


EIDS = [{"source": "s", "uids": [{"id": "u", "atype": 1}]}]


@pytest.mark.parametrize(
    ("ext", "want_ext", "error"),
    [
        ({"data": {"eids": EIDS}}, {"eids": EIDS}, None),
        ({"data": {"eids": [{"source": "s", "uids": [{"id": ""}]}]}}, "same", None),
        ({"eids": EIDS}, "same", None),
        ({"data": None}, "same", None),
        (99, None, "Invalid user.ext."),
        ({"data": 9}, None, "Invalid user.ext.data."),
        ({"data": {"eids": "x"}}, None, "Invalid user.ext.data."),
    ],
)
def test_user_eids(ext, want_ext, error):
    calls, bodies, errors = _one({"banner": {"w": 1, "h": 1}}, user={"id": "u", "ext": ext})
    if error:
        assert calls == [] and errors[0].message == error
    else:
        assert bodies[0]["user"]["ext"] == (ext if want_ext == "same" else want_ext)


@pytest.mark.parametrize(
    ("ua", "os", "device_type"),
    [
        ("Mozilla/5.0 (Windows NT 10.0; Win64; x64)", "Windows", 2),
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 14_0 like Mac OS X)", "iOS", 1),
        ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)", "macOS", 2),
        ("Mozilla/5.0 (Linux; Android 11; CPH2209)", "Android", 1),
        ("Mozilla/5.0 (X11; smarttv Linux x86_64)", "Linux", 3),
        ("Roku/DVP-9.10", "Unknown", 3),
    ],
)
def test_device_from_ua(ua, os, device_type):
    assert (os_of(ua), device_type_of(ua)) == (os, device_type)
    _, bodies, _ = _one({"banner": {"w": 1, "h": 1}}, device={"ua": ua, "os": "x"})
    assert (bodies[0]["device"]["os"], bodies[0]["device"]["devicetype"]) == (os, device_type)


@pytest.mark.parametrize(("mtype", "want"), [(1, "banner"), (2, "video"), (4, ""), (None, "")])
def test_bid_type(mtype, want):
    bid = {"id": "b", "impid": "i", "price": 1, **({"mtype": mtype} if mtype else {})}
    body = orjson.dumps({"id": "r", "cur": "EUR", "seatbid": [{"bid": [bid]}]})
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(200, body))
    assert errors == [] and response is not None and response.currency == "EUR"
    assert [typed.bid_type for typed in response.bids] == [want]


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", None),
        (400, b"{}", (ErrorCode.BAD_INPUT, "Unexpected status code: 400. Run with request.debug = 1 for more info")),
        (500, b"{}", (ErrorCode.BAD_INPUT, "Unexpected status code: 500. Run with request.debug = 1 for more info")),
        (200, b'"x"', (ErrorCode.UNKNOWN, 'expect { or n, but found "')),
    ],
)
def test_no_answer(status, body, want):
    response, errors = ADAPTER.make_bids({}, RequestData("POST", ENDPOINT), ResponseData(status, body))
    assert response is None
    assert [(e.code, e.message) for e in errors] == ([want] if want else [])
