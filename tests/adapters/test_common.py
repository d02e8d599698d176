"""The pieces adapters share (``common``): reading a bidder's answer with an adapter's wording, bid
typing by imp and by ``mtype``, header names, JSON calls, endpoint macros and floors in USD."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import (
    JSON_HEADERS,
    BidderError,
    BidderResponse,
    ConversionError,
    ErrorCode,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.common import (
    BANNER_VIDEO_NATIVE,
    PLAIN_BODY_WORDING,
    PUBLISHER_WORDING,
    UNEXPECTED_STATUS,
    AnswerAdapter,
    AnswerWording,
    JsonShapeError,
    OwnAnswerAdapter,
    Refusal,
    answer_bids,
    any_imp_bid_type,
    app_display_manager_version,
    banner_sized_by_first_format,
    canonical_header,
    decode_answer,
    first_media_type,
    floor_in_usd,
    imp_bid_type,
    imp_not_in_request,
    json_call,
    json_headers,
    mtype_bid_type,
    optional_object,
    resolve_macros,
    status_error,
    string_param,
    typed_as,
    typed_bid_response,
    typed_by_imp,
    typed_catching,
    with_header,
    with_video_facts,
)

GO_TEXT = AnswerWording(not_an_object="expect {{ or n, but found {found}")


@pytest.mark.parametrize(
    ("status", "body", "wording", "data", "error"),
    [
        (204, b"", AnswerWording(), None, None),
        (200, b'{"id":"r"}', AnswerWording(), {"id": "r"}, None),
        (400, b"", AnswerWording(), None, (ErrorCode.BAD_INPUT, "Unexpected status code: 400. ")),
        (500, b"", AnswerWording(), None, (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 500. ")),
        (200, b"{oops", AnswerWording(), None, (ErrorCode.BAD_SERVER_RESPONSE, "Bad response body: ")),
        (200, b"[1]", AnswerWording(), None, (ErrorCode.BAD_SERVER_RESPONSE, "Bad response body: not a JSON object")),
        (200, b"[1]", GO_TEXT, None, (ErrorCode.BAD_SERVER_RESPONSE, "expect { or n, but found [")),
        (200, b'"x"', GO_TEXT, None, (ErrorCode.BAD_SERVER_RESPONSE, 'expect { or n, but found "')),
        (400, b"", AnswerWording(status="S{}", bad_request="B"), None, (ErrorCode.BAD_INPUT, "B")),
        (
            400,
            b"",
            AnswerWording(status="S{}", bad_request_is_input=False),
            None,
            (ErrorCode.BAD_SERVER_RESPONSE, "S400"),
        ),
        (302, b"", AnswerWording(status="S{}", status_error=BidderError), None, (ErrorCode.UNKNOWN, "S302")),
        (200, b"{oops", AnswerWording(bad_json="{}", body_text="<{}>"), None, (ErrorCode.BAD_SERVER_RESPONSE, "<")),
        (
            200,
            b"1",
            AnswerWording(not_an_object="N{found}", body_text="<{}>"),
            None,
            (ErrorCode.BAD_SERVER_RESPONSE, "<N1>"),
        ),
        (200, b"1", AnswerWording(body_error=BidderError), None, (ErrorCode.UNKNOWN, "Bad response body: not a")),
    ],
    ids=[
        "204",
        "object",
        "400",
        "500",
        "malformed",
        "array",
        "array-go-text",
        "string-go-text",
        "own-400-text",
        "400-like-others",
        "own-status-class",
        "own-body-text",
        "own-body-text-around-shape",
        "own-body-class",
    ],
)
def test_decode_answer(status, body, wording, data, error):
    got, errors = decode_answer(ResponseData(status, body), wording)
    assert got == data
    if error is None:
        assert errors == []
    else:
        [problem] = errors
        assert problem.code == error[0] and problem.message.startswith(error[1]), problem.message


class _EchoAdapter(AnswerAdapter):
    """bids_from answers one bid, the decoded answer itself, in its own wording's currency."""

    answer_wording = AnswerWording(status="S{}", bad_json="J {}", not_an_object="O")

    def bids_from(self, request, call, data):
        return BidderResponse([TypedBid(data, "banner")], request["cur"]), [BidderError("kept")]


