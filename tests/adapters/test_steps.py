"""The recipe engine's shared steps (hbserver.adapters.steps), each as a table: params read as
PBS-Go decodes the struct, endpoint macros, imp.ext rewrites, header sets, answer wording and bid
typing."""

from __future__ import annotations

import re

import pytest

from hbserver.adapters.base import ErrorCode, ResponseData
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.golike import ABSENT_OBJECT, GoAnswer, ImpExtError
from hbserver.adapters.steps import (
    ANSWER_DECODERS,
    BID_META,
    BID_REWRITES,
    BID_SKIPS,
    BID_TYPERS,
    BID_VIDEO,
    HEADER_SETS,
    IMP_CHECKS,
    IMP_EXT_REWRITES,
    IMP_REWRITES,
    PARAM_CHECKS,
    REQUEST_CHECKS,
    AnswerSpec,
    BidTyper,
    EndpointSpec,
    ImpCheck,
    ParamCheck,
    ParamsSpec,
    StepError,
    UntypedBid,
    checked_text,
    indexed_ext_prebid_bids,
    macro_text,
    native_wrapped,
    with_publisher_id,
)

SPEC = ParamsSpec(
    "openrtb_ext.ExtX",
    {
        "id": ("ID", "string"),
        "n": ("N", "int"),
        "f": ("F", "float64"),
        "b": ("B", "bool"),
        "tags": ("Tags", "[]string"),
        "raw": ("Raw", "json.RawMessage"),
        "zone": ("Zone", "string_int"),
        "num": ("Num", "json.Number"),
        "u": ("U", "uint64"),
        "m": ("M", "map"),
    },
)
ZERO = {"id": "", "n": 0, "f": 0, "b": False, "tags": None, "raw": None, "zone": 0, "num": "", "u": 0, "m": None}


