"""The shared reading of a bidder's answer (``common.decode_answer``): each outcome and its text."""

from __future__ import annotations

import pytest

from hbserver.adapters.base import ErrorCode, ResponseData
from hbserver.adapters.common import decode_answer

PUBMATIC_TEXT = "expect {{ or n, but found {found}"


@pytest.mark.parametrize(
    ("status", "body", "text", "data", "error"),
    [
        (204, b"", None, None, None),
        (200, b'{"id":"r"}', None, {"id": "r"}, None),
        (400, b"", None, None, (ErrorCode.BAD_INPUT, "Unexpected status code: 400. ")),
        (500, b"", None, None, (ErrorCode.BAD_SERVER_RESPONSE, "Unexpected status code: 500. ")),
        (200, b"{oops", None, None, (ErrorCode.BAD_SERVER_RESPONSE, "Bad response body: ")),
        (200, b"[1]", None, None, (ErrorCode.BAD_SERVER_RESPONSE, "Bad response body: not a JSON object")),
        (200, b"[1]", PUBMATIC_TEXT, None, (ErrorCode.BAD_SERVER_RESPONSE, "expect { or n, but found [")),
        (200, b'"x"', PUBMATIC_TEXT, None, (ErrorCode.BAD_SERVER_RESPONSE, 'expect { or n, but found "')),
    ],
    ids=["204", "object", "400", "500", "malformed", "array", "array-own-text", "string-own-text"],
)
def test_decode_answer(status, body, text, data, error):
    got, errors = decode_answer(ResponseData(status, body), *([text] if text else []))
    assert got == data
    if error is None:
        assert errors == []
    else:
        [problem] = errors
        assert problem.code == error[0] and problem.message.startswith(error[1]), problem.message