@pytest.mark.parametrize(
    ("status", "body", "want", "error"),
    [
        (204, b"", None, None),
        (500, b"", None, (ErrorCode.BAD_SERVER_RESPONSE, "S500")),
        (400, b"", None, (ErrorCode.BAD_INPUT, "S400")),
        (200, b"{oops", None, (ErrorCode.BAD_SERVER_RESPONSE, "J ")),
        (200, b"[1]", None, (ErrorCode.BAD_SERVER_RESPONSE, "O")),
        (200, b'{"id":"r"}', BidderResponse([TypedBid({"id": "r"}, "banner")], "EUR"), (ErrorCode.UNKNOWN, "kept")),
    ],
)
def test_answer_adapter(status, body, want, error):
    got, errors = _EchoAdapter().make_bids({"cur": "EUR"}, RequestData("POST", "u"), ResponseData(status, body))
    assert got == want
    if error is None:
        assert errors == []
    else:
        [problem] = errors
        assert problem.code == error[0] and problem.message.startswith(error[1]), problem.message


def test_answer_adapter_default_wording():
    got, errors = AnswerAdapter().make_bids({}, RequestData("POST", "u"), ResponseData(503, b""))
    assert got is None and [e.message for e in errors] == [UNEXPECTED_STATUS.format(503)]
    with pytest.raises(NotImplementedError):
        AnswerAdapter().make_bids({}, RequestData("POST", "u"), ResponseData(200, b"{}"))


class _OwnEchoAdapter(OwnAnswerAdapter):
    """read_body takes ``ok:<text>`` (else fails with the body's text); bids_from echoes the text."""

    def __init__(self, wording: AnswerWording) -> None:
        self.answer_wording = wording

    def read_body(self, body):
        if not body.startswith(b"ok:"):
            raise JsonShapeError(body.decode())
        return body[3:].decode()

    def bids_from(self, request, call, data):
        return BidderResponse([TypedBid({"id": data}, "banner")]), []


@pytest.mark.parametrize(
    ("status", "body", "wording", "want", "error"),
    [
        (204, b"", AnswerWording(), None, None),
        (500, b"", AnswerWording(), None, (ErrorCode.BAD_SERVER_RESPONSE, UNEXPECTED_STATUS.format(500))),
        (400, b"", AnswerWording(), None, (ErrorCode.BAD_INPUT, UNEXPECTED_STATUS.format(400))),
        (200, b"ok:r", AnswerWording(), BidderResponse([TypedBid({"id": "r"}, "banner")]), None),
        (200, b"bad", AnswerWording(), None, (ErrorCode.BAD_SERVER_RESPONSE, "bad")),
        (200, b"bad", PLAIN_BODY_WORDING, None, (ErrorCode.UNKNOWN, "bad")),
        (200, b"bad", AnswerWording(body_text="E: {}"), None, (ErrorCode.BAD_SERVER_RESPONSE, "E: bad")),
    ],
    ids=["204", "500", "400", "read", "unread", "unread-plain", "unread-own-text"],
)
def test_own_answer_adapter(status, body, wording, want, error):
    got, errors = _OwnEchoAdapter(wording).make_bids({}, RequestData("POST", "u"), ResponseData(status, body))
    assert got == want
    assert [(e.code, e.message) for e in errors] == ([] if error is None else [error])


def test_own_answer_adapter_needs_its_parts():
    with pytest.raises(NotImplementedError):
        OwnAnswerAdapter().make_bids({}, RequestData("POST", "u"), ResponseData(200, b"{}"))
    with pytest.raises(NotImplementedError):
        OwnAnswerAdapter().bids_from({}, RequestData("POST", "u"), {})


@pytest.mark.parametrize(
    ("status", "want"),
    [(200, None), (204, None), (400, ErrorCode.BAD_INPUT), (503, ErrorCode.BAD_SERVER_RESPONSE)],
)
def test_status_error(status, want):
    error = status_error(status)
    assert (error and error.code) == want


