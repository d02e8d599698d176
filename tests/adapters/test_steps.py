"""The recipe engine's shared steps (hbserver.adapters.steps), each as a table: params read as
PBS-Go decodes the struct, endpoint macros, imp.ext rewrites, header sets, answer wording and bid
typing."""

from __future__ import annotations

import re

import pytest

from hbserver.adapters.base import ErrorCode, ResponseData
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.golike import ABSENT_OBJECT, GoKind, ImpExtError, decode_go_answer
from hbserver.adapters.steps import (
    BID_TYPERS,
    HEADER_SETS,
    IMP_EXT_REWRITES,
    AnswerSpec,
    BidTyper,
    EndpointSpec,
    ParamsSpec,
    StepError,
    UntypedBid,
    macro_text,
)

SPEC = ParamsSpec(
    "openrtb_ext.ExtX",
    {
        "id": ("ID", GoKind.STRING),
        "n": ("N", GoKind.INT),
        "f": ("F", GoKind.FLOAT),
        "b": ("B", GoKind.BOOL),
        "tags": ("Tags", GoKind.STRINGS),
        "raw": ("Raw", GoKind.RAW),
    },
)


# --- params ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"id": "a", "n": 3}}, {"id": "a", "n": 3}),
        ({"bidder": {"ID": "a"}}, {"id": "a"}),  # keys in any case
        ({"bidder": {"id": None, "n": None, "b": None}}, {"id": "", "n": 0, "b": False}),  # null: Go's zero
        ({"bidder": {"id": "a", "Id": "b"}}, {"id": "b"}),  # the last occurrence wins
        ({"bidder": {"f": 1.5, "tags": ["x"], "raw": {"k": 1}}}, {"f": 1.5, "tags": ["x"], "raw": {"k": 1}}),
        ({"bidder": {"other": 1}}, {}),  # fields not in the struct are left out
        ({"bidder": None}, {}),  # null reads as an empty struct
        ({"bidder": {}, "prebid": {}}, {}),
    ],
)
def test_params_read(ext, want):
    assert SPEC.read({"id": "i", "ext": ext}) == want


