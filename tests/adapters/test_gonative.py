"""PBS-Go's native 1.2 response types (``adapters.gonative``): rows from openrtb v20's
``native1/response`` structs (field order, omitempty, pointers) and json-iterator's decoding."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.gonative import decode_native_response, encode_native_response


def round_trip(data: Any) -> dict[str, Any]:
    return encode_native_response(decode_native_response(data))


@pytest.mark.parametrize(
    ("data", "written"),
    [
        # Response.Link has no omitempty (a zero Link writes its url), the rest of Response is omitempty
        ({}, {"link": {"url": ""}}),
        # Go's field order, not the document's; unknown keys dropped
        ({"privacy": "p", "x": 1, "ver": "1.2", "link": {"url": "u", "y": 2}},
         {"ver": "1.2", "link": {"url": "u"}, "privacy": "p"}),
        # keys matched ignoring case
        ({"VER": "1.1", "ImpTrackers": ["a"]}, {"ver": "1.1", "link": {"url": ""}, "imptrackers": ["a"]}),
        # Asset.ID is a *int64: a zero id is written; Title/Img/... are pointers: an empty one is written
        ({"assets": [{"id": 0, "title": {}}]}, {"assets": [{"id": 0, "title": {"text": ""}}], "link": {"url": ""}}),
        # Asset.Required is an int8, omitempty; Video has only vasttag (no ext)
        ({"assets": [{"required": 0, "video": {"vasttag": "v", "ext": {}}}]},
         {"assets": [{"video": {"vasttag": "v"}}], "link": {"url": ""}}),
        # EventTracker.Event and Method have no omitempty; null in a number leaves it zero
        ({"eventtrackers": [{"event": None, "url": "t"}]},
         {"link": {"url": ""}, "eventtrackers": [{"event": 0, "method": 0, "url": "t"}]}),
        # a null []string item is ""; an empty list or a null is left out
        ({"imptrackers": ["a", None], "link": {"clicktrackers": []}, "ext": None},
         {"link": {"url": ""}, "imptrackers": ["a", ""]}),
        # a raw ext is kept as it is, even empty
        ({"ext": {}}, {"link": {"url": ""}, "ext": {}}),
    ],
    ids=["empty", "field-order", "case-folded", "pointer-zero", "int8-and-video", "tracker-always", "strings",
         "raw-ext"],
)  # fmt: skip
def test_round_trip(data: dict[str, Any], written: dict[str, Any]) -> None:
    out = round_trip(data)
    assert out == written
    assert list(out) == list(written)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expect { or n, but found ["),
        ({"ver": 1}, 'cannot unmarshal response.Response.Ver: expects " or n, but found 1'),
        ({"assets": [{"required": 128}]}, "cannot unmarshal ReadInt8: 128"),
        ({"assets": [{"required": -200}]}, "cannot unmarshal ReadInt8: 200"),
        ({"assets": [{"id": 2**63}]}, "cannot unmarshal ReadInt64: 9223372036854775808"),
        ({"assets": [{"id": 1.5}]}, "cannot unmarshal response.Asset.ID: can not decode float as int"),
        ({"assets": [1]}, "expect { or n, but found 1"),
        ({"imptrackers": [1]}, 'cannot unmarshal []string: expects " or n, but found 1'),
    ],
    ids=["not-an-object", "string-field", "int8-over", "int8-under", "int64-over", "float-int", "asset-not-object",
         "strings-item"],
)  # fmt: skip
def test_decode_failures(data: Any, message: str) -> None:
    with pytest.raises(JsonShapeError) as caught:
        decode_native_response(data)
    assert message in str(caught.value)


def test_null_leaves_struct_as_decoded() -> None:
    """json-iterator decodes a field named twice in turn; a later null leaves a struct as it was."""
    values = decode_native_response({"link": {"url": "u"}, "LINK": None})
    assert values["link"] == {"url": "u", "clicktrackers": None, "fallback": "", "ext": None}