@pytest.mark.parametrize(
    ("imps", "imp_id", "order", "want_imp", "want_bid"),
    [
        ([{"id": "a", "video": {}, "banner": {}}], "a", None, "banner", "banner"),
        ([{"id": "a", "audio": {}, "native": {}}], "a", None, "native", "native"),
        ([{"id": "a", "audio": {}}], "a", BANNER_VIDEO_NATIVE, None, None),
        ([{"id": "a", "banner": None, "video": {}}], "a", BANNER_VIDEO_NATIVE, "video", "video"),
        ([{"id": "a", "audio": {}, "video": {}}], "a", ("audio", "video"), "audio", "audio"),
        ([{"id": "a", "banner": {}}, {"id": "b", "video": {}}], "b", None, "banner", "video"),
        ([{"id": "a", "banner": {}}], "x", None, "banner", None),
    ],
    ids=["banner-first", "native-before-audio", "none-in-order", "null-is-absent", "own-order", "by-id", "no-imp"],
)
def test_first_media_type_and_imp_bid_type(imps, imp_id, order, want_imp, want_bid):
    extra = () if order is None else (order,)
    assert first_media_type(imps[0], *extra) == want_imp
    assert imp_bid_type(imps, imp_id, *extra) == want_bid


@pytest.mark.parametrize(
    ("imps", "imp_id", "order", "want_first", "want_any"),
    [
        ([{"id": "a", "audio": {}}, {"id": "a", "video": {}}], "a", BANNER_VIDEO_NATIVE, None, "video"),
        ([{"id": "a", "native": {}}, {"id": "a", "banner": {}}], "a", BANNER_VIDEO_NATIVE, "native", "native"),
        ([{"id": "a", "banner": {}, "native": {}}], "a", ("native", "banner"), "native", "native"),
        ([{"id": "a", "audio": {}}], "a", BANNER_VIDEO_NATIVE, None, None),
        ([{"id": "b", "banner": {}}], "a", None, None, None),
    ],
    ids=["passes-over-an-imp-of-none", "first-match-wins", "own-order", "none-in-order", "no-imp"],
)
def test_any_imp_bid_type(imps, imp_id, order, want_first, want_any):
    extra = () if order is None else (order,)
    assert imp_bid_type(imps, imp_id, *extra) == want_first  # the difference from imp_bid_type
    assert any_imp_bid_type(imps, imp_id, *extra) == want_any


@pytest.mark.parametrize(
    ("impid", "want"),
    [
        ("a", TypedBid({"impid": "a"}, "video")),  # the imp of that id asking for one of the order
        ("b", TypedBid({"impid": "b"}, "banner")),
        ("x", (ErrorCode.BAD_SERVER_RESPONSE, "The impression with ID x is not present into the request")),
        ("c", (ErrorCode.BAD_SERVER_RESPONSE, "The impression with ID c is not present into the request")),
    ],
    ids=["typed", "passes-over", "no-imp", "no-type-in-order"],
)
def test_typed_by_imp(impid, want):
    imps = iter([{"id": "a", "video": {}}, {"id": "b", "audio": {}}, {"id": "b", "banner": {}}, {"id": "c"}])
    typed = typed_by_imp(imps, imp_not_in_request, BANNER_VIDEO_NATIVE)  # any iterable: read once, kept
    typed({"impid": "a"})
    got = typed({"impid": impid})
    assert (got if isinstance(got, TypedBid) else (got.code, got.message)) == want


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("x-openrtb-version", "X-Openrtb-Version"),
        ("USER-AGENT", "User-Agent"),
        ("dnt", "Dnt"),
        ("Content-Type", "Content-Type"),
        ("x_weird", "x_weird"),
        ("", ""),
    ],
)
def test_canonical_header(name, canonical):
    assert canonical_header(name) == canonical


@pytest.mark.parametrize(
    ("value", "headers"),
    [("1.2.3.4", {"X-Forwarded-For": "1.2.3.4"}), (1, {"X-Forwarded-For": "1"}), ("", {}), (None, {})],
)
def test_with_header(value, headers):
    got: dict[str, str] = {}
    with_header(got, "x-forwarded-for", value)
    assert got == headers