@pytest.mark.parametrize(
    ("imp", "error", "message"),
    [
        ({"id": "i"}, ImpExtError, ABSENT_OBJECT),
        ({"id": "i", "ext": 1}, ImpExtError, "expect { or n, but found 1"),
        (
            {"id": "i", "ext": {"prebid": 1, "bidder": {}}},
            ImpExtError,
            "cannot unmarshal adapters.ExtImpBidder.Prebid: expect { or n, but found 1",
        ),
        ({"id": "i", "ext": {}}, JsonShapeError, ABSENT_OBJECT),
        ({"id": "i", "ext": {"bidder": []}}, JsonShapeError, "expect { or n, but found ["),
        (
            {"id": "i", "ext": {"bidder": {"id": 1}}},
            JsonShapeError,
            'cannot unmarshal openrtb_ext.ExtX.ID: expects " or n, but found 1',
        ),
        (
            {"id": "i", "ext": {"bidder": {"n": 1.5}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.N: can not decode float as int",
        ),
        (
            {"id": "i", "ext": {"bidder": {"n": "1"}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.N: unexpected character: \ufffd",
        ),
        (
            {"id": "i", "ext": {"bidder": {"f": "1"}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.F: invalid number",
        ),
        (
            {"id": "i", "ext": {"bidder": {"b": 1}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.B: expect t or f, but found 1",
        ),
        (
            {"id": "i", "ext": {"bidder": {"tags": "x"}}},
            JsonShapeError,
            'cannot unmarshal openrtb_ext.ExtX.Tags: decode slice: expect [ or n, but found "',
        ),
        (
            {"id": "i", "ext": {"bidder": {"id": 1, "ID": "a"}}},  # every occurrence is decoded
            JsonShapeError,
            'cannot unmarshal openrtb_ext.ExtX.ID: expects " or n, but found 1',
        ),
    ],
)
def test_params_read_failures(imp, error, message):
    with pytest.raises(error) as caught:
        SPEC.read(imp)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("spec", "ext", "want"),
    [
        (ParamsSpec(), {"bidder": {"any": [1]}}, {"any": [1]}),  # no fields: taken as it is
        (ParamsSpec(null_is_absent=True), {"bidder": None}, JsonShapeError(ABSENT_OBJECT)),
        (ParamsSpec(null_is_absent=False), {"bidder": None}, {}),
    ],
)
def test_params_without_fields_and_null(spec, ext, want):
    if isinstance(want, Exception):
        with pytest.raises(JsonShapeError, match="found"):
            spec.read({"ext": ext})
    else:
        assert spec.read({"ext": ext}) == want


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ({}, ParamsSpec()),
        (
            {"struct": "S", "fields": {"a": ["A", "string"], "b": ["B", "[]int"]}, "null_is_absent": True},
            ParamsSpec("S", {"a": ("A", GoKind.STRING), "b": ("B", GoKind.INTS)}, True),
        ),
        ({"fields": {"a": ["A", "str"]}}, StepError("params.fields.a")),
        ({"fields": {"a": "A"}}, StepError("params.fields.a")),
        ({"fields": {"a": ["A"]}}, StepError("params.fields.a")),
    ],
)
def test_params_spec_of(data, want):
    if isinstance(want, StepError):
        with pytest.raises(StepError, match=re.escape(str(want))):
            ParamsSpec.of(data)
    else:
        assert ParamsSpec.of(data) == want


# --- endpoint --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (True, "true"),
        (False, "false"),
        (12, "12"),
        (0, "0"),
        (1.5, "1.5"),
        (12345678.0, "12345678"),
        (0.0001, "0.0001"),
        ("abc", "abc"),
        ("", ""),
    ],
)
def test_macro_text(value, text):
    assert macro_text(value) == text


@pytest.mark.parametrize(
    ("macros", "template", "params", "uri"),
    [
        ({}, "https://x/{{.Host}}", {"env": "a"}, "https://x/{{.Host}}"),  # no macros: as it is
        ({"Host": "env"}, "https://{{.Host}}.x/bid", {"env": "eu"}, "https://eu.x/bid"),
        ({"Host": "env"}, "https://{{.Host}}.x/bid", {}, "https://.x/bid"),  # absent: empty
        ({"SourceId": "sid"}, "https://x/?s={{.SourceId}}", {"sid": 7}, "https://x/?s=7"),
        (
            {"Host": "a", "AccountID": "b"},
            "https://{{.Host}}/{{.AccountID}}",
            {"a": "h", "b": True},
            "https://h/true",
        ),
    ],
)
def test_endpoint_resolve(macros, template, params, uri):
    assert EndpointSpec(macros).resolve(template, params) == uri


@pytest.mark.parametrize("data", [{"macros": ["Host"]}, {"macros": {"Host": 1}}])
def test_endpoint_spec_of_refuses_bad_shapes(data):
    with pytest.raises(StepError, match=re.escape("endpoint.macros")):
        EndpointSpec.of(data)


# --- imp.ext ---------------------------------------------------------------------------------------

IMP = {"id": "i", "banner": {}, "ext": {"bidder": {"placementId": "p"}, "prebid": {}}}


REWRITE_ROWS = [
    ("keep", {"placementId": "p"}, IMP["ext"]),
    ("teqblaze_type", {"placementId": "p"}, {"bidder": {"type": "publisher", "placementId": "p"}}),
    ("teqblaze_type", {"endpointId": "e"}, {"bidder": {"type": "network", "endpointId": "e"}}),
    (
        "teqblaze_type",
        {"placementId": "p", "endpointId": "e"},
        {"bidder": {"type": "publisher", "placementId": "p"}},
    ),
    ("teqblaze_type", {"placementId": "", "endpointId": ""}, {"bidder": {"type": ""}}),
]


@pytest.mark.parametrize(("name", "params", "ext"), REWRITE_ROWS)
def test_imp_ext_rewrites(name, params, ext):
    out = IMP_EXT_REWRITES[name](IMP, params)
    assert out["ext"] == ext
    assert {k: v for k, v in out.items() if k != "ext"} == {"id": "i", "banner": {}}
    assert IMP["ext"] == {"bidder": {"placementId": "p"}, "prebid": {}}  # the imp itself is left alone


@pytest.mark.parametrize(
    ("table", "rows"),
    [
        (IMP_EXT_REWRITES, lambda: REWRITE_ROWS),
        (HEADER_SETS, lambda: HEADER_ROWS),
        (BID_TYPERS, lambda: [(typer.source,) for typer, _, _ in TYPER_ROWS]),
    ],
)
def test_every_step_has_rows(table, rows):
    assert {row[0] for row in rows()} == set(table)


# --- headers ---------------------------------------------------------------------------------------


HEADER_ROWS = [
    ("json", {}, {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}),
    ("content_type", {}, {"Content-Type": "application/json;charset=utf-8"}),
    ("openrtb_25", {}, {"X-Openrtb-Version": "2.5"}),
    ("device", {}, {}),
    ("device", {"device": None}, {}),
    ("device", {"device": {"ua": "UA", "ip": "1.2.3.4"}}, {"User-Agent": "UA", "X-Forwarded-For": "1.2.3.4"}),
    ("device", {"device": {"ipv6": "::1", "ip": "1.2.3.4"}}, {"X-Forwarded-For": "::1, 1.2.3.4"}),
    ("device", {"device": {"ua": "", "ip": "", "ipv6": "::1"}}, {"X-Forwarded-For": "::1"}),
    ("device", {"device": {"ua": 5, "ip": ["x"]}}, {}),
]


@pytest.mark.parametrize(("name", "request_", "want"), HEADER_ROWS)
def test_header_sets(name, request_, want):
    headers: dict[str, str] = {}
    HEADER_SETS[name](headers, request_)
    assert headers == want


# --- the answer ------------------------------------------------------------------------------------

STATUS = "Unexpected status code: {}. Run with request.debug = 1 for more info"


@pytest.mark.parametrize(
    ("spec", "status", "body", "want"),
    [
        (AnswerSpec(), 204, b"", []),
        (AnswerSpec(), 400, b"", [(STATUS.format(400), ErrorCode.BAD_INPUT)]),
        (AnswerSpec(), 500, b"", [(STATUS.format(500), ErrorCode.BAD_SERVER_RESPONSE)]),
        (AnswerSpec(bad_request_is_input=False), 400, b"", [(STATUS.format(400), ErrorCode.BAD_SERVER_RESPONSE)]),
        (AnswerSpec(status="status {}"), 418, b"", [("status 418", ErrorCode.BAD_SERVER_RESPONSE)]),
        (AnswerSpec(), 200, b"[]", [("expect { or n, but found [", ErrorCode.UNKNOWN)]),
        (AnswerSpec(), 200, b"", [("expect { or n, but found \x00", ErrorCode.UNKNOWN)]),
        (
            AnswerSpec(body_class="bad_server_response", body_text="Bad response, {}"),
            200,
            b"1",
            [("Bad response, expect { or n, but found 1", ErrorCode.BAD_SERVER_RESPONSE)],
        ),
        (AnswerSpec(body_class="bad_input"), 200, b'"x"', [('expect { or n, but found "', ErrorCode.BAD_INPUT)]),
    ],
)
def test_answer_wording(spec, status, body, want):
    answer, errors = decode_go_answer(ResponseData(status, body, {}), spec.wording)
    assert answer is None
    assert [(e.message, e.code) for e in errors] == want


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ({}, AnswerSpec()),
        ({"status": "s {}", "bad_request_is_input": False}, AnswerSpec("s {}", False)),
        ({"body_class": "bad_input", "body_text": "b: {}"}, AnswerSpec(body_class="bad_input", body_text="b: {}")),
        ({"body_class": "fatal"}, StepError("answer.body_class")),
    ],
)
def test_answer_spec_of(data, want):
    if isinstance(want, StepError):
        with pytest.raises(StepError, match=re.escape(str(want))):
            AnswerSpec.of(data)
    else:
        assert AnswerSpec.of(data) == want


# --- bid types -------------------------------------------------------------------------------------

REQUEST = {
    "imp": [
        {"id": "b", "banner": {}, "video": {}},
        {"id": "v", "video": {}},
        {"id": "n", "native": {}},
        {"id": "a", "audio": {}},
        {"id": "none"},
    ]
}


TYPER_ROWS = [
    (BidTyper("mtype"), {"impid": "b", "mtype": 1}, "banner"),
    (BidTyper("mtype"), {"impid": "b", "mtype": 2}, "video"),
    (BidTyper("mtype"), {"impid": "b", "mtype": 3}, "audio"),
    (BidTyper("mtype"), {"impid": "b", "mtype": 4}, "native"),
    (BidTyper("mtype"), {"impid": "b", "mtype": 5}, None),
    (BidTyper("mtype"), {"impid": "b"}, None),
    (BidTyper("mtype", types=("banner", "video")), {"impid": "b", "mtype": 4}, None),
    (BidTyper("imp"), {"impid": "b", "mtype": 2}, "banner"),  # the imp's first media object
    (BidTyper("imp", order=("video", "banner")), {"impid": "b"}, "video"),
    (BidTyper("imp"), {"impid": "n"}, "native"),
    (BidTyper("imp"), {"impid": "a"}, "audio"),
    (BidTyper("imp"), {"impid": "none"}, None),
    (BidTyper("imp"), {"impid": "zzz"}, None),
    (BidTyper("mtype_then_imp"), {"impid": "b", "mtype": 2}, "video"),
    (BidTyper("mtype_then_imp"), {"impid": "v", "mtype": 0}, "video"),
    (BidTyper("mtype_then_imp"), {"impid": "zzz"}, None),
]


@pytest.mark.parametrize(("typer", "bid", "want"), TYPER_ROWS)
def test_bid_typers(typer, bid, want):
    assert typer.source in BID_TYPERS
    if want is None:
        with pytest.raises(UntypedBid):
            typer.type_of(bid, REQUEST)
    else:
        assert typer.type_of(bid, REQUEST) == want


@pytest.mark.parametrize(
    ("typer", "bid", "want"),
    [
        (BidTyper(), {"impid": "i", "mtype": 9}, ("Unsupported MType 9", ErrorCode.UNKNOWN)),
        (BidTyper(), {"impid": "i"}, ("Unsupported MType 0", ErrorCode.UNKNOWN)),
        (
            BidTyper(error="no type for {impid}", error_class="bad_server_response"),
            {"impid": "i"},
            ("no type for i", ErrorCode.BAD_SERVER_RESPONSE),
        ),
        (BidTyper(error="{mtype}/{impid}", error_class="bad_input"), {"mtype": 7}, ("7/", ErrorCode.BAD_INPUT)),
    ],
)
def test_untyped_bid_wording(typer, bid, want):
    with pytest.raises(UntypedBid) as caught:
        typer.type_of(bid, REQUEST)
    assert (caught.value.error.message, caught.value.error.code) == want


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ({}, BidTyper()),
        ({"source": "imp", "order": ["video", "banner"]}, BidTyper("imp", order=("video", "banner"))),
        ({"source": "guess"}, StepError("bid_type.source")),
        ({"types": ["banner", "popup"]}, StepError("bid_type: media types")),
        ({"error_class": "oops"}, StepError("bid_type.error_class")),
    ],
)
def test_bid_typer_of(data, want):
    if isinstance(want, StepError):
        with pytest.raises(StepError, match=re.escape(str(want))):
            BidTyper.of(data)
    else:
        assert BidTyper.of(data) == want
