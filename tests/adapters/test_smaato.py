"""Smaato adapter: user/site rewriting, publisher placement, params, calls per imp and media type or
per ad pod, markup typing from the header, click trackers, native markup and the TTL clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.smaato import SmaatoAdapter, build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://prebid.ad.smaato.net/oapi/prebid"
AUCTION = RequestInfo(bidder="smaato")
VIDEO = RequestInfo(bidder="smaato", entry_point="openrtb2-video")
NOW = datetime(2021, 6, 25, 10, 0, 0, tzinfo=UTC)
NOW_MS = 1624615200000
PARAMS = {"publisherId": "pub", "adspaceId": "space", "adbreakId": "break"}
SITE = {"page": "p"}


def imp(imp_id: str = "i", params: Any = PARAMS, **fields: Any) -> dict:
    return imp_with(imp_id, params, fields, {"banner": {"w": 300, "h": 250}})


def adapter() -> SmaatoAdapter:
    built = build(AdapterConfig("smaato", ENDPOINT))
    built.now = lambda: NOW
    return built


def run(request: dict, info: RequestInfo = AUCTION):
    calls, bodies, errors = requests_of(adapter(), request, info)
    return calls, bodies, [(e.message, e.code) for e in errors]


def bids(body: Any, headers: dict[str, str] | None = None, status: int = 200):
    return bids_for(adapter(), {"imp": [imp()]}, body, status, {"X-Smt-Adtype": "Img"} if headers is None else headers)


def answer(**bid: Any) -> dict:
    return {"cur": "EUR", "seatbid": [{"bid": [{"id": "b", "impid": "i", "price": 1, "adm": "<a/>", **bid}]}]}


# --- request ---------------------------------------------------------------------------------------


def test_call_shape():
    request = {"id": "r", "test": 0, "site": SITE, "ext": {"prebid": {"debug": True}}, "imp": [imp()]}
    calls, bodies, errors = run(request)
    assert errors == []
    assert [(call.method, call.uri, call.imp_ids) for call in calls] == [("POST", ENDPOINT, ["i"])]
    assert dict(calls[0].headers) == {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
    assert bodies[0] == {
        "id": "r",
        "site": {"page": "p", "publisher": {"id": "pub"}},
        "ext": {"client": "prebid_server_1.2"},
        "imp": [{"id": "i", "banner": {"w": 300, "h": 250}, "tagid": "space"}],
    }


@pytest.mark.parametrize(
    ("user", "want"),
    [
        ({"ext": {"data": {"gender": "M", "yob": 1984, "keywords": "a,b", "x": 1}, "consent": "c"}},
         {"ext": {"consent": "c"}, "gender": "M", "yob": 1984, "keywords": "a,b"}),
        ({"gender": "F", "yob": 1, "ext": {"data": {"gender": "", "yob": 0}}}, {"gender": "F", "yob": 1, "ext": {}}),
        ({"ext": {"data": {"GENDER": "O", "Yob": None}}}, {"gender": "O", "ext": {}}),  # Go's field matching
        ({"ext": {"data": None, "eids": []}}, {"ext": {"eids": []}}),
        ({"ext": {"consent": "c"}}, {"ext": {"consent": "c"}}),  # no data: left alone
        ({"ext": None, "id": "u"}, {"ext": None, "id": "u"}),
    ],
)  # fmt: skip
def test_user_ext_data_moves_onto_the_user(user, want):
    _, bodies, errors = run({"id": "r", "site": SITE, "user": user, "imp": [imp()]})
    assert errors == []
    assert bodies[0]["user"] == want


@pytest.mark.parametrize(
    ("site", "want"),
    [
        ({"page": "p", "keywords": "old", "ext": {"data": {"keywords": "new", "x": 1}}}, "new"),
        ({"page": "p", "keywords": "old", "ext": {"data": {}}}, None),  # PBS-Go overwrites with ""
        ({"page": "p", "keywords": "old", "ext": None}, None),
        ({"page": "p", "keywords": "old", "ext": {"Data": {"KEYWORDS": "k"}}}, "k"),
        ({"page": "p", "keywords": "old"}, "old"),  # no ext: left alone
    ],
)
def test_site_ext_keywords(site, want):
    _, bodies, errors = run({"id": "r", "site": site, "imp": [imp()]})
    assert errors == []
    sent = bodies[0]["site"]
    assert "ext" not in sent or "ext" not in site
    assert sent.get("keywords") == want


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        ({"imp": []}, "No impressions in bid request."),
        ({"user": {"ext": []}}, "Invalid user.ext."),
        ({"user": {"ext": "x"}}, "Invalid user.ext."),
        ({"user": {"ext": {"data": "x"}}}, "Invalid user.ext.data."),
        ({"user": {"ext": {"data": {"yob": 1984.5}}}}, "Invalid user.ext.data."),
        ({"user": {"ext": {"data": {"gender": 1}}}}, "Invalid user.ext.data."),
        ({"user": {"ext": {"data": {"keywords": ["a"]}}}}, "Invalid user.ext.data."),
        ({"site": {"ext": []}}, "Invalid site.ext."),
        ({"site": {"ext": {"data": "x"}}}, "Invalid site.ext."),
        ({"site": {"ext": {"data": {"keywords": 5}}}}, "Invalid site.ext."),
        ({"user": {"ext": []}, "site": {"ext": []}}, "Invalid user.ext."),  # the user is read first
    ],
)
def test_request_wide_errors(request_fields, message):
    calls, _, errors = run({"id": "r", "site": SITE, "imp": [imp()], **request_fields}, AUCTION)
    assert calls == []
    assert errors == [(message, ErrorCode.BAD_INPUT)]


@pytest.mark.parametrize(
    ("owners", "publisher_id", "want"),
    [
        ({"site": {"page": "p", "publisher": {"id": "x", "name": "n"}}, "app": {"id": "a"}}, "pub",
         ("site", {"id": "pub"})),
        ({"app": {"id": "a"}, "dooh": {"id": "d"}}, "pub", ("app", {"id": "pub"})),
        ({"dooh": {"id": "d"}}, "pub", ("dooh", {"id": "pub"})),
        ({"site": {"page": "p"}}, "", ("site", {})),
    ],
)  # fmt: skip
def test_publisher_replaces_the_first_owner(owners, publisher_id, want):
    params = {**PARAMS, "publisherId": publisher_id}
    _, bodies, errors = run({"id": "r", **owners, "imp": [imp(params=params)]})
    assert errors == []
    owner, publisher = want
    assert bodies[0][owner]["publisher"] == publisher
    for other in set(owners) - {owner}:
        assert bodies[0][other] == owners[other]


@pytest.mark.parametrize(
    ("params", "owners", "message"),
    [
        ({"adspaceId": "s"}, {"site": SITE}, "Missing publisherId parameter."),
        ({"publisherId": 5, "adspaceId": "s"}, {"site": SITE}, "Missing publisherId parameter."),
        ({"publisherid": "p", "adspaceId": "s"}, {"site": SITE}, "Missing publisherId parameter."),  # exact name
        ({"publisherId": "p", "adspaceId": "s"}, {}, "Missing Site/App/DOOH."),
        ({"adspaceId": "s"}, {}, "Missing publisherId parameter."),  # the param is checked first
        ({"publisherId": "p"}, {"site": SITE}, "Missing adspaceId parameter."),
        ({"publisherId": "p", "adspaceId": 130563103}, {"site": SITE}, "Missing adspaceId parameter."),
        (None, {"site": SITE}, "Missing publisherId parameter."),
    ],
)
def test_params_errors_skip_the_call(params, owners, message):
    calls, _, errors = run({"id": "r", **owners, "imp": [imp("bad", params), imp("ok")]})
    assert [call.imp_ids for call in calls] == ([["ok"]] if owners else [])
    assert errors[0] == (message, ErrorCode.BAD_INPUT)


def test_one_call_per_media_type_in_that_order():
    media = {"native": {"request": "{}"}, "video": {"mimes": ["v"]}, "banner": {"w": 1}, "audio": {"mimes": ["a"]}}
    ext = {"bidder": PARAMS, "gpid": "g"}
    calls, bodies, errors = run({"id": "r", "site": SITE, "imp": [imp("m", ext=ext, tagid="old", **media)]})
    assert errors == []
    assert [call.imp_ids for call in calls] == [["m"], ["m"], ["m"]]
    sent = [body["imp"][0] for body in bodies]
    assert [[kind for kind in ("banner", "video", "native") if kind in one] for one in sent] == [
        ["banner"], ["video"], ["native"]
    ]
    for one in sent:
        assert one["audio"] == {"mimes": ["a"]}  # PBS-Go keeps audio on each
        assert one["ext"] == {"gpid": "g"}
        assert one["tagid"] == "space"


def test_imp_without_banner_video_or_native_is_skipped():
    calls, _, errors = run({"id": "r", "site": SITE, "imp": [imp("a", audio={"mimes": ["a"]}), imp("b")]})
    assert [call.imp_ids for call in calls] == [["b"]]
    assert errors == [("Invalid MediaType. Smaato only supports Banner, Video and Native.", ErrorCode.BAD_INPUT)]


def test_media_object_gets_go_required_fields():
    _, bodies, _ = run({"id": "r", "site": SITE, "imp": [imp(video={"w": 1}, native={})]})
    assert [body["imp"][0].get("video") or body["imp"][0]["native"] for body in bodies] == [
        {"w": 1, "mimes": None}, {"request": ""}
    ]


# --- ad pods ---------------------------------------------------------------------------------------


def pod_imp(imp_id: str, params: Any = PARAMS, **extra: Any) -> dict:
    return imp(imp_id, params, video={"mimes": ["video/mp4"], "ext": {"x": 1}, "sequence": 9}, **extra)


def test_pods_group_imps_by_id_prefix():
    imps = [
        pod_imp("1_1", ext={"bidder": PARAMS, "gpid": "g"}),
        pod_imp("2_1", {**PARAMS, "adbreakId": "other"}),
        pod_imp("1_2", ext={"bidder": {**PARAMS, "adbreakId": "ignored"}, "gpid": "h"}),
        pod_imp("1"),
    ]
    calls, bodies, errors = run({"id": "r", "app": {"id": "a"}, "imp": imps}, VIDEO)
    assert errors == []
    assert [call.imp_ids for call in calls] == [["1_1", "1_2", "1"], ["2_1"]]
    first = bodies[0]["imp"]
    assert [one["tagid"] for one in first] == ["break", "break", "break"]
    assert [one["video"]["sequence"] for one in first] == [1, 2, 3]
    assert all(one["video"]["ext"] == {"context": "adpod"} for one in first)
    assert [one.get("ext") for one in first] == [{"gpid": "g"}, None, None]  # only the first keeps its ext
    assert bodies[0]["app"]["publisher"] == {"id": "pub"}
    assert bodies[1]["imp"][0]["tagid"] == "other"


def test_pod_sequence_is_a_go_int8():
    _, bodies, _ = run({"id": "r", "site": SITE, "imp": [pod_imp(f"p_{n}") for n in range(129)]}, VIDEO)
    sequences = [one["video"]["sequence"] for one in bodies[0]["imp"]]
    assert sequences[126:] == [127, -128, -127]


@pytest.mark.parametrize(
    ("imps", "calls_for", "message"),
    [
        ([imp("1_1"), pod_imp("2_1")], [["2_1"]], "Invalid MediaType. Smaato only supports Video for AdPod."),
        ([pod_imp("1_1", {"publisherId": "p"}), pod_imp("1_2")], [], "Missing adbreakId parameter."),
        ([pod_imp("1_1", {"adbreakId": "b"}), pod_imp("2_1")], [["2_1"]], "Missing publisherId parameter."),
    ],
)
def test_pod_errors(imps, calls_for, message):
    calls, _, errors = run({"id": "r", "site": SITE, "imp": imps}, VIDEO)
    assert [call.imp_ids for call in calls] == calls_for
    assert errors == [(message, ErrorCode.BAD_INPUT)]


# --- answer ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "want"),
    [
        (204, None),
        (400, "Unexpected status code: 400. Run with request.debug = 1 for more info."),
        (500, "Unexpected status code: 500. Run with request.debug = 1 for more info."),
    ],
)
def test_status(status, want):
    response, errors = bids(b"", status=status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == ([] if want is None else [(want, ErrorCode.BAD_SERVER_RESPONSE)])


@pytest.mark.parametrize(
    ("markup", "bid_type", "adm"),
    [
        ("Img", "banner", "<a/>"),
        ("Richmedia", "banner", "<a/>"),
        ("Video", "video", "<a/>"),
        ("Native", "native", "null"),  # markup that is no JSON object fails below; see native tests
    ],
)
def test_markup_header_types_every_bid(markup, bid_type, adm):
    body = answer() if markup != "Native" else answer(adm="{}")
    response, errors = bids(body, {"x-smt-adtype": markup})  # the header name in any case
    assert errors == []
    assert response.currency == "USD"  # the answer's cur is ignored
    assert [(b.bid_type, b.bid["adm"]) for b in response.bids] == [(bid_type, adm)]


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "X-Smt-Adtype header is missing."),
        ({"X-Smt-Adtype": ""}, "X-Smt-Adtype header is missing."),
        ({"X-Smt-Adtype": "img"}, "Unknown markup type img."),
    ],
)
def test_markup_header_errors(headers, message):
    response, errors = bids(answer(), headers)
    assert [(e.message, e.code) for e in errors] == [(message, ErrorCode.BAD_SERVER_RESPONSE)]
    assert response is None or response.bids == []


@pytest.mark.parametrize(
    ("curls", "adm"),
    [
        (None, "<a/>"),
        ([], "<a/>"),
        (["https://t.net/c?a=1&b=x y~"],
         "<div style=\"cursor:pointer\" onclick=\"fetch(decodeURIComponent('https%3A%2F%2Ft.net%2Fc%3Fa%3D1%26b%3Dx+y~'"
         ".replace(/\\+/g, ' ')), {cache: 'no-cache'});\"><a/></div>"),
        (["a", None],
         "<div style=\"cursor:pointer\" onclick=\"fetch(decodeURIComponent('a'.replace(/\\+/g, ' ')), "
         "{cache: 'no-cache'});fetch(decodeURIComponent(''.replace(/\\+/g, ' ')), {cache: 'no-cache'});\"><a/></div>"),
    ],
)  # fmt: skip
def test_click_trackers_wrap_banner_markup(curls, adm):
    response, errors = bids(answer(ext={"curls": curls}))
    assert errors == []
    assert response.bids[0].bid["adm"] == adm


@pytest.mark.parametrize(
    ("adm", "want"),
    [
        ('{"native": {"a": [1, 2.50, 1e3],\n "b": "<&>\u2028"}}',
         '{"a":[1,2.50,1e3],"b":"\\u003c\\u0026\\u003e\\u2028"}'),
        ('{"Native": {"a": 1}, "x": {"native": 2}}', '{"a":1}'),
        ('{"native": 1, "NATIVE": "two"}', '"two"'),
        ('{"other": 1}', "null"),
        ("null", "null"),
        ('{"native": null}', "null"),
    ],
)  # fmt: skip
def test_native_markup_is_its_native_member(adm, want):
    response, errors = bids(answer(adm=adm), {"X-Smt-Adtype": "Native"})
    assert errors == []
    assert [(b.bid_type, b.bid["adm"]) for b in response.bids] == [("native", want)]


@pytest.mark.parametrize("adm", ["", "[]", '"x"', '{"native": 1', '{"native": 1} x', '{"native": NaN}', '{native: 1}'])
def test_native_markup_that_does_not_decode(adm):
    response, errors = bids(answer(adm=adm), {"X-Smt-Adtype": "Native"})
    assert response.bids == []
    assert [(e.message, e.code) for e in errors] == [(f"Invalid ad markup {adm}.", ErrorCode.BAD_SERVER_RESPONSE)]


@pytest.mark.parametrize(
    "ext",
    [[], "x", {"curls": "u"}, {"curls": [1]}, {"duration": 1.5}, {"duration": "5"}, {"Duration": 5, "curls": {}}],
)
def test_bad_bid_ext_drops_the_bid(ext):
    body = {"seatbid": [{"bid": [{"id": "bad", "impid": "i", "price": 1, "ext": ext}, {"id": "ok", "impid": "i"}]}]}
    response, errors = bids(body, {"X-Smt-Adtype": "Video"})
    assert [b.bid["id"] for b in response.bids] == ["ok"]
    assert [(e.message, e.code) for e in errors] == [("Invalid bid.ext.", ErrorCode.BAD_SERVER_RESPONSE)]


@pytest.mark.parametrize(
    ("ext", "cat", "video"),
    [
        ({"duration": 15}, ["IAB1", "IAB2"], {"duration": 15, "primary_category": "IAB1"}),
        ({"DURATION": 7, "duration": None}, None, {"duration": 7, "primary_category": ""}),
        (None, [], {"duration": 0, "primary_category": ""}),
    ],
)
def test_video_bid_information(ext, cat, video):
    response, errors = bids(answer(ext=ext, cat=cat), {"X-Smt-Adtype": "Video"})
    assert errors == []
    assert response.bids[0].bid_video == video


@pytest.mark.parametrize(
    ("expires", "exp"),
    [
        (None, 300),
        (str(NOW_MS + 3_600_000), 3600),
        (str(NOW_MS + 1_999), 1),  # Go's division truncates
        ("+" + str(NOW_MS + 60_000), 60),
        (str(NOW_MS - 1), None),  # never below 0, and 0 is left out
        (str(NOW_MS + 999), None),
        ("something", 300),
        (" 1624618800000", 300),
        ("1_624_618_800_000", 300),
        ("9223372036854775808", 300),  # beyond int64: ParseInt fails
        ("9" * 5000, 300),  # issue 38: beyond what int() converts
        ("\u00b2", 300),
        ("-9223372036854775808", (2**63 - NOW_MS) // 1000),  # the int64 difference wraps
    ],
)
def test_exp_from_expires_header(expires, exp):
    headers = {"X-Smt-Adtype": "Img"} | ({} if expires is None else {"X-Smt-Expires": expires})
    response, errors = bids(answer(exp=5), headers)
    assert errors == []
    assert response.bids[0].bid.get("exp") == exp


def test_default_clock_is_utc_now():
    built = build(AdapterConfig("smaato", ENDPOINT))
    assert abs(built.now() - datetime.now(UTC)) < timedelta(seconds=5)