def test_json_headers():
    assert json_headers(x_openrtb_version="2.5", dnt=None) == {**JSON_HEADERS, "X-Openrtb-Version": "2.5"}


def test_json_call():
    call = json_call("https://b.example/bid", {"id": "r", "imp": []}, ["i1", "i2"])
    assert (call.method, call.uri, call.body, call.imp_ids) == (
        "POST",
        "https://b.example/bid",
        b'{"id":"r","imp":[]}',
        ["i1", "i2"],
    )
    assert call.headers == JSON_HEADERS
    assert json_call("u", {}, [], headers={}, method="GET").headers == {}


@pytest.mark.parametrize(
    ("bid", "kind"),
    [
        ({"mtype": 1}, "banner"),
        ({"mtype": 2}, "video"),
        ({"mtype": 3}, "audio"),
        ({"mtype": 4}, "native"),
        ({"mtype": 5}, None),
        ({"mtype": "1"}, None),
        ({}, None),
    ],
)
def test_mtype_bid_type(bid, kind):
    assert mtype_bid_type(bid) == kind


@pytest.mark.parametrize(
    ("answer", "bid_ids"),
    [
        ({"seatbid": [{"bid": [{"id": "a"}, {"id": "b"}]}, {"bid": [{"id": "c"}]}]}, ["a", "b", "c"]),
        ({"seatbid": [{"bid": [{"id": "a"}, "x", None]}, "seat", {"bid": {"id": "d"}}]}, ["a"]),  # wrong shapes skipped
        ({"seatbid": "x"}, []),
        ({}, []),
    ],
)
def test_answer_bids(answer, bid_ids):
    assert [bid["id"] for _, bid in answer_bids(answer)] == bid_ids


@pytest.mark.parametrize(
    ("template", "values", "url"),
    [
        ("https://h/{{.PublisherID}}?host={{.Host}}", {"PublisherID": "p1", "Host": "h2"}, "https://h/p1?host=h2"),
        ("https://h/{{.Missing}}/x", {}, "https://h//x"),  # Go's template writes nothing
        ("https://h/{{.A}}", {"A": "{{.A}}"}, "https://h/{{.A}}"),  # a value is never expanded again
        ("https://h/{{.Open", {}, "https://h/{{.Open"),
    ],
)
def test_resolve_macros(template, values, url):
    assert resolve_macros(template, values) == url


def _eur_to_usd(amount: float, source: str, target: str) -> float:
    if (source.upper(), target) != ("EUR", "USD"):
        raise ConversionError(f"Currency conversion rate not found: '{source}' => '{target}'")
    return amount * 1.1


@pytest.mark.parametrize(
    ("imp", "expected"),
    [
        (
            {"id": "i", "bidfloor": 2.0, "bidfloorcur": "EUR"},
            {"id": "i", "bidfloor": pytest.approx(2.2), "bidfloorcur": "USD"},
        ),
        ({"id": "i", "bidfloor": 2.0, "bidfloorcur": "usd"}, None),  # already USD: the same imp
        ({"id": "i", "bidfloor": 2.0}, None),  # no currency: USD
        ({"id": "i", "bidfloor": 0, "bidfloorcur": "EUR"}, None),  # no positive floor
        ({"id": "i", "bidfloor": True, "bidfloorcur": "EUR"}, None),
        ({"id": "i", "bidfloor": 2.0, "bidfloorcur": "JPY"}, ConversionError),
    ],
)
def test_floor_in_usd(imp, expected):
    info = RequestInfo("b", convert_currency=_eur_to_usd)
    before = dict(imp)
    if expected is ConversionError:
        with pytest.raises(ConversionError, match="'JPY' => 'USD'"):
            floor_in_usd(imp, info)
    elif expected is None:
        assert floor_in_usd(imp, info) is imp
    else:
        assert floor_in_usd(imp, info) == expected
    assert imp == before  # the caller's imp is never changed


