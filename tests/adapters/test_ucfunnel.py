"""ucfunnel's rules: PBS-Go's own unit tests (ucfunnel_test.go's TestMakeRequests and TestMakeBids,
the same cases and expectations) as table rows, then the URI and the typing by the sent call."""

from __future__ import annotations

import orjson
import pytest

from hbserver.adapters.base import AdapterConfig, RequestData, RequestInfo, ResponseData
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.ucfunnel import bid_type, build, sent_imps

# the Go tests build the adapter with this endpoint
ADAPTER = build(AdapterConfig("ucfunnel", "http://localhost/bid"))
INFO = RequestInfo("ucfunnel")
GOOD = {"adunitid": "ad-488663D474E44841E8A293379892348", "partnerid": "par-7E6D2DB9A8922AB07B44A444D2BA67"}
MEDIA = [("1234", "banner"), ("1235", "video"), ("1236", "audio"), ("1237", "native"), ("1237", "native")]
IDS = [imp_id for imp_id, _ in MEDIA]


def _imps(exts: list[dict] | None) -> list[dict]:
    """Go's imp..imp5 (banner, video, audio, native, native), with the given exts when any."""
    imps = [{"id": imp_id, kind: {}} for imp_id, kind in MEDIA]
    for imp, ext in zip(imps, exts or (), strict=False):
        imp["ext"] = ext
    return imps


# Go's internalRequest03: the first four imps carry good params, the fifth a partnerid ""
EXTS_03 = [{"bidder": GOOD}] * 4 + [{"bidder": {"adunitid": "aa", "partnerid": ""}}]


@pytest.mark.parametrize(
    ("imps", "want_errors", "want_ids"),
    [
        ([], 1, None),  # internalRequest01: no imps
        (_imps(None), 1, None),  # internalRequest02: no ext on any imp
        (_imps(EXTS_03), 0, IDS),  # internalRequest03: the first imp's params decide; every imp sent
    ],
    ids=["no-imps", "no-ext", "first-imp-params"],
)
def test_make_requests(imps, want_errors, want_ids):
    calls, errors = ADAPTER.make_requests({"imp": imps}, INFO)
    assert len(errors) == want_errors
    if want_ids is None:
        assert calls == []
    else:
        assert len(calls) == 1 and sorted(calls[0].imp_ids) == sorted(want_ids)


SENT_01 = (
    b'{"imp":[{"id":"1234","banner":{}},{"id":"1235","video":{}},{"id":"1236","audio":{}},{"id":"1237","native":{}}]}'
)
SENT_02 = b'{"imp":[{"id":"1234","banne"1235","video":{}},{"id":"1236","audio":{}},{"id":"1237","native":{}}]}'
ANSWER = (
    b'{"seatbid": [{"bid": [{"impid": "1234"}]},{"bid": [{"impid": "1235"}]},'
    b'{"bid": [{"impid": "1236"}]},{"bid": [{"impid": "1237"}]}]}'
)
SHORT = b'{"seatbid":[{"bid":[{"impid":"1234"}]},{"bid":[{"impid":"1235"}]}]}'
BROKEN = b'{"seatbid":[{"bid":[{"im236"}],{"bid":[{"impid":"1237}]}'


@pytest.mark.parametrize(
    ("request_", "sent", "status", "answer", "want_response", "want_error"),
    [
        (_imps(EXTS_03), SENT_01, 200, ANSWER, True, False),
        (_imps(EXTS_03), SENT_01, 203, SHORT, False, True),
        (_imps(EXTS_03), SENT_01, 204, SHORT, False, False),
        (_imps(EXTS_03), SENT_01, 400, SHORT, False, True),
        (_imps(EXTS_03), SENT_01, 200, BROKEN, False, True),
        ([{"id": "1234", "banner": {}, "ext": {"bidder": {"adunitid": "0"}}}], SENT_02, 200, ANSWER, False, True),
    ],
    ids=["200", "203", "204", "400", "broken-answer", "broken-sent-body"],
)
def test_make_bids(request_, sent, status, answer, want_response, want_error):
    response, errors = ADAPTER.make_bids(
        {"imp": request_}, RequestData("POST", "u", sent), ResponseData(status, answer)
    )
    assert (response is not None, bool(errors)) == (want_response, want_error)


def test_the_uri_path_escapes_the_first_imps_partnerid():
    ext = {"bidder": {"adunitid": "a", "partnerid": "p/ q?"}}
    calls, errors = ADAPTER.make_requests({"imp": [{"id": "1", "banner": {}, "ext": ext}, {"id": "2"}]}, INFO)
    assert not errors and [(c.uri, c.imp_ids) for c in calls] == [
        ("http://localhost/bid/p%2F%20q%3F/request", ["1", "2"])
    ]
    assert orjson.loads(calls[0].body)["imp"][0]["ext"] == ext


def test_bids_are_typed_by_the_sent_call_only_banner_and_video_kept():
    response, errors = ADAPTER.make_bids({"imp": []}, RequestData("POST", "u", SENT_01), ResponseData(200, ANSWER))
    assert not errors and [(b.bid["impid"], b.bid_type, b.seat) for b in response.bids] == [
        ("1234", "banner", ""),
        ("1235", "video", ""),
    ]
    assert response.currency == "USD"


@pytest.mark.parametrize(
    ("imps", "imp_id", "want"),
    [
        ([{"id": "a", "video": {}, "banner": {}}], "a", "banner"),
        ([{"id": "a"}, {"id": "a", "video": {}}], "a", "video"),  # an imp with no media object is passed over
        ([{"id": "a", "audio": {}}, {"id": "a", "banner": {}}], "a", "audio"),  # the first that has one decides
        ([{"id": "a", "banner": {}}], "b", "native"),  # no imp: native
    ],
)
def test_bid_type(imps, imp_id, want):
    assert bid_type(imps, imp_id) == want


def test_an_answer_without_seatbids_is_no_answer():
    assert ADAPTER.make_bids({}, RequestData("POST", "u", SENT_01), ResponseData(200, b'{"seatbid": []}')) == (None, [])


@pytest.mark.parametrize("body", [b"", b"[]", b'{"imp": {}}', b'{"imp": [{"id": 5}]}', b'{"imp": [{"banner": 1}]}'])
def test_a_sent_body_go_cannot_decode_fails(body):
    with pytest.raises(JsonShapeError):
        sent_imps(body)
