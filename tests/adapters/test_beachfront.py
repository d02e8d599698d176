"""Beachfront adapter: the video endpoint from extra info, params errors, which imps go where, floors
and currencies, the display and video bodies, shared headers, PBS-Go's removal of failed video imps,
status texts, the two answer shapes, nurl creative ids and video durations."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestData, RequestInfo
from hbserver.adapters.beachfront import build
from tests.adapters.helpers import bids_for, converter, imp_with, requests_of

DISPLAY = "https://display.example/prebid_display"
VIDEO = "https://video.example/bid.json?exchange_id"
EXTRA = {"extra_info": '{"video_endpoint":"https://video.example/bid.json?exchange_id"}'}
INFO = RequestInfo(bidder="beachfront")
SITE = {"page": "https://news.example/a/b.html"}
NO_APP_ID = "unable to determine the appId(s) from the supplied extension"


def adapter(extra: dict[str, Any] | None = None):
    return build(AdapterConfig("beachfront", DISPLAY, EXTRA if extra is None else extra))


def banner_imp(imp_id: str = "b", params: Any = None, **fields: Any) -> dict:
    media = {"banner": {"format": [{"w": 300, "h": 250}]}}
    return imp_with(imp_id, {"appId": "bApp"} if params is None else params, fields, media)


def video_imp(imp_id: str = "v", params: Any = None, **fields: Any) -> dict:
    media = {"video": {"mimes": ["video/mp4"], "w": 640, "h": 480}}
    return imp_with(imp_id, {"appId": "vApp"} if params is None else params, fields, media)


def run(request: dict, info: RequestInfo = INFO, extra: dict[str, Any] | None = None):
    calls, bodies, errors = requests_of(adapter(extra), {"id": "r", **request}, info)
    return calls, bodies, [e.message for e in errors]


def by_uri(calls, bodies) -> dict[str, Any]:
    return {call.uri: body for call, body in zip(calls, bodies, strict=True)}


# --- the video endpoint ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "uri"),
    [
        (EXTRA, VIDEO + "=vApp"),
        ({}, "https://reachms.bfmio.com/bid.json?exchange_id=vApp"),  # no extra info: the default
        ({"extra_info": '{"video_endpoint":""}'}, "https://reachms.bfmio.com/bid.json?exchange_id=vApp"),
        ({"extra_info": '{"Video_Endpoint":"https://x/y?e"}'}, "https://x/y?e=vApp"),  # Go's field match
    ],
)
def test_video_endpoint_from_extra_info(extra, uri):
    calls, _, errors = run({"site": SITE, "imp": [video_imp()]}, extra=extra)
    assert errors == []
    assert [call.uri for call in calls] == [uri]


@pytest.mark.parametrize("extra_info", ["malformed", "[]", '{"video_endpoint": 5}'])
def test_malformed_extra_info_refuses_to_build(extra_info):
    with pytest.raises(ValueError, match=r"^invalid extra info: "):
        adapter({"extra_info": extra_info})


# --- params and imps -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("imp", "message"),
    [
        (
            {"id": "x", "video": {"w": 1, "h": 1}},
            "ignoring imp id=x, error while decoding extImpBidder, err: expect { or n, but found \x00",
        ),
        (
            video_imp("x", {"appId": 12}),
            "ignoring imp id=x, error while decoding extImpBeachfront, err: cannot unmarshal "
            'openrtb_ext.ExtImpBeachfront.AppId: expects " or n, but found 1',
        ),
        (
            video_imp("x", {"bidfloor": True, "appId": 12}),  # the first faulty value is named
            "ignoring imp id=x, error while decoding extImpBeachfront, err: cannot unmarshal "
            "openrtb_ext.ExtImpBeachfront.BidFloor: invalid number",
        ),
        (
            video_imp("x", {"appIds": "v"}),
            "ignoring imp id=x, error while decoding extImpBeachfront, err: cannot unmarshal "
            'openrtb_ext.ExtImpBeachfront.AppIds: expect { or n, but found "',
        ),
        (
            video_imp("x", {"appIds": {"video": ["v"]}}),
            "ignoring imp id=x, error while decoding extImpBeachfront, err: cannot unmarshal "
            'openrtb_ext.ExtImpBeachfrontAppIds.Video: expects " or n, but found [',
        ),
        (video_imp("x", {"appId": ""}), NO_APP_ID),
        (video_imp("x", {"appIds": {"banner": "b"}}), NO_APP_ID),  # a video needs a video app id
        (banner_imp("x", {"appIds": {"video": "v"}}), NO_APP_ID),
        (video_imp("x", None, ext={"bidder": None}), NO_APP_ID),  # null params decode as empty
    ],
)
def test_params_errors_drop_the_imp(imp, message):
    calls, _, errors = run({"site": SITE, "imp": [imp, video_imp("ok")]})
    assert errors == [message]
    assert [call.imp_ids for call in calls] == [["ok"]]


@pytest.mark.parametrize(
    ("params", "banner_app", "video_app", "video_uri_tail"),
    [
        ({"appId": "one"}, "one", "one", ""),
        ({"appIds": {"banner": "b1", "video": "v1"}, "videoResponseType": "nurl"}, "b1", "v1", "&prebidserver"),
        ({"appIds": {"video": "v1"}, "APPIDS": {"banner": "b1"}}, "b1", "v1", ""),  # decoded into one struct
        ({"appId": "one", "appIds": {"banner": "b1"}, "videoresponsetype": "nurl"}, "one", "one", "&prebidserver"),
        ({"appId": "one", "videoResponseType": "NURL"}, "one", "one", ""),  # only "nurl" itself
    ],
)
def test_an_imp_with_banner_and_video_goes_both_ways(params, banner_app, video_app, video_uri_tail):
    video = {"mimes": ["video/mp4"], "w": 1, "h": 2}
    imp = banner_imp("m", params, banner={"format": [{"w": 300, "h": 250}]}, video=video)
    calls, bodies, errors = run({"site": SITE, "imp": [imp]})
    assert errors == []
    video_uri = f"{VIDEO}={video_app}{video_uri_tail}"
    assert [(call.uri, call.imp_ids) for call in calls] == [(DISPLAY, ["m"]), (video_uri, ["m"])]
    assert bodies[0]["slots"][0]["id"] == banner_app
    assert "banner" not in bodies[1]["imp"][0]
    assert bodies[1].get("isPrebid") is (True if video_uri_tail else None)


@pytest.mark.parametrize(
    "media",
    [
        {"banner": {"format": [{"w": 0, "h": 250}]}},
        {"banner": {"format": [{"w": 300, "h": 0}, {"w": 300, "h": 250}]}},  # only the first format counts
        {"banner": {"w": 300, "h": 250}},
        {"banner": {"format": []}},  # PBS-Go panics here
        {"audio": {"mimes": ["audio/mp3"]}},
    ],
)
def test_no_banner_with_a_first_format_and_no_video_is_no_imp(media):
    calls, _, errors = run({"site": SITE, "imp": [{"id": "a", **media, "ext": {"bidder": {"appId": "x"}}}]})
    assert calls == []
    assert errors == ["no valid impressions were found in the request"]


# --- floors ----------------------------------------------------------------------------------------

FALLBACK = (
    "The following error was recieved from the currency converter while attempting to convert the "
    "imp.bidfloor value of 1.25 from EUR to USD:\nCurrency conversion rate not found: 'EUR' => 'USD'\n"
)


@pytest.mark.parametrize(
    ("imp_floor", "param_floor", "rate", "want", "errors"),
    [
        ({}, None, None, (None, None), []),
        ({"bidfloor": 0.5}, None, None, (0.5, "USD"), []),
        ({"bidfloor": 0.5, "bidfloorcur": "usd"}, None, None, (0.5, "USD"), []),  # USD in any case: no conversion
        ({"bidfloor": 0.5}, 0.7, None, (0.7, "USD"), []),  # the param raises a lower floor
        ({"bidfloor": 0.9}, 0.7, None, (0.9, "USD"), []),
        ({"bidfloor": 0.01}, None, None, (None, None), []),  # 0.01 or less is no floor
        ({"bidfloor": 0.0}, 0.01, None, (None, None), []),
        ({"bidfloor": 1.25, "bidfloorcur": "EUR"}, 0.5, 2.0, (2.5, "USD"), []),
        ({"bidfloor": 1.25, "bidfloorcur": "EUR"}, 3.0, 2.0, (3.0, "USD"), []),
        (
            {"bidfloor": 1.25, "bidfloorcur": "EUR"},
            0.75,
            None,
            (0.75, "USD"),
            [FALLBACK + "The provided value of imp.ext.beachfront.bidfloor, 0.75 USD is being used as a fallback."],
        ),
        (
            {"bidfloor": 1.25, "bidfloorcur": "EUR"},
            0.01,
            None,
            "skipped",
            [FALLBACK + "A value of imp.ext.beachfront.bidfloor was not provided. The bid is being skipped."],
        ),
    ],
)
def test_floors(imp_floor, param_floor, rate, want, errors):
    params = {"appId": "a"} if param_floor is None else {"appId": "a", "bidfloor": param_floor}
    info = RequestInfo(bidder="beachfront", convert_currency=converter("EUR", rate)) if rate else INFO
    request = {"site": SITE, "imp": [banner_imp("b", params, **imp_floor), video_imp("v", params, **imp_floor)]}
    calls, bodies, messages = run(request, info)
    assert messages == errors * 2  # the banner imp's, then the video imp's
    if want == "skipped":
        assert calls == []
        return
    banner, video = bodies
    assert banner["slots"][0]["bidfloor"] == (want[0] or 0)
    assert (video["imp"][0].get("bidfloor"), video["imp"][0].get("bidfloorcur")) == want


def test_a_fallback_warning_keeps_the_imp_and_is_no_bad_input():
    info = RequestInfo(bidder="beachfront")
    imp = video_imp("v", {"appId": "a", "bidfloor": 2}, bidfloor=1, bidfloorcur="GBP")
    calls, errors = adapter().make_requests({"id": "r", "site": SITE, "imp": [imp]}, info)
    assert len(calls) == 1
    assert [e.code for e in errors] == [ErrorCode.UNKNOWN]


# --- the display body ------------------------------------------------------------------------------


def test_display_body_on_a_site():
    request = {
        "site": {"page": "http://www.pub.example/x/y", "domain": ""},
        "device": {"ip": "1.2.3.4", "ua": "UA", "os": "iOS", "model": "X", "dnt": 1},
        "user": {"id": "u", "buyeruid": "bu", "yob": 1990},
        "imp": [banner_imp("b1", {"appId": "a"}, banner={"format": [{"w": 300, "h": 250}, {"w": -1, "h": 50}]})],
    }
    _, bodies, errors = run(request)
    assert errors == []
    assert bodies == [
        {
            "slots": [
                {
                    "slot": "b1",
                    "id": "a",
                    "bidfloor": 0,
                    "sizes": [{"w": 300, "h": 250}, {"w": 2**64 - 1, "h": 50}],  # Go's uint64 of -1
                }
            ],
            "domain": "www.pub.example",
            "page": "http://www.pub.example/x/y",
            "referrer": "",
            "search": "",
            "secure": 0,
            "deviceOs": "iOS",
            "deviceModel": "X",
            "isMobile": 0,
            "ua": "UA",
            "dnt": 1,
            "user": {"id": "u", "buyeruid": "bu"},
            "adapterName": "BF_PREBID_S2S",
            "adapterVersion": "1.0.0",
            "ip": "1.2.3.4",
            "requestId": "r",
            "real204": True,
            "schain": {"complete": 0, "nodes": None, "ver": ""},
        }
    ]


@pytest.mark.parametrize(
    ("request_fields", "want"),
    [
        ({"site": {"page": "https://a.example/p", "domain": "d.example"}}, ("https://a.example/p", "d.example", 0, 1)),
        ({"site": {"page": "a.example/p"}}, ("a.example/p", "a.example", 0, 0)),
        ({"app": {"bundle": "com.example.app"}}, ("com.example.app", "", 1, 0)),  # no domain made from the bundle
        ({"app": {"bundle": "https://x", "domain": "app.example"}}, ("https://x", "app.example", 1, 1)),
        ({"site": {"page": "https://a.example/p"}, "imp_secure": 0}, ("https://a.example/p", "a.example", 0, 0)),
        ({"app": {"bundle": "b"}, "imp_secure": 1}, ("b", "", 1, 1)),
    ],
)
def test_display_page_facts(request_fields, want):
    fields = dict(request_fields)
    imp_fields = {"secure": fields.pop("imp_secure")} if "imp_secure" in fields else {}
    _, bodies, _ = run({**fields, "imp": [banner_imp("b", None, **imp_fields), banner_imp("c", None, secure=1)]})
    body = bodies[0]
    assert (body["page"], body["domain"], body["isMobile"], body["secure"]) == want


SCHAIN = {"complete": 1, "ver": "1.0", "nodes": [{"asi": "a.example", "sid": "s", "rid": "r", "hp": 1, "zz": 1}]}


@pytest.mark.parametrize(
    ("source", "want"),
    [
        (None, {"complete": 0, "nodes": None, "ver": ""}),
        ({"ext": {"schain": SCHAIN}}, {**SCHAIN, "nodes": [{"asi": "a.example", "sid": "s", "rid": "r", "hp": 1}]}),
        ({"ext": {"SChain": {"nodes": [{"name": ""}]}}}, {"complete": 0, "nodes": [{"asi": "", "sid": ""}], "ver": ""}),
        ({"ext": {"schain": {**SCHAIN, "complete": "1"}}}, {"complete": 0, "nodes": None, "ver": ""}),
        ({"ext": {"schain": {**SCHAIN, "complete": 300}}}, {"complete": 0, "nodes": None, "ver": ""}),
        ({"ext": {"bidders": "all", "schain": SCHAIN}}, {"complete": 0, "nodes": None, "ver": ""}),
        ({"ext": []}, {"complete": 0, "nodes": None, "ver": ""}),
    ],
)
def test_display_schain_from_source_ext(source, want):
    request = {"site": SITE, "imp": [banner_imp()]}
    if source is not None:
        request["source"] = source
    _, bodies, _ = run(request)
    assert bodies[0]["schain"] == want


# --- the video body --------------------------------------------------------------------------------


def test_video_body():
    request = {
        "site": {"page": "https://www.pub.example/x", "ref": "r"},
        "device": {"ua": "UA"},
        "test": 0,
        "tmax": 500,
        "cur": ["EUR"],
        "ext": {"prebid": {"debug": True}},
        "junk": 1,
        "imp": [
            video_imp(
                "v",
                {"appId": "a", "bidfloor": 1.5},
                video={"mimes": ["video/mp4"], "w": 0, "context": "instream", "minduration": 0},
                banner={"format": [{"w": 0, "h": 0}]},
                instl=0,
                tagid="t",
            )
        ],
    }
    _, bodies, errors = run(request)
    assert errors == []
    assert bodies == [
        {
            "id": "r",
            "site": {"page": "https://www.pub.example/x", "ref": "r", "domain": "www.pub.example"},
            "device": {"ua": "UA", "ip": "255.255.255.255", "devicetype": 2},
            "tmax": 500,
            "cur": ["EUR"],
            "imp": [
                {
                    "id": "v",
                    "video": {"mimes": ["video/mp4"], "w": 300, "h": 250},
                    "tagid": "t",
                    "secure": 1,
                    "bidfloor": 1.5,
                    "bidfloorcur": "USD",
                }
            ],
        }
    ]


@pytest.mark.parametrize(
    ("fields", "response_type", "want_device", "want_secure"),
    [
        ({"site": {"page": "http://p.example/"}}, "adm", {"ip": "255.255.255.255", "devicetype": 2}, 0),
        ({"site": {"page": "https://p.example/"}}, "nurl", {"devicetype": 2}, 1),  # no fake IP on a nurl call
        ({"site": {"page": "https://p.example/", "domain": "p"}}, "adm", {"ip": "255.255.255.255", "devicetype": 2}, 0),
        ({"app": {"bundle": "b"}, "device": {"ip": "9.9.9.9"}}, "adm", {"ip": "9.9.9.9", "devicetype": 1}, 0),
        ({"app": {"bundle": "b"}, "device": {"devicetype": 4, "ipv6": "::1"}}, "adm",
         {"devicetype": 4, "ipv6": "::1", "ip": "255.255.255.255"}, 0),
    ],
)  # fmt: skip
def test_video_device_and_secure(fields, response_type, want_device, want_secure):
    params = {"appId": "a", "videoResponseType": response_type}
    _, bodies, _ = run({**fields, "imp": [video_imp("v", params)]})
    assert bodies[0]["device"] == want_device
    assert bodies[0]["imp"][0]["secure"] == want_secure


@pytest.mark.parametrize(
    ("app", "domain"),
    [
        ({"bundle": "com.example.game"}, "example.com"),
        ({"bundle": "__com.example_"}, "example.com"),  # underscores trimmed first
        ({"bundle": "some.domain.us/some/page.html"}, "domain.some"),
        ({"bundle": "id1234567890"}, None),  # one part: no domain
        ({"bundle": "com.example", "domain": "set.example"}, "set.example"),
    ],
)
def test_video_app_domain_from_bundle(app, domain):
    _, bodies, _ = run({"app": app, "imp": [video_imp()]})
    assert bodies[0]["app"].get("domain") == domain


@pytest.mark.parametrize(
    ("video", "size"),
    [
        ({"w": 640, "h": 480}, (640, 480)),
        ({}, (300, 250)),
        ({"w": 100}, (100, 250)),
        ({"w": 0, "h": 90}, (300, 90)),
    ],
)
def test_video_default_size(video, size):
    _, bodies, _ = run({"site": SITE, "imp": [video_imp("v", None, video={"mimes": ["m"], **video})]})
    got = bodies[0]["imp"][0]["video"]
    assert (got["w"], got["h"]) == size


def test_each_video_imp_has_its_own_call_adm_before_nurl():
    imps = [
        video_imp("n1", {"appId": "n", "videoResponseType": "nurl"}),
        video_imp("a1", {"appId": "a1"}),
        banner_imp("b1"),
        video_imp("a2", {"appId": "a2"}),
    ]
    calls, _, errors = run({"site": SITE, "imp": imps})
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [
        (DISPLAY, ["b1"]),
        (VIDEO + "=a1", ["a1"]),
        (VIDEO + "=a2", ["a2"]),
        (VIDEO + "=n&prebidserver", ["n1"]),
    ]
    assert next(iter(orjson.loads(calls[3].body))) == "isPrebid"  # PBS-Go writes it first


def test_failed_video_imps_are_removed_by_shifting_positions():
    """PBS-Go removes the failed imps 0 and 1 one after the other from the same list: removing 0
    moves the floor-failed imp to position 0 and the good imp to 1, which then goes instead. The
    floor-failed imp is sent with the body PBS-Go had built so far: every video imp, no ``cur``."""
    imps = [
        video_imp("bad", {"appId": 5}),
        video_imp("fatal", {"appId": "f"}, bidfloor=1, bidfloorcur="EUR"),
        video_imp("good", {"appId": "g"}),
    ]
    calls, bodies, errors = run({"site": SITE, "imp": imps})
    assert len(errors) == 2
    assert [(call.uri, call.imp_ids) for call in calls] == [(VIDEO + "=f", ["bad", "fatal", "good"])]
    assert "cur" not in bodies[0]
    assert bodies[0]["imp"][1] == {"id": "fatal", "video": imps[1]["video"], "bidfloor": 1, "bidfloorcur": "EUR",
                                   "ext": imps[1]["ext"]}  # fmt: skip


@pytest.mark.parametrize(
    ("imps", "want_ids"),
    [
        ([video_imp("bad", {}), video_imp("ok")], [["ok"]]),
        ([video_imp("ok"), video_imp("bad", {})], [["ok"]]),
        ([video_imp("bad1", {}), video_imp("bad2", {})], []),  # the second position is past the end
        ([video_imp("bad1", {}), video_imp("bad2", {}), video_imp("ok")], []),  # "ok" goes instead of bad2
    ],
)
def test_failed_video_imp_removal(imps, want_ids):
    calls, _, _ = run({"site": SITE, "imp": imps})
    assert [call.imp_ids for call in calls] == want_ids


# --- headers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("device", "user", "want"),
    [
        (None, None, {}),
        ({"ua": "UA", "language": "fr", "dnt": 0}, None, {"User-Agent": "UA", "Accept-Language": "fr", "Dnt": "0"}),
        ({"ua": ""}, {"buyeruid": "xyz"}, {"Cookie": "__io_cid=xyz"}),
        (None, {"buyeruid": ""}, {}),
    ],
)
def test_every_call_has_the_same_headers(device, user, want):
    request: dict[str, Any] = {"site": SITE, "imp": [banner_imp(), video_imp()]}
    if device is not None:
        request["device"] = device
    if user is not None:
        request["user"] = user
    calls, _, _ = run(request)
    expected = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json", **want}
    assert [dict(call.headers) for call in calls] == [expected, expected]


# --- answers ---------------------------------------------------------------------------------------


def call_to(uri: str, body: Any = None) -> RequestData:
    return RequestData("POST", uri, orjson.dumps(body if body is not None else {"imp": []}))


def bids(body: Any, call: RequestData, status: int = 200):
    return bids_for(adapter(), {"id": "r"}, body, status, call=call)


@pytest.mark.parametrize(
    ("status", "message", "code"),
    [
        (500, "server error status code 500 from {}.", ErrorCode.BAD_SERVER_RESPONSE),
        (503, "server error status code 503 from {}.", ErrorCode.BAD_SERVER_RESPONSE),
        (400, "request error status code 400 from {}.", ErrorCode.BAD_INPUT),
        (404, "request error status code 404 from {}.", ErrorCode.BAD_INPUT),
        (302, "unexpected status code 302 from {}.", ErrorCode.UNKNOWN),
    ],
)
def test_failure_status(status, message, code):
    response, errors = bids(b"", call_to(DISPLAY), status)
    assert response is None
    text = message.format(DISPLAY) + " Run with request.debug = 1 for more info"
    assert [(e.message, e.code) for e in errors] == [(text, code)]


def test_no_content_is_no_bids_and_no_error():
    assert bids(b"[{}]", call_to(DISPLAY), 204) == (None, [])


@pytest.mark.parametrize(
    ("body", "want"),
    [
        (
            [{"crid": "c", "price": 1.5, "w": 300, "h": 250, "slot": "s1", "adm": "<a/>", "other": 1}],
            [{"id": "s1Banner", "impid": "s1", "price": 1.5, "crid": "c", "w": 300, "h": 250, "adm": "<a/>"}],
        ),
        ([{"SLOT": "s", "Price": 2}], [{"id": "sBanner", "impid": "s", "price": 2}]),
        ([None], [{"id": "Banner", "impid": "", "price": 0.0}]),
        ([], []),
        (None, []),
    ],
)
def test_display_answer(body, want):
    response, errors = bids(body, call_to(DISPLAY))
    assert errors == []
    assert response.currency == "USD"
    assert [(b.bid, b.bid_type, b.bid_video) for b in response.bids] == [(bid, "banner", None) for bid in want]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        {"wrong": 1},
        {"seatbid": []},
        [{"price": "1"}],
        [{"w": -1}],
        [{"h": 1.5}],
        [{"crid": 5}],
        ["slot"],
        {"seatbid": [{"bid": [{"price": "x"}]}]},  # no OpenRTB answer, and no list either
    ],
)
def test_answer_of_neither_shape(body):
    response, errors = bids(body, call_to(DISPLAY))
    assert response is None
    assert [(e.message, e.code) for e in errors] == [
        (
            "server response failed to unmarshal as valid rtb. Run with request.debug = 1 for more info",
            ErrorCode.BAD_SERVER_RESPONSE,
        )
    ]


def test_only_the_first_seatbid_counts_and_adm_bids_are_renamed():
    body = {
        "seatbid": [
            {"bid": [{"id": "x", "impid": "v1", "price": 1, "crid": "c"}]},
            {"bid": [{"id": "y", "impid": "v2", "price": 1}]},
        ]
    }
    response, errors = bids(body, call_to(VIDEO + "=a"))
    assert errors == []
    assert [(b.bid, b.bid_type) for b in response.bids] == [
        ({"id": "v1AdmVideo", "impid": "v1", "price": 1, "crid": "c"}, "video")
    ]


@pytest.mark.parametrize(
    ("uri", "bid_type"),
    [
        (VIDEO + "=a", "video"),
        (VIDEO + "=a&prebidserver", "video"),
        (DISPLAY, "banner"),  # an OpenRTB answer to the display call is read, typed by the call
        ("https://video.example/bid.json?exchange=a", "banner"),
    ],
)
def test_bid_type_by_the_call_uri(uri, bid_type):
    imp = {"id": "v", "video": {"w": 1, "h": 2}}
    response, _ = bids({"seatbid": [{"bid": [{"impid": "v", "price": 1}]}]}, call_to(uri, {"imp": [imp]}))
    assert [b.bid_type for b in response.bids] == [bid_type]


@pytest.mark.parametrize(
    ("nurl", "crid"),
    [
        ("https://x/getBids?aid=bid:CRID:other:1.0:1.0&v=1", "CRID"),
        ("https://x/getBids?aid=bid: spaced : more", " spaced "),
        ("a:b:c", "c"),
        ("no colon", None),
        ("", None),
    ],
)
def test_nurl_bids_take_imp_facts_from_the_call(nurl, crid):
    sent = {"imp": [{"id": "v1", "video": {"w": 640, "h": 480}}, {"id": "v2"}]}
    body = {"seatbid": [{"bid": [{"id": "x", "impid": "?", "price": 1, "nurl": nurl, "crid": "old", "w": 5}]}]}
    response, errors = bids(body, call_to(VIDEO + "=a&prebidserver", sent))
    assert errors == []
    [typed] = response.bids
    want = {"id": "v1NurlVideo", "impid": "v1", "price": 1, "w": 640, "h": 480}
    if nurl:
        want["nurl"] = nurl
    if crid is not None:
        want["crid"] = crid
    assert typed.bid == want


def test_nurl_bid_size_from_an_imp_without_video_is_left_out():
    sent = {"imp": [{"id": "v1"}]}
    body = {"seatbid": [{"bid": [{"impid": "v1", "price": 1, "w": 5, "h": 6}]}]}
    response, _ = bids(body, call_to(VIDEO + "=a&prebidserver", sent))
    assert response.bids[0].bid == {"id": "v1NurlVideo", "impid": "v1", "price": 1}


@pytest.mark.parametrize(
    ("exts", "want"),
    [
        ([{"duration": 30}], [{"duration": 30, "primary_category": "IAB1"}]),
        ([{"Duration": 15}], [{"duration": 15, "primary_category": "IAB1"}]),
        ([{"duration": 0}], [None]),
        ([{"duration": 1.5}], [None]),
        ([None], [None]),
        ([{"duration": 30}, {}], [{"duration": 30, "primary_category": "IAB1"}] * 2),  # PBS-Go reuses the last
        ([{"duration": 30}, None], [{"duration": 30, "primary_category": "IAB1"}, None]),
        ([{"duration": 30}, {"duration": "x"}, {}], [{"duration": 30, "primary_category": "IAB1"}, None,
                                                     {"duration": 30, "primary_category": "IAB1"}]),
    ],
)  # fmt: skip
def test_video_duration(exts, want):
    bid_list = []
    for index, ext in enumerate(exts):
        bid = {"id": str(index), "impid": "v", "price": 1, "cat": ["IAB1", "IAB2"]}
        if ext is not None:
            bid["ext"] = ext
        bid_list.append(bid)
    response, errors = bids({"seatbid": [{"bid": bid_list}]}, call_to(VIDEO + "=a"))
    assert errors == []
    assert [b.bid_video for b in response.bids] == want


def test_primary_category_is_empty_without_cat():
    body = {"seatbid": [{"bid": [{"impid": "v", "price": 1, "ext": {"duration": 5}}]}]}
    response, _ = bids(body, call_to(VIDEO + "=a"))
    assert response.bids[0].bid_video == {"duration": 5, "primary_category": ""}