@pytest.mark.parametrize(
    ("banner", "want"),
    [
        ({"format": [{"w": 3, "h": 2}, {"w": 1}]}, {"format": [{"w": 3, "h": 2}, {"w": 1}], "w": 3, "h": 2}),
        ({"w": 5, "format": [{"w": 300, "h": 250}]}, {"w": 300, "h": 250, "format": [{"w": 300, "h": 250}]}),
        ({"format": [{"w": 300}]}, {"format": [{"w": 300}], "w": 300, "h": 0}),
        ({"format": ["x"]}, {"format": ["x"], "w": 0, "h": 0}),
        ({"format": []}, None),
        ({"format": {"w": 1}}, None),
        ({}, None),
    ],
    ids=["first-format", "replaces-own-size", "missing-height", "not-an-object", "empty", "not-a-list", "none"],
)
def test_banner_sized_by_first_format(banner, want):
    assert banner_sized_by_first_format(banner) == want


def _typed_by_kind(bid):
    """A table's ``typed``: "b" a banner, "x" an error, anything else silently skipped."""
    if bid == "x":
        return BidderError("bad x")
    return TypedBid({"id": bid}, "banner") if bid == "b" else None


@pytest.mark.parametrize(
    ("bids", "first_error_fails", "want"),
    [
        (["b", "x", "s", "b"], False, (2, ["bad x"])),  # an error reported, its bid skipped; None skipped silently
        (["b", "x", "b"], True, (None, ["bad x"])),  # the first error is the whole outcome
        (["b", "s"], True, (1, [])),
        ([], False, (0, [])),
    ],
    ids=["errors-reported", "first-error-fails", "silent-skip", "no-bids"],
)
def test_typed_bid_response(bids, first_error_fails, want):
    result, errors = typed_bid_response(iter(bids), _typed_by_kind, "EUR", first_error_fails=first_error_fails)
    assert (result and len(result.bids), [error.message for error in errors]) == want
    assert result is None or result.currency == "EUR"


def _kind_by_id(bid):
    """A table's rule: the bid's ``id`` is its type, "x" an error."""
    return BidderError("bad x") if bid["id"] == "x" else bid["id"]


@pytest.mark.parametrize(
    ("bids", "first_error_fails", "want"),
    [
        (["banner", "x", "video"], False, (["banner", "video"], ["bad x"])),
        (["banner", "x", "video"], True, (None, ["bad x"])),
        ([], False, ([], [])),
    ],
    ids=["error-reported", "first-error-fails", "no-bids"],
)
def test_typed_as(bids, first_error_fails, want):
    typed = typed_as(_kind_by_id)
    result, errors = typed_bid_response([{"id": b} for b in bids], typed, first_error_fails=first_error_fails)
    kinds = None if result is None else [bid.bid_type for bid in result.bids]
    assert (kinds, [error.message for error in errors]) == want
    assert result is None or all(bid.bid["id"] == bid.bid_type for bid in result.bids)


def _kind_or_raise(bid):
    """A table's rule: the bid's ``id`` is its type; "k" raises KeyError, "v" ValueError."""
    if bid["id"] == "k":
        raise KeyError("k")
    if bid["id"] == "v":
        raise ValueError("bad v")
    return bid["id"]


@pytest.mark.parametrize(
    ("bids", "failures", "want"),
    [
        (["banner", "v", "video"], (ValueError,), (["banner", "video"], [(ErrorCode.UNKNOWN, "bad v")])),
        (["v", "k"], (ValueError, KeyError), ([], [(ErrorCode.UNKNOWN, "bad v"), (ErrorCode.UNKNOWN, "'k'")])),
        (["native"], (), (["native"], [])),
    ],
    ids=["error-reported", "several-failures", "none-raised"],
)
def test_typed_catching(bids, failures, want):
    result, errors = typed_bid_response([{"id": b} for b in bids], typed_catching(_kind_or_raise, *failures))
    assert ([bid.bid_type for bid in result.bids], [(e.code, e.message) for e in errors]) == want