# --- params ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"id": "a", "n": 3}}, {"id": "a", "n": 3}),
        ({"bidder": {"ID": "a"}}, {"id": "a"}),  # keys in any case
        ({"bidder": {"id": None, "n": None, "b": None}}, {}),  # null: Go's zero
        ({"bidder": {"id": "a", "Id": "b"}}, {"id": "b"}),  # the last occurrence wins
        ({"bidder": {"f": 1.5, "tags": ["x"], "raw": {"k": 1}}}, {"f": 1.5, "tags": ["x"], "raw": {"k": 1}}),
        ({"bidder": {"other": 1}}, {}),  # fields not in the struct are left out
        ({"bidder": None}, {}),  # null reads as an empty struct
        ({"bidder": {}, "prebid": {}}, {}),
        ({"bidder": {"tags": ["a", None]}}, {"tags": ["a", ""]}),  # a null item: its zero value
        ({"bidder": {"u": 2**64 - 1}}, {"u": 2**64 - 1}),  # uint64
        ({"bidder": {"u": None}}, {}),
        ({"bidder": {"m": {"k": [1]}}}, {"m": {"k": [1]}}),
        ({"bidder": {"zone": 12}}, {"zone": 12}),  # jsonutil.StringInt: a number
        ({"bidder": {"zone": "-12"}}, {"zone": -12}),  # or a string of one
        ({"bidder": {"zone": ""}}, {}),
        ({"bidder": {"zone": "0" * 5000 + "7"}}, {"zone": 7}),  # leading zeros
        ({"bidder": {"num": 12}}, {"num": "12"}),  # json.Number: a number as its text
        ({"bidder": {"num": 1.5}}, {"num": "1.5"}),
        ({"bidder": {"num": "abc"}}, {"num": "abc"}),  # a string as given
    ],
)
def test_params_read(ext, want):
    assert SPEC.read({"id": "i", "ext": ext}) == {**ZERO, **want}  # every field, zero when not given


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
        (
            {"id": "i", "ext": {"bidder": {"u": -1}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.U: not a uint64: -",
        ),
        (
            {"id": "i", "ext": {"bidder": {"u": 2**64}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.U: not a uint64: 1",
        ),
        (
            {"id": "i", "ext": {"bidder": {"u": "1"}}},
            JsonShapeError,
            'cannot unmarshal openrtb_ext.ExtX.U: not a uint64: "',
        ),
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
            {"id": "i", "ext": {"bidder": {"zone": "abc"}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.Zone: Value looks like Number/Boolean/None, but can't find its end: "
            "',' or '}' symbol",
        ),
        (
            {"id": "i", "ext": {"bidder": {"zone": None}}},  # StringInt.UnmarshalJSON gets null: ParseInt refuses it
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.Zone: Value looks like Number/Boolean/None, but can't find its end: "
            "',' or '}' symbol",
        ),
        (
            {"id": "i", "ext": {"bidder": {"zone": 1.5}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.Zone: Value looks like Number/Boolean/None, but can't find its end: "
            "',' or '}' symbol",
        ),
        (
            {"id": "i", "ext": {"bidder": {"zone": "9" * 5000}}},  # no int() of 5000 digits
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.Zone: Value is number, but overflowed while parsing",
        ),
        (
            {"id": "i", "ext": {"bidder": {"zone": 2**64}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.Zone: Value is number, but overflowed while parsing",
        ),
        (
            {"id": "i", "ext": {"bidder": {"num": True}}},
            JsonShapeError,
            "cannot unmarshal openrtb_ext.ExtX.Num: readNumberAsString: invalid number, found t",
        ),
        (
            {"id": "i", "ext": {"bidder": {"ID": "a", "id": 1}}},  # every occurrence is decoded
            JsonShapeError,
            'cannot unmarshal openrtb_ext.ExtX.ID: expects " or n, but found 1',
        ),
        # json-iterator reads on past a one-character bad value: each field decoded after it wraps the
        # error in its Go name, and the text names the failing field alone (smartrtb's bad-pub-value)
        (
            {"id": "i", "ext": {"bidder": {"id": 1, "ID": "a"}}},
            JsonShapeError,
            'cannot unmarshal ID: expects " or n, but found 1',
        ),
        (
            {"id": "i", "ext": {"bidder": {"id": 0, "other": 1, "b": True}}},
            JsonShapeError,
            'cannot unmarshal ID: expects " or n, but found 0',
        ),
        (  # only unknown members follow: nothing wraps it
            {"id": "i", "ext": {"bidder": {"id": 0, "other": 1}}},
            JsonShapeError,
            'cannot unmarshal openrtb_ext.ExtX.ID: expects " or n, but found 0',
        ),
        (  # two characters: the iterator stops at the second, nothing after it is read
            {"id": "i", "ext": {"bidder": {"id": 10, "b": True}}},
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
        (ParamsSpec(null_is_absent=True), None, ImpExtError(ABSENT_OBJECT)),  # "ext": null
        (ParamsSpec(skip=True), "not even an object", {}),  # params: none -- ext is not read
    ],
)
def test_params_without_fields_and_null(spec, ext, want):
    if isinstance(want, Exception):
        with pytest.raises(type(want), match="found"):
            spec.read({"ext": ext})
    else:
        assert spec.read({"ext": ext}) == want


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"bidder": {"a": "x"}}, {"a": "x"}),
        ({"prebid": 1, "bidder": {"a": "x"}}, {"a": "x"}),  # prebid is not the struct's
        ({}, {"a": ""}),  # no bidder: the zero struct
        ({"bidder": None}, {"a": ""}),
        (None, {"a": ""}),
        (1, ImpExtError("expect { or n, but found 1")),
        ("absent", ImpExtError(ABSENT_OBJECT)),
        ({"bidder": [1]}, JsonShapeError("expect { or n, but found [")),
    ],
)
def test_params_bidder_only(ext, want):
    spec = ParamsSpec("S", {"a": ("A", "string")}, bidder_only=True)
    imp = {"id": "i"} if ext == "absent" else {"id": "i", "ext": ext}
    if isinstance(want, Exception):
        with pytest.raises(type(want), match=re.escape(str(want))):
            spec.read(imp)
    else:
        assert spec.read(imp) == want


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ({}, ParamsSpec()),
        (
            {"struct": "S", "fields": {"a": ["A", "string"], "b": ["B", "[]int"]}, "null_is_absent": True},
            ParamsSpec("S", {"a": ("A", "string"), "b": ("B", "[]int")}, True),
        ),
        ("none", ParamsSpec(skip=True)),
        ("all", StepError("params: expected a mapping or none")),
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


CHECK_ROWS = [
    ("nonempty", ("a", "b"), {"a": "x", "b": "y"}, None),
    ("nonempty", ("a", "b"), {"a": "x", "b": ""}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("nonempty", ("a",), {"a": 0}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("nonempty", ("a",), {}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("safe_host", ("a",), {"a": "ads.example.com"}, None),
    ("safe_host", ("a",), {"a": "ads-1.example.com:8080"}, None),
    ("safe_host", ("a",), {"a": "evil.com/path"}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("safe_host", ("a",), {"a": "host\n"}, ("a and b are required", ErrorCode.BAD_INPUT)),  # Go's $ is the end
    ("safe_host", ("a",), {"a": ""}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("safe_host", ("a",), {"a": "h:port"}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("uuid_length", ("a",), {"a": "0" * 32}, None),
    ("uuid_length", ("a",), {"a": "0" * 36}, None),
    ("uuid_length", ("a",), {"a": "0" * 31}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("uuid_length", ("a",), {"a": "0" * 30 + "é"}, None),  # 32 bytes
    ("uuid_length", ("a",), {"a": "0" * 37}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("above_zero", ("a",), {"a": 1}, None),  # Go's x < 1 check of an int param
    ("above_zero", ("a",), {"a": 0}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("above_zero", ("a",), {"a": -5}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("above_zero", ("a",), {}, ("a and b are required", ErrorCode.BAD_INPUT)),
    ("empty_or_safe_host", ("a",), {"a": ""}, None),  # Go: x != "" && !IsSafeHost(x) (tradplus)
    ("empty_or_safe_host", ("a",), {"a": "zone-1."}, None),
    ("empty_or_safe_host", ("a",), {"a": "evil.com/"}, ("a and b are required", ErrorCode.BAD_INPUT)),
]


@pytest.mark.parametrize(("rule", "names", "params", "want"), CHECK_ROWS)
def test_param_checks(rule, names, params, want):
    failure = ParamCheck(rule, names, "a and b are required").failure(params)
    assert (None if failure is None else (failure.message, failure.code)) == want


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ({"rule": "nonempty", "params": ["a"], "error": "e"}, ParamCheck("nonempty", ("a",), "e")),
        (
            {"rule": "safe_host", "params": ["h"], "error": "e", "class": "generic"},
            ParamCheck("safe_host", ("h",), "e", "generic"),
        ),
        ({"rule": "positive", "params": ["a"], "error": "e"}, StepError("checks: expected {rule, params, error}")),
        ({"rule": "nonempty", "params": ["a"]}, StepError("checks: expected {rule, params, error}")),
        ({"rule": "nonempty", "params": "a", "error": "e"}, StepError("checks: params is a list")),
        ({"rule": "nonempty", "params": ["a"], "error": "e", "class": "x"}, StepError("checks: unknown error class")),
    ],
)
def test_param_check_of(data, want):
    if isinstance(want, StepError):
        with pytest.raises(StepError, match=re.escape(str(want))):
            ParamCheck.of(data)
    else:
        assert ParamCheck.of(data) == want


IMP_CHECK_ROWS = [
    ("banner_or_video", {"banner": {}}, True),
    ("banner_or_video", {"video": {}}, True),
    ("banner_or_video", {"native": {}, "banner": None}, False),
    ("banner_format_set", {"video": {}}, True),
    ("banner_format_set", {"banner": {"format": []}}, True),
    ("banner_format_set", {"banner": {"format": None}}, False),
    ("banner_format_set", {"banner": {}}, False),
    ("banner_format_nonempty", {"banner": {"format": [{"w": 1}]}}, True),
    ("banner_format_nonempty", {"banner": {"format": []}}, False),
    ("banner_format_nonempty", {"video": {}}, True),
]


@pytest.mark.parametrize(("rule", "imp", "ok"), IMP_CHECK_ROWS)
def test_imp_checks(rule, imp, ok):
    failure = ImpCheck(rule, "no {id}", "generic").failure({"id": "i", **imp})
    assert (failure is None) if ok else ((failure.message, failure.code) == ("no i", ErrorCode.UNKNOWN))


REQUEST_CHECK_ROWS = [
    ("device", {"device": {}}, True),
    ("device", {"device": None}, False),
    ("site_or_app", {"app": {}}, True),
    ("site_or_app", {"site": {}}, True),
    ("site_or_app", {}, False),
    ("app", {"site": {}}, False),
    ("app", {"app": {}}, True),
]


@pytest.mark.parametrize(("rule", "request_", "ok"), REQUEST_CHECK_ROWS)
def test_request_checks(rule, request_, ok):
    failure = ImpCheck(rule, "refused").failure(request_, REQUEST_CHECKS)
    assert (failure is None) if ok else ((failure.message, failure.code) == ("refused", ErrorCode.BAD_INPUT))


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ({"rule": "banner_or_video", "error": "e"}, ImpCheck("banner_or_video", "e")),
        ({"rule": "banner_or_video", "error": "e", "class": "generic"}, ImpCheck("banner_or_video", "e", "generic")),
        ({"rule": "audio_only", "error": "e"}, StepError("imp_checks: expected {rule, error}")),
        ({"rule": "banner_or_video"}, StepError("imp_checks: expected {rule, error}")),
        ({"rule": "banner_or_video", "error": "e", "class": "x"}, StepError("imp_checks: unknown error class")),
        ({"rule": "banner_or_video", "error": "e {impid}"}, StepError("imp_checks: 'e {impid}' has a placeholder")),
    ],
)
def test_imp_check_of(data, want):
    if isinstance(want, StepError):
        with pytest.raises(StepError, match=re.escape(str(want))):
            ImpCheck.of(data)
    else:
        assert ImpCheck.of(data) == want


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
        ("{endpoint}?s={site}&prebid", "https://x/ssp", {"site": 7}, "https://x/ssp?s=7&prebid"),
        ({"A": {"param": "t", "escape": "path"}}, "https://x/{{.A}}", {"t": "a b/c?d=e"}, "https://x/a%20b%2Fc%3Fd=e"),
        ({"A": {"param": "t", "escape": "query"}}, "https://x/?a={{.A}}", {"t": "a b&c"}, "https://x/?a=a+b%26c"),
        ({"H": {"param": "r", "map": {"EU": "eu"}, "default": "us"}}, "https://{{.H}}.x", {"r": "EU"}, "https://eu.x"),
        ({"H": {"param": "r", "map": {"EU": "eu"}, "default": "us"}}, "https://{{.H}}.x", {"r": "ZZ"}, "https://us.x"),
        ({"H": {"param": "r", "map": {"EU": "eu"}}}, "https://{{.H}}.x", {"r": "ZZ"}, "https://ZZ.x"),
        ({"H": {"param": "r", "default": "us"}}, "https://{{.H}}.x", {"r": ""}, "https://us.x"),
        ({"H": {"param": "r", "default": "us"}}, "https://{{.H}}.x", {"r": "eu"}, "https://eu.x"),
        ("{endpoint}/r/{p}", "", {"p": 1}, "https://default/r/1"),  # no endpoint configured: the default
        ("{endpoint}/r/{p}", "https://x", {"p": 1}, "https://x/r/1"),
        ("{endpoint}/{id}/{{x}}", "https://x", {"id": "a b"}, "https://x/a b/{x}"),
        (
            {"Host": "a", "AccountID": "b"},
            "https://{{.Host}}/{{.AccountID}}",
            {"a": "h", "b": True},
            "https://h/true",
        ),
    ],
)
def test_endpoint_resolve(macros, template, params, uri):
    spec = EndpointSpec(format=macros, default="https://default") if isinstance(macros, str) else EndpointSpec(macros)
    assert spec.resolve(template, params) == uri


@pytest.mark.parametrize(
    ("macros", "template", "params", "uri"),
    [  # format placeholders may name macros: their text filled as the macro's spec says (vidazoo, minutemedia)
        ({"C": {"param": "c", "escape": "query", "trim": True}}, "https://x/", {"c": " a b&c\t"}, "https://x/a+b%26c"),
        ({"C": {"param": "c", "escape": "query"}}, "https://x/", {"c": " a "}, "https://x/+a+"),
        (
            {"C": {"param": "c", "trim": True}},
            "https://x/",
            {"c": "\u00a0a b\n"},
            "https://x/a b",
        ),  # Go's unicode spaces
        ({"C": {"param": "c", "trim": True}}, "https://x/", {"c": "\x1ca"}, "https://x/\x1ca"),  # not Go's space
        (
            {"C": {"param": "c", "trim": True, "default": "d"}},
            "https://x/",
            {"c": "  "},
            "https://x/d",
        ),  # trimmed first
    ],
)
def test_endpoint_format_with_macros(macros, template, params, uri):
    assert EndpointSpec(macros, format="{endpoint}{C}").resolve(template, params) == uri


def test_macro_trim_is_a_boolean():
    with pytest.raises(StepError, match=re.escape("endpoint.macros")):
        EndpointSpec.of({"macros": {"C": {"param": "c", "trim": "yes"}}})


def test_endpoint_required():
    assert EndpointSpec.of({"required": True}).required and not EndpointSpec.of({}).required


@pytest.mark.parametrize(
    "data",
    [
        {"macros": ["Host"]},
        {"macros": {"Host": 1}},
        {"macros": {"Host": {"map": {}}}},
        {"macros": {"Host": {"param": "h", "escape": "url"}}},
        {"macros": {"Host": {"param": "h", "map": ["x"]}}},
    ],
)
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
    ("drop", {"placementId": "p"}, None),  # no ext at all
    ("params", {"publisher_id": "p", "ad_unit_id": ""}, {"publisher_id": "p", "ad_unit_id": ""}),
    ("params", {"zoneId": 12}, {"zoneId": 12}),
    ("stored_request", {"srid": "s1"}, {"bidder": {}, "prebid": {"storedrequest": {"id": "s1"}}}),
    ("stored_request", {}, {"bidder": {}, "prebid": {"storedrequest": {"id": ""}}}),
    ("param_member", {"srid": {"k": 1}}, {"srid": {"k": 1}}),
    ("param_member", {"srid": None}, None),
    ("params_under", {"appId": "a", "style": ""}, {"srid": {"appId": "a", "style": ""}}),
    ("params_under_omitempty", {"appId": "a", "style": "", "n": 0}, {"srid": {"appId": "a"}}),
    ("params_under_omitempty", {"appId": ""}, {"srid": {}}),
    ("publisher_type", {"placementId": "p"}, {"bidder": {"type": "publisher", "placementId": "p"}}),
    ("publisher_type", {"placementId": ""}, {"bidder": {"type": "publisher"}}),
    ("params_omitempty", {"network_id": "n", "profile_id": "", "n": 0}, {"network_id": "n"}),
    ("params_omitempty", {"network_id": ""}, {}),
    ("teqblaze_type_or_keep", {"placementId": "p"}, {"bidder": {"type": "publisher", "placementId": "p"}}),
    ("teqblaze_type_or_keep", {"endpointId": "e"}, {"bidder": {"type": "network", "endpointId": "e"}}),
    ("teqblaze_type_or_keep", {"placementId": "", "endpointId": ""}, IMP["ext"]),  # neither: the ext kept
    ("bidder", {"placementId": "decoded"}, {"placementId": "p"}),  # the bidder member as it came
]


@pytest.mark.parametrize(("name", "params", "ext"), REWRITE_ROWS)
def test_imp_ext_rewrites(name, params, ext):
    out = IMP_EXT_REWRITES[name](IMP, params, "srid")
    assert out.get("ext") == ext
    assert {k: v for k, v in out.items() if k != "ext"} == {"id": "i", "banner": {}}
    assert IMP["ext"] == {"bidder": {"placementId": "p"}, "prebid": {}}  # the imp itself is left alone


@pytest.mark.parametrize(("ae", "want"), [(1, {"ae": 1}), (0, {}), (None, {})])
def test_stored_request_keeps_a_set_ae(ae, want):
    imp = {"id": "i", "ext": {"bidder": {"srid": "s"}, "prebid": {"x": 1}, "ae": ae}}
    out = IMP_EXT_REWRITES["stored_request"](imp, {"srid": "s"}, "srid")
    assert out["ext"] == {"bidder": {}, "prebid": {"storedrequest": {"id": "s"}}, **want}


# --- imp rewrites ----------------------------------------------------------------------------------

FORMATS = [{"w": 3, "h": 4}, {"w": 5, "h": 6}]
IMP_REWRITE_ROWS = [
    ("banner_size", {"format": FORMATS}, {"format": FORMATS, "w": 3, "h": 4}),
    ("banner_size", {"w": 7, "format": FORMATS}, {"w": 3, "h": 4, "format": FORMATS}),
    ("banner_size", {"w": 0, "h": 0, "format": FORMATS}, {"w": 0, "h": 0, "format": FORMATS}),  # set, if 0
    ("banner_size", {"format": []}, {"format": []}),
    ("banner_size", {"format": [{}]}, {"format": [{}], "w": 0, "h": 0}),
    ("banner_size", None, None),
    # banner_size_always: any banner with formats takes its first one's size (teads, silverpush, yandex)
    ("banner_size_always", {"w": 7, "h": 9, "format": FORMATS}, {"w": 3, "h": 4, "format": FORMATS}),
    ("banner_size_always", {"w": 7, "h": 9, "format": []}, {"w": 7, "h": 9, "format": []}),
    ("banner_size_always", {"w": 7, "format": [{"h": None}]}, {"w": 0, "h": 0, "format": [{"h": None}]}),
    ("banner_size_always", {"format": ["x"]}, {"w": 0, "h": 0, "format": ["x"]}),
    ("banner_size_nonzero", {"w": 0, "h": 9, "format": FORMATS}, {"w": 3, "h": 4, "format": FORMATS}),
    ("banner_size_nonzero", {"w": 8, "h": 9, "format": FORMATS}, {"w": 8, "h": 9, "format": FORMATS}),
    ("banner_size_nonzero", {"h": 9}, {"h": 9}),
    ("banner_size_unsized", {"format": FORMATS}, {"format": FORMATS, "w": 3, "h": 4}),
    ("rewarded_video_ext", {"w": 1}, {"w": 1}),  # only a video changes (see test_rewarded_video_ext)
    ("banner_size_unsized", {"w": 7, "format": FORMATS}, {"w": 7, "format": FORMATS}),  # one is enough
    ("drop_ext", {"w": 1}, {"w": 1}),  # the banner kept, the ext gone (see test_drop_ext)
    ("floorcur_usd", {"w": 1}, {"w": 1}),  # only the floor's currency changes (see test_floorcur_usd)
]


@pytest.mark.parametrize(("name", "banner", "want"), IMP_REWRITE_ROWS)
def test_imp_rewrites(name, banner, want):
    imp = {"id": "i"} if banner is None else {"id": "i", "banner": banner}
    before = repr(imp)
    out = IMP_REWRITES[name](imp)
    assert out.get("banner") == want
    assert repr(imp) == before  # the imp itself is left alone


@pytest.mark.parametrize(
    ("ext", "video", "want"),
    [
        ({"prebid": {"is_rewarded_inventory": 1}}, {"w": 1}, {"w": 1, "ext": {"rewarded": 1}}),
        ({"prebid": {"is_rewarded_inventory": 1}}, {"ext": {"x": 1}}, {"ext": {"rewarded": 1}}),
        ({"prebid": {"is_rewarded_inventory": 0}}, {"w": 1}, {"w": 1}),
        ({"prebid": {"is_rewarded_inventory": "1"}}, {"w": 1}, {"w": 1}),  # does not decode: not rewarded
        ({"prebid": 1}, {"w": 1}, {"w": 1}),
        (None, {"w": 1}, {"w": 1}),
    ],
)
def test_rewarded_video_ext(ext, video, want):
    assert IMP_REWRITES["rewarded_video_ext"]({"id": "i", "video": video, "ext": ext})["video"] == want


@pytest.mark.parametrize("ext", [{"bidder": {"a": 1}}, None, "x"])
def test_drop_ext(ext):
    assert IMP_REWRITES["drop_ext"]({"id": "i", "banner": {}, "ext": ext}) == {"id": "i", "banner": {}}
    assert IMP_REWRITES["drop_ext"]({"id": "i"}) == {"id": "i"}


@pytest.mark.parametrize(
    ("imp", "want"),
    [
        ({"bidfloor": 2}, {"bidfloor": 2, "bidfloorcur": "USD"}),
        ({"bidfloorcur": "EUR"}, {"bidfloorcur": "USD"}),  # set whatever it was (tpmn), no floor converted
        ({}, {"bidfloorcur": "USD"}),
    ],
)
def test_floorcur_usd(imp, want):
    assert IMP_REWRITES["floorcur_usd"]({"id": "i", **imp}) == {"id": "i", **want}


@pytest.mark.parametrize(
    ("table", "rows"),
    [
        (IMP_EXT_REWRITES, lambda: REWRITE_ROWS),
        (IMP_REWRITES, lambda: IMP_REWRITE_ROWS),
        (IMP_CHECKS, lambda: IMP_CHECK_ROWS),
        (REQUEST_CHECKS, lambda: REQUEST_CHECK_ROWS),
        (HEADER_SETS, lambda: HEADER_ROWS),
        (BID_TYPERS, lambda: [(typer.source,) for typer, _, _ in TYPER_ROWS]),
        (PARAM_CHECKS, lambda: CHECK_ROWS),
        (ANSWER_DECODERS, lambda: [(spec.decoder,) for spec, _, _, _ in ANSWER_ROWS]),
        (BID_REWRITES, lambda: BID_REWRITE_ROWS),
        (BID_VIDEO, lambda: BID_VIDEO_ROWS),
        (BID_META, lambda: BID_META_ROWS),
        (BID_SKIPS, lambda: BID_SKIP_ROWS),
    ],
)
def test_every_step_has_rows(table, rows):
    assert {row[0] for row in rows()} == set(table)


# --- the request -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "want"),
    [
        ({}, {"site": {"publisher": {"id": "p"}}}),
        ({"site": None}, {"site": {"publisher": {"id": "p"}}}),
        (
            {"site": {"page": "x", "publisher": {"id": "old", "name": "n"}}},
            {"site": {"page": "x", "publisher": {"id": "p", "name": "n"}}},
        ),
        (
            {"app": {"bundle": "b"}, "site": {"page": "x"}},
            {"app": {"bundle": "b", "publisher": {"id": "p"}}, "site": {"page": "x"}},
        ),
        ({"app": None, "site": {"publisher": None}}, {"app": None, "site": {"publisher": {"id": "p"}}}),
    ],
)
def test_with_publisher_id(top, want):
    before = repr(top)
    assert with_publisher_id(top, "p") == want
    assert repr(top) == before


# --- headers ---------------------------------------------------------------------------------------


HEADER_ROWS = [
    ("json", {}, {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}),
    ("json_plain", {}, {"Content-Type": "application/json", "Accept": "application/json"}),
    ("json_spaced", {}, {"Content-Type": "application/json; charset=utf-8", "Accept": "application/json"}),
    ("component_id", {}, {"Componentid": "prebid-go"}),
    ("content_type", {}, {"Content-Type": "application/json;charset=utf-8"}),
    ("content_type_plain", {}, {"Content-Type": "application/json"}),
    ("openrtb_25", {}, {"X-Openrtb-Version": "2.5"}),
    ("device", {}, {}),
    ("device", {"device": None}, {}),
    ("device", {"device": {"ua": "UA", "ip": "1.2.3.4"}}, {"User-Agent": "UA", "X-Forwarded-For": "1.2.3.4"}),
    ("device", {"device": {"ipv6": "::1", "ip": "1.2.3.4"}}, {"X-Forwarded-For": "::1, 1.2.3.4"}),
    ("device", {"device": {"ua": "", "ip": "", "ipv6": "::1"}}, {"X-Forwarded-For": "::1"}),
    ("device", {"device": {"ua": 5, "ip": ["x"]}}, {}),
    ("forwarded_for", {"device": {"ua": "UA", "ipv6": "::1", "ip": "1.2.3.4"}}, {"X-Forwarded-For": "::1, 1.2.3.4"}),
    ("forwarded_for", {"device": {"ua": "UA", "ip": "1.2.3.4"}}, {"X-Forwarded-For": "1.2.3.4"}),
    ("forwarded_for", {"device": {"ipv6": "", "ip": ""}}, {}),
    ("forwarded_for", {"device": None}, {}),
    ("forwarded_for_v4_first", {"device": {"ipv6": "::1", "ip": "1.2.3.4"}}, {"X-Forwarded-For": "1.2.3.4, ::1"}),
    ("forwarded_for_v4_first", {"device": {"ipv6": "::1", "ip": ""}}, {"X-Forwarded-For": "::1"}),
    ("forwarded_for_v4_first", {"device": {"ua": "UA"}}, {}),
    ("user_agent", {"device": {"ua": "UA"}}, {"User-Agent": "UA"}),
    ("user_agent", {"device": {"ua": ""}}, {}),
    ("ip_v4_first", {"device": {"ipv6": "::1", "ip": "1.2.3.4"}}, {"X-Forwarded-For": "1.2.3.4"}),
    ("ip_v4_first", {"device": {"ipv6": "::1", "ip": ""}}, {"X-Forwarded-For": "::1"}),
    ("ip_v4_first", {"device": None}, {}),
    ("referer", {"site": {"page": "https://p"}}, {"Referer": "https://p"}),
    ("referer", {"app": {"page": "x"}}, {}),
    ("cookie_uids", {"user": {"buyeruid": "u1"}}, {"Cookie": "uids=u1"}),
    ("site_referer", {"site": {"page": "https://p"}}, {"Referer": "https://p"}),
    ("site_referer", {"site": {}}, {"Referer": ""}),  # sent even empty when there is a site
    ("site_referer", {"app": {}}, {}),
    ("ip", {"device": {"ip": "1.2.3.4", "ipv6": "::1"}}, {"X-Forwarded-For": "1.2.3.4"}),
    ("ip", {"device": {"ipv6": "::1"}}, {}),
    ("accept_language", {"device": {"language": "en"}}, {"Accept-Language": "en"}),
    ("accept_language", {"device": {"language": ""}}, {}),
    ("dnt", {"device": {"dnt": 0}}, {"Dnt": "0"}),
    ("dnt", {"device": {"dnt": 1}}, {"Dnt": "1"}),  # Go's canonical name (Header.Add)
    ("dnt", {"device": {"dnt": True}}, {}),
    ("dnt", {}, {}),
    ("openrtb_24", {}, {"X-Openrtb-Version": "2.4"}),
    ("cookie_uids", {"user": {"buyeruid": ""}}, {}),
    ("ip_header", {"device": {"ip": "1.2.3.4", "ipv6": "::1"}}, {"Ip": "1.2.3.4"}),  # Go canonical "IP"
    ("ip_header", {"device": {"ipv6": "::1"}}, {}),
    ("origin", {"site": {"domain": "d.com"}}, {"Origin": "d.com"}),  # trustx, videobyte
    ("origin", {"site": {"domain": ""}, "app": {"domain": "a"}}, {}),
    ("site_ref", {"site": {"ref": "https://r", "page": "p"}}, {"Referer": "https://r"}),
    ("site_ref", {"site": {"page": "p"}}, {}),
    ("ip_v6_first", {"device": {"ipv6": "::1", "ip": "1.2.3.4"}}, {"X-Forwarded-For": "::1"}),  # trustx
    ("ip_v6_first", {"device": {"ipv6": "", "ip": "1.2.3.4"}}, {"X-Forwarded-For": "1.2.3.4"}),
    ("ip_v6_first", {"device": None}, {}),
]


@pytest.mark.parametrize(("name", "request_", "want"), HEADER_ROWS)
def test_header_sets(name, request_, want):
    headers: dict[str, str] = {}
    HEADER_SETS[name](headers, request_)
    assert headers == want


# --- the answer ------------------------------------------------------------------------------------

STATUS = "Unexpected status code: {}. Run with request.debug = 1 for more info"


ANSWER_ROWS = [
    (AnswerSpec(), 204, b"", []),
    (AnswerSpec(), 400, b"", [(STATUS.format(400), ErrorCode.BAD_INPUT)]),
    (AnswerSpec(), 500, b"", [(STATUS.format(500), ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(bad_request_is_input=False), 400, b"", [(STATUS.format(400), ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(status="status {}"), 418, b"", [("status 418", ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(status_class="generic"), 500, b"", [(STATUS.format(500), ErrorCode.UNKNOWN)]),
    (AnswerSpec(), 200, b"[]", [("expect { or n, but found [", ErrorCode.UNKNOWN)]),
    (AnswerSpec(), 200, b"", [("expect { or n, but found \x00", ErrorCode.UNKNOWN)]),
    (
        AnswerSpec(body_class="bad_server_response", body_text="Bad response, {}"),
        200,
        b"1",
        [("Bad response, expect { or n, but found 1", ErrorCode.BAD_SERVER_RESPONSE)],
    ),
    (AnswerSpec(body_class="bad_input"), 200, b'"x"', [('expect { or n, but found "', ErrorCode.BAD_INPUT)]),
    (AnswerSpec(statuses={503: "Oops [ {} ] "}), 503, b"", [("Oops [ 503 ] ", ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(statuses={503: "Oops"}), 500, b"", [(STATUS.format(500), ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(statuses={400: "Bad request."}), 400, b"", [("Bad request.", ErrorCode.BAD_INPUT)]),
    (
        AnswerSpec(statuses={400: "Bad {}."}, bad_request_is_input=False),
        400,
        b"",
        [("Bad 400.", ErrorCode.BAD_SERVER_RESPONSE)],
    ),
    (AnswerSpec(statuses={204: "never"}), 204, b"", []),
    (AnswerSpec(empty_body="no_bids"), 200, b"", []),
    (AnswerSpec(empty_body="no_bids"), 200, b"1", [("expect { or n, but found 1", ErrorCode.UNKNOWN)]),
    (
        AnswerSpec(decoder="encoding_json"),
        200,
        b'"not json"',
        [("json: cannot unmarshal string into Go value of type openrtb2.BidResponse", ErrorCode.UNKNOWN)],
    ),
    (
        AnswerSpec(decoder="encoding_json"),
        200,
        b"[1]",
        [("json: cannot unmarshal array into Go value of type openrtb2.BidResponse", ErrorCode.UNKNOWN)],
    ),
    (
        AnswerSpec(decoder="encoding_json"),
        200,
        b"nope",
        [("invalid character 'n' looking for beginning of value", ErrorCode.UNKNOWN)],
    ),
    (AnswerSpec(decoder="encoding_json"), 200, b"", [("unexpected end of JSON input", ErrorCode.UNKNOWN)]),
    (AnswerSpec(decoder="jsoniter"), 200, b"{}", None),
    (AnswerSpec(no_bid_statuses=frozenset({503})), 503, b"x", []),
    (AnswerSpec(statuses={"5xx": "x {}", 503: "y"}), 502, b"", [("x 502", ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(statuses={"5xx": "x {}", 503: "y"}), 503, b"", [("y", ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(statuses={"4xx": "b {}"}), 404, b"", [("b 404", ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(input_statuses=frozenset(range(100, 600))), 503, b"", [(STATUS.format(503), ErrorCode.BAD_INPUT)]),
    (AnswerSpec(status="s {} {body}"), 500, b"oops", [("s 500 oops", ErrorCode.BAD_SERVER_RESPONSE)]),
    (AnswerSpec(input_statuses=frozenset({401})), 401, b"", [(STATUS.format(401), ErrorCode.BAD_INPUT)]),
    (AnswerSpec(input_statuses=frozenset({401})), 400, b"", [(STATUS.format(400), ErrorCode.BAD_SERVER_RESPONSE)]),
    (
        AnswerSpec(input_statuses=frozenset(), statuses={400: "b {body}"}),
        400,
        b"\xff",
        [("b \ufffd", ErrorCode.BAD_SERVER_RESPONSE)],
    ),
    (AnswerSpec(decoder="encoding_json"), 200, b"null", None),
    # no_content error: a 204 fails as any other status does (brave: "No bid", bad input)
    (AnswerSpec(no_content="error", statuses={204: "No bid"}), 204, b"", [("No bid", ErrorCode.BAD_SERVER_RESPONSE)]),
    (
        AnswerSpec(no_content="error", statuses={204: "No bid"}, input_statuses=frozenset({204})),
        204,
        b"",
        [("No bid", ErrorCode.BAD_INPUT)],
    ),
    # read_statuses: only those statuses are looked at, any other is read as a 200 (adman, beop)
    (AnswerSpec(read_statuses=frozenset({204, 404})), 500, b"{}", None),
    (AnswerSpec(read_statuses=frozenset({204, 404})), 400, b"", [("expect { or n, but found \x00", ErrorCode.UNKNOWN)]),
    (AnswerSpec(read_statuses=frozenset({204, 404})), 204, b"", []),
    (
        AnswerSpec(read_statuses=frozenset({204, 404})),
        404,
        b"{}",
        [(STATUS.format(404), ErrorCode.BAD_SERVER_RESPONSE)],
    ),
    (AnswerSpec(read_statuses=frozenset({204, 404})), 200, b"{}", None),
]


@pytest.mark.parametrize(("spec", "status", "body", "want"), ANSWER_ROWS)
def test_answer_decode(spec, status, body, want):
    answer, errors = spec.decode(ResponseData(status, body, {}))
    if want is None:  # an answer
        assert (answer.seatbids, errors) == ([], [])
    else:
        assert answer is None
        assert [(e.message, e.code) for e in errors] == want


@pytest.mark.parametrize(
    ("data", "want"),
    [
        ({}, AnswerSpec()),
        ({"status": "s {}", "bad_request_is_input": False}, AnswerSpec("s {}", False)),
        ({"body_class": "bad_input", "body_text": "b: {}"}, AnswerSpec(body_class="bad_input", body_text="b: {}")),
        ({"body_class": "fatal"}, StepError("answer.body_class")),
        (
            {"statuses": {503: "x {}"}, "status_class": "generic", "empty_body": "no_bids", "decoder": "encoding_json"},
            AnswerSpec(status_class="generic", statuses={503: "x {}"}, empty_body="no_bids", decoder="encoding_json"),
        ),
        ({"statuses": {"503": "x"}}, StepError("answer.statuses")),
        ({"statuses": ["x"]}, StepError("answer.statuses")),
        ({"statuses": {"5XX": "x"}}, StepError("answer.statuses")),
        ({"statuses": {"5xx": "x {}"}}, AnswerSpec(statuses={"5xx": "x {}"})),
        ({"empty_body": "skip"}, StepError("answer.empty_body")),
        ({"decoder": "orjson"}, StepError("answer.decoder")),
        ({"status_class": "x"}, StepError("answer.status_class")),
        (
            {"input_statuses": "4xx", "no_bid_statuses": [503], "status": "{} {body}"},
            AnswerSpec("{} {body}", input_statuses=frozenset(range(400, 500)), no_bid_statuses=frozenset({503})),
        ),
        ({"input_statuses": [400, 401]}, AnswerSpec(input_statuses=frozenset({400, 401}))),
        ({"input_statuses": "any"}, AnswerSpec(input_statuses=frozenset(range(100, 600)))),
        ({"input_statuses": "4XX"}, StepError("answer.input_statuses")),
        ({"no_bid_statuses": ["503"]}, StepError("answer.no_bid_statuses")),
        ({"status": "{code}"}, StepError("answer.status")),
        ({"no_content": "response"}, AnswerSpec(no_content="response")),
        ({"no_content": "error"}, AnswerSpec(no_content="error")),
        ({"no_content": "empty"}, StepError("answer.no_content")),
        ({"read_statuses": [204, 404]}, AnswerSpec(read_statuses=frozenset({204, 404}))),
        ({"read_statuses": "5xx"}, AnswerSpec(read_statuses=frozenset(range(500, 600)))),
        ({"read_statuses": [204, "404"]}, StepError("answer.read_statuses")),
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
        {"id": "nv", "native": {}, "video": {}},
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
    (BidTyper("imp", fallback="banner"), {"impid": "none"}, "banner"),  # the imp has no media object
    (BidTyper("imp", fallback="banner"), {"impid": "unknown"}, "banner"),  # no imp has its id
    (BidTyper("single_imp"), {"impid": "v"}, "video"),
    (BidTyper("single_imp"), {"impid": "b"}, None),  # banner and video: not single
    (BidTyper("single_imp", order=("banner", "native")), {"impid": "b"}, "banner"),  # video not looked at
    (BidTyper("mtype_then_single_imp"), {"impid": "b", "mtype": 2}, "video"),
    (BidTyper("mtype_then_single_imp"), {"impid": "n"}, "native"),
    (BidTyper("mtype_then_single_imp"), {"impid": "nv"}, None),
    (BidTyper("ext_media_type_then_single_imp"), {"impid": "b", "ext": {"mediaType": "native"}}, "native"),
    (BidTyper("ext_media_type_then_single_imp"), {"impid": "v", "ext": {"mediaType": "popup"}}, "video"),
    (BidTyper("ext_media_type_then_single_imp"), {"impid": "b", "ext": "x"}, None),
    (BidTyper("imp", order=("video",), fallback="banner"), {"impid": "n"}, "banner"),
    (BidTyper("imp"), {"impid": "zzz"}, None),
    (BidTyper("mtype_then_imp"), {"impid": "b", "mtype": 2}, "video"),
    (BidTyper("mtype_then_imp"), {"impid": "v", "mtype": 0}, "video"),
    (BidTyper("mtype_then_imp"), {"impid": "zzz"}, None),
    # ext_media_type_then_imp: bid.ext.mediaType, else the imp's first media object (colossus)
    (BidTyper("ext_media_type_then_imp"), {"impid": "v", "ext": {"mediaType": "native"}}, "native"),
    (BidTyper("ext_media_type_then_imp"), {"impid": "nv", "ext": {"mediaType": "popup"}}, "video"),
    (BidTyper("ext_media_type_then_imp"), {"impid": "v", "ext": "x"}, "video"),
    (BidTyper("ext_media_type_then_imp"), {"impid": "zzz"}, None),
    (BidTyper("ext_prebid"), {"impid": "b", "ext": {"prebid": {"type": "video"}}}, "video"),
    (BidTyper("ext_prebid"), {"impid": "b", "ext": {"Prebid": {"Type": "audio"}}}, "audio"),
    (BidTyper("ext_prebid"), {"impid": "b", "ext": {"prebid": {"type": "banner"}}, "mtype": 2}, "banner"),
    (BidTyper("ext_prebid"), {"impid": "b", "ext": {}}, None),
    (BidTyper("ext_prebid"), {"impid": "b"}, None),
    (BidTyper("ext_prebid"), {"impid": "b", "ext": {"prebid": {"type": "popup"}}}, None),
    (BidTyper("ext_prebid_as_is"), {"impid": "b", "ext": {"prebid": {"type": "native"}}}, "native"),
    (BidTyper("ext_prebid_as_is"), {"impid": "b", "ext": {"prebid": None}}, None),
    (BidTyper("ext_prebid_or_banner"), {"impid": "b", "ext": {"prebid": {"type": "audio"}}}, "audio"),
    (BidTyper("ext_prebid_or_banner"), {"impid": "b", "ext": {"prebid": {"type": "other"}}}, "banner"),
    (BidTyper("ext_prebid_or_banner"), {"impid": "b", "ext": {"prebid": {"type": ""}}}, None),
    (BidTyper("imp_then_ext_prebid", order=("native", "video", "banner")), {"impid": "nv"}, "native"),
    (BidTyper("imp_then_ext_prebid"), {"impid": "zzz", "ext": {"prebid": {"type": "video"}}}, "video"),
    (BidTyper("imp_then_ext_prebid"), {"impid": "zzz"}, None),
    (BidTyper("fixed", types=("video",)), {"impid": "zzz", "mtype": 1}, "video"),
    (BidTyper("ext_media_type"), {"impid": "b", "ext": {"mediaType": "video"}}, "video"),
    (BidTyper("ext_media_type"), {"impid": "b", "ext": {"mediaType": "popup"}}, None),
    # fallback: the type of any bid the source leaves untyped (kargo: ext.mediaType video/native, else banner)
    (
        BidTyper("ext_media_type", types=("video", "native"), fallback="banner"),
        {"ext": {"mediaType": "native"}},
        "native",
    ),
    (
        BidTyper("ext_media_type", types=("video", "native"), fallback="banner"),
        {"ext": {"mediaType": "audio"}},
        "banner",
    ),
    (BidTyper("ext_media_type", types=("video", "native"), fallback="banner"), {"ext": {"mediaType": 5}}, "banner"),
    (BidTyper("ext_media_type", types=("video", "native"), fallback="banner"), {"ext": "x"}, "banner"),
    (BidTyper("ext_media_type", types=("video", "native"), fallback="banner"), {}, "banner"),
    (BidTyper("mtype", fallback="video"), {"impid": "b", "mtype": 9}, "video"),
    # ext_field: the ext member that names the type (nexx360: bidType)
    (BidTyper("ext_media_type", ext_field="bidType"), {"ext": {"bidType": "audio"}}, "audio"),
    (BidTyper("ext_media_type", ext_field="bidType"), {"ext": {"BIDTYPE": "video"}}, "video"),
    (BidTyper("ext_media_type", ext_field="bidType"), {"ext": {"mediaType": "video"}}, None),
    (BidTyper("ext_media_type_then_single_imp", ext_field="bidType"), {"impid": "v", "ext": {}}, "video"),
    # a dotted ext_field walks down the ext (33across: ext.ttx.mediaType video, else banner)
    (BidTyper("ext_media_type", ext_field="ttx.mediaType"), {"ext": {"ttx": {"mediaType": "video"}}}, "video"),
    (BidTyper("ext_media_type", ext_field="ttx.mediaType"), {"ext": {"TTX": {"mediatype": "native"}}}, "native"),
    (BidTyper("ext_media_type", ext_field="ttx.mediaType"), {"ext": {"ttx": "video"}}, None),
    (BidTyper("ext_media_type", ext_field="ttx.mediaType"), {"ext": {"mediaType": "video"}}, None),
    (BidTyper("ext_media_type", ("video",), ext_field="ttx.mediaType", fallback="banner"), {"ext": None}, "banner"),
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
        (BidTyper(error="imp {quoted_impid}"), {"impid": 'a"b\n'}, ('imp "a\\"b\\n"', ErrorCode.UNKNOWN)),
        (
            BidTyper(source="imp", error="bid {id} imp {impid}"),
            {"id": "b", "impid": "x"},
            ("bid b imp x", ErrorCode.UNKNOWN),
        ),
        (
            BidTyper("ext_prebid", error='Failed to get type of bid "{impid}"', error_class="bad_server_response"),
            {"impid": "i", "ext": {"prebid": 1}},
            ('Failed to get type of bid "i"', ErrorCode.BAD_SERVER_RESPONSE),
        ),
        (
            BidTyper("ext_prebid", error="no type", error_class="bad_server_response"),
            {"impid": "i", "ext": {"prebid": {"type": "popup"}}},
            ("invalid BidType: popup", ErrorCode.UNKNOWN),  # ParseBidType's own words
        ),
        (
            BidTyper("ext_prebid_as_is", error="imp {impid} unknown", ext_error="imp {impid} bad ext"),
            {"impid": "i"},
            ("imp i bad ext", ErrorCode.UNKNOWN),
        ),
        (
            BidTyper("ext_prebid_as_is", error="imp {impid} unknown", ext_error="imp {impid} bad ext"),
            {"impid": "i", "ext": None},  # "ext": null decodes, without prebid
            ("imp i unknown", ErrorCode.UNKNOWN),
        ),
        (
            BidTyper("ext_prebid_or_banner", error="no type", ext_error="bad ext"),
            {"impid": "i", "ext": {"prebid": {"type": 5}}},
            ("bad ext", ErrorCode.UNKNOWN),
        ),
        (
            BidTyper("ext_prebid_or_banner", error="no type", ext_error="bad ext"),
            {"impid": "i", "ext": {"prebid": None}},
            ("no type", ErrorCode.UNKNOWN),
        ),
        (
            BidTyper("imp_then_ext_prebid", error='Failed to parse impression "{impid}" mediatype'),
            {"impid": "zzz", "ext": {"prebid": {"type": "unknown"}}},
            ("invalid BidType: unknown", ErrorCode.UNKNOWN),
        ),
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
        ({"source": "fixed", "types": ["video"]}, BidTyper("fixed", types=("video",))),
        ({"source": "ext_prebid", "ext_error": "x"}, BidTyper("ext_prebid", ext_error="x")),
        ({"source": "imp", "fallback": "banner"}, BidTyper("imp", fallback="banner")),
        ({"source": "imp", "fallback": "popup"}, StepError("bid_type.fallback")),
        ({"source": "ext_media_type", "ext_field": "bidType"}, BidTyper("ext_media_type", ext_field="bidType")),
        ({"source": "ext_media_type", "ext_field": 5}, StepError("bid_type.ext_field")),
    ],
)
def test_bid_typer_of(data, want):
    if isinstance(want, StepError):
        with pytest.raises(StepError, match=re.escape(str(want))):
            BidTyper.of(data)
    else:
        assert BidTyper.of(data) == want


# --- bids ------------------------------------------------------------------------------------------

BID_REWRITE_ROWS = [
    (
        "auction_price",
        {"price": 1.25, "nurl": "n?p=${AUCTION_PRICE}", "adm": "<a ${AUCTION_PRICE} ${AUCTION_PRICE}>"},
        {"price": 1.25, "nurl": "n?p=1.25", "adm": "<a 1.25 1.25>"},
    ),
    ("auction_price", {"price": 12345678.0, "adm": "${AUCTION_PRICE}"}, {"price": 12345678.0, "adm": "12345678"}),
    ("auction_price", {"price": 0, "burl": "${AUCTION_PRICE}"}, {"price": 0, "burl": "${AUCTION_PRICE}"}),
    ("auction_price", {"price": 2}, {"price": 2}),
    (
        "auction_price_burl",
        {"price": 0.5, "nurl": "${AUCTION_PRICE}", "burl": "b=${AUCTION_PRICE}"},
        {"price": 0.5, "nurl": "0.5", "burl": "b=0.5"},
    ),
    ("auction_price_burl", {"price": 1, "burl": ""}, {"price": 1, "burl": ""}),
    ("drop_ext", {"price": 1, "ext": {"x": 1}}, {"price": 1}),
    ("drop_ext", {"price": 1}, {"price": 1}),
    ("impid_from_id", {"id": "b1", "impid": "i", "price": 1}, {"id": "b1", "impid": "b1", "price": 1}),
    ("impid_from_id", {"price": 1}, {"impid": "", "price": 1}),  # Go's zero id
]


@pytest.mark.parametrize(("name", "bid", "want"), BID_REWRITE_ROWS)
def test_bid_rewrites(name, bid, want):
    before = dict(bid)
    assert BID_REWRITES[name](bid) == want
    assert bid == before


BID_VIDEO_ROWS = [
    ("cat_dur", {"cat": ["IAB1", "IAB2"], "dur": 30}, {"primary_category": "IAB1", "duration": 30}),
    ("cat_dur", {}, {"primary_category": "", "duration": 0}),
    ("cat_dur", {"cat": [], "dur": -5}, {"primary_category": "", "duration": 0}),
    ("cat_dur", {"cat": "IAB1", "dur": 1.5}, {"primary_category": "", "duration": 0}),
    ("ext_prebid", {}, None),
    ("ext_prebid", {"ext": {"prebid": {"meta": {}}}}, None),
    ("ext_prebid", {"ext": {"prebid": {"video": {"duration": 30, "x": 1}}}}, {"duration": 30}),
    ("ext_prebid", {"ext": {"Prebid": {"Video": {"primary_category": "c"}}}}, {"primary_category": "c"}),
    ("ext_prebid", {"ext": "x"}, JsonShapeError('expect { or n, but found "')),
    ("ext_prebid", {"ext": {"prebid": {"video": {"duration": "x"}}}}, JsonShapeError("ExtBidPrebidVideo.Duration")),
    ("ext_prebid", {"ext": {"prebid": {"video": 1}}}, JsonShapeError("ExtBidPrebid.Video")),
]


@pytest.mark.parametrize(("name", "bid", "want"), BID_VIDEO_ROWS)
def test_bid_video(name, bid, want):
    if isinstance(want, JsonShapeError):
        with pytest.raises(JsonShapeError, match=re.escape(str(want))):
            BID_VIDEO[name](bid)
    else:
        assert BID_VIDEO[name](bid) == want


BID_SKIP_ROWS = [
    ("nonpositive_price", {"price": 0.01}, False),
    ("nonpositive_price", {"price": 0}, True),
    ("nonpositive_price", {"price": -1}, True),
    ("nonpositive_price", {}, True),
    ("zero_price", {"price": 0}, True),
    ("zero_price", {}, True),
    ("zero_price", {"price": -1}, False),  # Go's bid.Price != 0 keeps a negative price
    ("zero_price", {"price": 0.01}, False),
]


@pytest.mark.parametrize(("name", "bid", "skip"), BID_SKIP_ROWS)
def test_bid_skips(name, bid, skip):
    assert BID_SKIPS[name](bid) is skip


BID_META_ROWS = [
    ("ext_prebid", {}, None),
    ("ext_prebid", {"ext": {"prebid": {"meta": {"brandId": 1}}}}, {"brandId": 1}),
    ("ext_prebid", {"ext": {"prebid": {"video": {}}}}, None),
    ("ext_prebid", {"ext": {"prebid": {"meta": [1]}}}, JsonShapeError("ExtBidPrebid.Meta")),
    ("ext_prebid", {"ext": {"prebid": "p"}}, JsonShapeError("ExtBid.Prebid")),
    ("adomain", {"adomain": ["a.com"]}, {"advertiserDomains": ["a.com"]}),
    ("adomain", {"adomain": []}, {}),  # omitempty: an empty meta, still set
    ("adomain", {}, {}),
]


@pytest.mark.parametrize(("name", "bid", "want"), BID_META_ROWS)
def test_bid_meta(name, bid, want):
    if isinstance(want, JsonShapeError):
        with pytest.raises(JsonShapeError, match=re.escape(str(want))):
            BID_META[name](bid)
    else:
        assert BID_META[name](bid) == want


@pytest.mark.parametrize(
    ("text", "args", "kwargs", "ok"),
    [
        ("{}", ("x",), {}, True),
        ("plain", ("x",), {}, True),
        ("#{index}: {}", ("x",), {"index": 0}, True),
        ("{impid} {mtype}", (), {"impid": "", "mtype": 0}, True),
        ("{id}", (), {"impid": ""}, False),
        ("{} {}", ("x",), {}, False),
        ("{", ("x",), {}, False),
        ("{{literal}} {}", ("x",), {}, True),
    ],
)
def test_checked_text(text, args, kwargs, ok):
    if ok:
        assert checked_text(text, "w", *args, **kwargs) == text
    else:
        with pytest.raises(StepError, match=r"^w: "):
            checked_text(text, "w", *args, **kwargs)


_TYPE_WORDS = (
    "Bid[{}].Ext.Prebid.Type expects one of the following values: 'banner', 'native', 'video', 'audio', got '{}'"
)
_BAD_TYPE_EXT = 'Failed to parse Bid[0].Ext: cannot unmarshal BidType: expects " or n, but found 1'


@pytest.mark.parametrize(
    ("bids", "types", "errors"),
    [
        ([{"ext": {"prebid": {"type": "video"}}}, {"ext": {"prebid": {"type": "audio"}}}], ["video", "audio"], []),
        ([{"ext": {"prebid": {"type": "banner"}}}, {"ext": {"some": 1}}], ["banner"], [_TYPE_WORDS.format(1, "")]),
        ([{"ext": {"prebid": {"type": "wrong"}}}], [], [_TYPE_WORDS.format(0, "wrong")]),
        ([{}], [], ["Failed to parse Bid[0].Ext: " + ABSENT_OBJECT]),
        ([{"ext": {"prebid": {"type": 1}}}], [], [_BAD_TYPE_EXT]),
    ],
)  # fmt: skip
def test_indexed_ext_prebid_bids(bids, types, errors):
    """Bids typed by ext.prebid.type, each failure naming the bid's index in its seatbid (a bad
    server response); the response is made even when every bid fails."""
    answer = GoAnswer("EUR", [("s", [{"id": "x", **bid} for bid in bids])])
    response, got = indexed_ext_prebid_bids(answer)
    assert [typed.bid_type for typed in response.bids] == types and response.currency == "USD"
    assert [(e.message, e.code) for e in got] == [(text, ErrorCode.BAD_SERVER_RESPONSE) for text in errors]


@pytest.mark.parametrize(
    ("request_text", "want"),
    [
        ('{"ver":"1.2","b":1.0,"a":"<x>"}', '{"native":{"a":"\\u003cx\\u003e","b":1,"ver":"1.2"}}'),  # keys sorted
        ('{"z":{"y":1,"x":[2.5,3]}}', '{"native":{"z":{"x":[2.5,3],"y":1}}}'),
        ("null", '{"native":null}'),
        ('{"native":{}}', '{"native":{}}'),  # already wrapped: kept
        ("[1]", None),
        ("not json", None),
        ("", None),
    ],
)
def test_native_wrapped(request_text, want):
    """yeahmobi and zmaticoo: a native request that decodes as an object wrapped in {"native": ...},
    as Go writes a map again; JsonShapeError when it does not decode."""
    imp = {"id": "n", "native": {"request": request_text, "ver": "1.2"}}
    if want is None:
        with pytest.raises(JsonShapeError):
            native_wrapped(imp)
        return
    out = native_wrapped(imp)
    assert out["native"] == {"request": want, "ver": "1.2"} and imp["native"]["request"] == request_text
    assert native_wrapped({"id": "b", "banner": {}}) == {"id": "b", "banner": {}}
