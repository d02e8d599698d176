"""The shared reading of a bidder's answer (``common.decode_answer`` with an adapter's wording) and
the shared bid typing by imp: each outcome and its text."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import BidderError, ErrorCode, ResponseData
from hbserver.adapters.common import (
    BANNER_VIDEO_NATIVE,
    AnswerWording,
    decode_answer,
    first_media_type,
    imp_bid_type,
    status_error,
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