def test_typed_catching_lets_other_exceptions_through():
    with pytest.raises(KeyError):
        typed_catching(_kind_or_raise, ValueError)({"id": "k"})


@pytest.mark.parametrize(
    ("outcome", "want"),
    [
        (
            (BidderResponse([TypedBid({"dur": 5}, "video"), TypedBid({"dur": 6}, "banner")]), []),
            [{"duration": 5}, None],
        ),
        ((None, [BidderError("e")]), None),
        ((BidderResponse(), []), []),
    ],
    ids=["video-only", "no-response", "no-bids"],
)
def test_with_video_facts(outcome, want):
    got = with_video_facts(outcome, lambda bid: {"duration": bid["dur"]})
    assert got is outcome
    assert (None if got[0] is None else [bid.bid_video for bid in got[0].bids]) == want


class _Refused(ValueError):
    pass


@pytest.mark.parametrize(
    ("params", "want"),
    [
        ({"name": "x"}, "x"),
        ({"name": ""}, ""),
        ({"name": None}, ""),  # null is absent
        ({}, ""),
        ({"name": 1}, _Refused("acme params: name must be a string")),
        ({"name": ["x"]}, _Refused("acme params: name must be a string")),
    ],
    ids=["string", "empty", "null", "absent", "number", "list"],
)
def test_string_param(params, want):
    try:
        got = string_param(params, "name", _Refused, "acme params")
    except _Refused as exc:
        got = exc
    assert (type(got), str(got)) == (type(want), str(want))


_DEBUG = "Run with request.debug = 1 for more info."


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (400, b"", (ErrorCode.BAD_INPUT, f"Unexpected status code: 400. Bad request from publisher. {_DEBUG}")),
        (503, b"", (ErrorCode.BAD_SERVER_RESPONSE, f"Unexpected status code: 503. {_DEBUG}")),
        (200, b"[]", (ErrorCode.UNKNOWN, "Bad response body: not a JSON object")),  # the body error unclassified
    ],
    ids=["publisher-400", "status", "body"],
)
def test_publisher_wording(status, body, want):
    _, errors = decode_answer(ResponseData(status, body), PUBLISHER_WORDING)
    assert [(error.code, error.message) for error in errors] == [want]


# PBS-Go's appnexus/msft/connatix: app.ext.prebid's source and version, both strings, joined by "-"
@pytest.mark.parametrize(
    ("request_", "want"),
    [
        ({"app": {"ext": {"prebid": {"source": "prebid-mobile", "version": "2.1"}}}}, "prebid-mobile-2.1"),
        ({"app": {"ext": {"prebid": {"source": "", "version": ""}}}}, "-"),
        ({"app": {"ext": {"prebid": {"source": "prebid-mobile"}}}}, ""),
        ({"app": {"ext": {"prebid": {"source": "s", "version": 2}}}}, ""),
        ({"app": {"ext": {"prebid": None}}}, ""),
        ({"app": {"ext": []}}, ""),
        ({"site": {"ext": {"prebid": {"source": "s", "version": "1"}}}}, ""),
        ({}, ""),
    ],
    ids=["both", "both-empty", "no-version", "version-not-string", "prebid-null", "ext-not-object", "site-only",
         "no-app"],
)  # fmt: skip
def test_app_display_manager_version(request_, want):
    assert app_display_manager_version(request_) == want


def test_refusal_carries_the_bidder_error() -> None:
    error = BidderError("no imp left", ErrorCode.BAD_INPUT)

    class _Local(Refusal):
        pass

    with pytest.raises(Refusal) as caught:
        raise _Local(error)
    assert caught.value.error is error
    assert str(caught.value) == "no imp left"


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (None, None),
        ({}, {}),
        ({"a": 1}, {"a": 1}),
        ([], "cannot unmarshal acme.Thing: expect { or n, but found ["),
        ("x", 'cannot unmarshal acme.Thing: expect { or n, but found "'),
    ],
    ids=["null", "empty", "object", "list", "string"],
)
def test_optional_object(value, want):
    try:
        got = optional_object(value, "acme.Thing")
    except JsonShapeError as exc:
        got = str(exc)
    assert got == want
