"""imp.native.request validated as PBS-Go's fillAndValidateNative does (ortb/request_validator_native.go).

Rows carry PBS-Go's exact texts: its Go tests (TestValidateNativeContextTypes, ...PlacementType,
...EventTracker, ...AssetData, which use imp index 4 and element index 8), every sample of
endpoints/openrtb2/sample-requests/{invalid,valid}-native and invalid-whole/native-empty (whose expected
text is only "Invalid request", so the text comes from the validator), then the rules one by one, the
asset ids, the Native 1.0 wrapped form, json-iterator's texts for a string that is no JSON object,
wrong types (never a crash) and what is handed on to the bidders.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hbserver.auction.common.request_error import RequestError
from hbserver.auction.request import native as native_module
from hbserver.auction.request.native import fill_and_validate_native
from hbserver.auction.request.ortb_types import native_request_text_error, native_request_type_error

SPEC = "https://iabtechlab.com/wp-content/uploads/2016/07/OpenRTB-Native-Ads-Specification-Final-1.2.pdf"
ORTB25 = "https://www.iab.com/wp-content/uploads/2016/03/OpenRTB-API-Specification-Version-2-5-FINAL.pdf"
OK = None
TYPE_TEXT = "<json-iterator's text>"
SAME = "<unchanged>"

TITLE = {"title": {"len": 90}}
IMG = {"img": {"hmin": 30, "wmin": 20}}
VIDEO = {"video": {"mimes": ["video/mp4"], "minduration": 5, "maxduration": 10, "protocols": [1]}}
DATA = {"data": {"type": 2}}
FOUR_ASSETS = [TITLE, IMG, VIDEO, DATA]


def outcome(request: Any, imp: int = 0) -> tuple[str | None, Any]:
    """(error text or None, what native.request became: SAME when untouched)."""
    text = request if isinstance(request, str) else json.dumps(request)
    native = {"request": text, "ver": "1.2"}
    try:
        fill_and_validate_native(native, imp)
    except RequestError as exc:
        assert native == {"request": text, "ver": "1.2"}  # a refused request is left as it was
        return str(exc), SAME
    assert native["ver"] == "1.2"
    return None, SAME if native["request"] is text else native["request"]


def error_of(request: Any, imp: int = 0) -> str | None:
    return outcome(request, imp)[0]


# --- PBS-Go's Go tests (imp index 4, element index 8) ---------------------------------------------------


def context_text(kind: str, ctype: int = 0, sub: int = 0) -> str:
    if kind == "context":
        return f"request.imp[4].native.request.context is invalid. See {SPEC}#page=39"
    if kind == "negative":
        return f"request.imp[4].native.request.contextsubtype value can't be less than 0. See {SPEC}#page=39"
    if kind == "subtype":
        return f"request.imp[4].native.request.contextsubtype is invalid. See {SPEC}#page=39"
    return (
        f"request.imp[4].native.request.context is {ctype}, but contextsubtype is {sub}. "
        f"This is an invalid combination. See {SPEC}#page=39"
    )


@pytest.mark.parametrize(
    ("ctype", "sub", "expected"),
    [
        (0, 0, OK),  # No Types Specified
        (500, 500, OK),  # All Types Exchange Specific
        (1, 0, OK),  # Context Type Known Value - Sub Type Unspecified
        (-1, 0, context_text("context")),  # Context Type Negative
        (4, 0, context_text("context")),  # Context Type Just Above Range
        (1, -1, context_text("negative")),  # Sub Type Negative
        (1, 9, context_text("subtype")),  # Content - Sub Type Just Below Range
        (1, 10, OK),  # Content - Sub Type In Range
        (500, 10, OK),  # Content - Context Type Exchange Specific Boundary
        (501, 10, OK),  # Content - Context Type Exchange Specific Boundary + 1
        (1, 16, context_text("subtype")),  # Content - Sub Type Just Above Range
        (1, 500, OK),  # Content - Sub Type Exchange Specific Boundary
        (1, 501, OK),  # Content - Sub Type Exchange Specific Boundary + 1
        (2, 10, context_text("combination", 2, 10)),  # Content - Invalid Context Type
        (2, 19, context_text("subtype")),  # Social - Sub Type Just Below Range
        (2, 20, OK),  # Social - Sub Type In Range
        (500, 20, OK),
        (501, 20, OK),
        (2, 23, context_text("subtype")),  # Social - Sub Type Just Above Range
        (2, 500, OK),
        (2, 501, OK),
        (3, 20, context_text("combination", 3, 20)),  # Social - Invalid Context Type
        (3, 29, context_text("subtype")),  # Product - Sub Type Just Below Range
        (3, 30, OK),  # Product - Sub Type In Range
        (500, 30, OK),
        (501, 30, OK),
        (3, 33, context_text("subtype")),  # Product - Sub Type Just Above Range
        (3, 500, OK),
        (3, 501, OK),
        (1, 30, context_text("combination", 1, 30)),  # Product - Invalid Context Type
        # beyond the Go tests: no context means no subtype check at all; the ranges' edges
        (0, 999, OK),
        (0, -5, OK),
        (3, 499, context_text("subtype")),
        (1, 15, OK),
        (2, 22, OK),
        (3, 32, OK),
        (499, 0, context_text("context")),
    ],
)
def test_go_context_types(ctype, sub, expected):
    request = {"context": ctype, "contextsubtype": sub, "assets": [{"id": 1, **TITLE}]}
    assert error_of(request, imp=4) == expected


PLCMT_INVALID = f"request.imp[4].native.request.plcmttype is invalid. See {SPEC}#page=40"


@pytest.mark.parametrize(
    ("plcmttype", "expected"),
    [
        (0, OK),  # Not Specified
        (1, OK),  # Known Value
        (500, OK),  # Exchange Specific - Boundary
        (501, OK),  # Exchange Specific - Boundary + 1
        (-1, PLCMT_INVALID),  # Negative
        (5, PLCMT_INVALID),  # Just Above Range
        (4, OK),
        (499, PLCMT_INVALID),
    ],
)
def test_go_placement_type(plcmttype, expected):
    assert error_of({"plcmttype": plcmttype, "assets": [{"id": 1, **TITLE}]}, imp=4) == expected


EVENT_INVALID = f"request.imp[4].native.request.eventtrackers[8].event is invalid. See section 7.6: {SPEC}#page=43"
METHOD_REQUIRED = f"request.imp[4].native.request.eventtrackers[8].method is required. See section 7.7: {SPEC}#page=43"


def method_invalid(index: int) -> str:
    return (
        f"request.imp[4].native.request.eventtrackers[8].methods[{index}] is invalid. See section 7.7: {SPEC}#page=43"
    )


@pytest.mark.parametrize(
    ("tracker", "expected"),
    [
        ({"event": 1, "methods": [1]}, OK),  # Valid
        ({"event": 500, "methods": [1]}, OK),  # Event - Exchange Specific - Boundary
        ({"event": 501, "methods": [1]}, OK),  # Event - Exchange Specific - Boundary + 1
        ({"event": -1, "methods": [1]}, EVENT_INVALID),  # Event - Negative
        ({"event": 5, "methods": [1]}, EVENT_INVALID),  # Event - Just Above Range
        ({"event": 1, "methods": [1, 2]}, OK),  # Methods - Many Valid
        ({"event": 1, "methods": []}, METHOD_REQUIRED),  # Methods - Empty
        ({"event": 1, "methods": [500]}, OK),  # Methods - Exchange Specific - Boundary
        ({"event": 1, "methods": [501]}, OK),  # Methods - Exchange Specific - Boundary + 1
        ({"event": 1, "methods": [-1]}, method_invalid(0)),  # Methods - Negative
        ({"event": 1, "methods": [3]}, method_invalid(0)),  # Methods - Just Above Range
        ({"event": 1, "methods": [1, -1]}, method_invalid(1)),  # Methods - Mixed Valid + Invalid
        # beyond the Go tests
        ({"event": 4, "methods": [2]}, OK),
        ({"event": 499, "methods": [1]}, EVENT_INVALID),
        ({"methods": [1]}, EVENT_INVALID),
        ({"event": 1}, METHOD_REQUIRED),
        ({"event": 1, "methods": None}, METHOD_REQUIRED),
        ({"event": 1, "methods": [None]}, method_invalid(0)),  # Go reads null as 0
        ({"event": 1, "methods": [499]}, method_invalid(0)),
        ({"event": 0, "methods": []}, EVENT_INVALID),  # the event is checked first
        (None, EVENT_INVALID),  # a null tracker is an empty one
    ],
)
def test_go_event_tracker(tracker, expected):
    trackers = [{"event": 1, "methods": [1]}] * 8 + [tracker]
    assert error_of({"assets": [{"id": 1, **TITLE}], "eventtrackers": trackers}, imp=4) == expected


DATA_INVALID = f"request.imp[4].native.request.assets[8].data.type is invalid. See section 7.4: {SPEC}#page=40"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"type": 1}, OK),  # Valid
        ({"type": 500}, OK),  # Exchange Specific - Boundary
        ({"type": 501}, OK),  # Exchange Specific - Boundary + 1
        ({}, DATA_INVALID),  # Not Specified
        ({"type": -1}, DATA_INVALID),  # Negative
        ({"type": 13}, DATA_INVALID),  # Just Above Range
        ({"type": 12}, OK),
        ({"type": 499}, DATA_INVALID),
        ({"type": None}, DATA_INVALID),
    ],
)
def test_go_asset_data(data, expected):
    assets = [{"id": i + 1, **TITLE} for i in range(8)] + [{"id": 9, "data": data}]
    assert error_of({"assets": assets}, imp=4) == expected


# --- the PBS-Go sample requests (imp 0) -----------------------------------------------------------------


def asset_text(rest: str, index: int = 0) -> str:
    return f"request.imp[0].native.request.assets[{index}]{rest}"


SAMPLES = [
    # invalid-native/*.json
    (
        "asset-data-invalid-type",
        '{"context":1,"plcmttype":1,"assets":[{"data":{"type":364}}]}',
        asset_text(f".data.type is invalid. See section 7.4: {SPEC}#page=40"),
    ),
    (
        "asset-data-no-type",
        '{"context":1,"plcmttype":1,"assets":[{"data":{}}]}',
        asset_text(f".data.type is invalid. See section 7.4: {SPEC}#page=40"),
    ),
    (
        "asset-empty",
        '{"context":1,"plcmttype":1,"assets":[]}',
        "request.imp[0].native.request.assets must be an array containing at least one object",
    ),
    (
        "asset-img-h-negative",
        '{"context":1,"plcmttype":1,"assets":[{"img":{"h":-30,"w":20}}]}',
        asset_text(".img.h must be a positive integer"),
    ),
    (
        "asset-img-hmin-negative",
        '{"context":1,"plcmttype":1,"assets":[{"img":{"hmin":-30,"wmin":20}}]}',
        asset_text(".img.hmin must be a positive integer"),
    ),
    (
        "asset-img-w-negative",
        '{"context":1,"plcmttype":1,"assets":[{"img":{"h":30,"w":-20}}]}',
        asset_text(".img.w must be a positive integer"),
    ),
    (
        "asset-img-wmin-negative",
        '{"context":1,"plcmttype":1,"assets":[{"img":{"hmin":30,"wmin":-20}}]}',
        asset_text(".img.wmin must be a positive integer"),
    ),
    (
        "asset-mixed-type",
        '{"context":1,"plcmttype":1,"assets":[{"title":{"len":140},"img":{"wmin":20,"hmin":30}}]}',
        asset_text(" must define exactly one of {title, img, video, data}"),
    ),
    (
        "asset-title-empty",
        '{"context":1,"plcmttype":1,"assets":[{"title":{}}]}',
        asset_text(".title.len must be a positive number"),
    ),
    (
        "asset-video-mimes-empty",
        '{"context":1,"plcmttype":1,"assets":[{"video":{"mimes":[],"minduration":30,"maxduration":120,'
        '"protocols":[3]}}]}',
        asset_text(".video.mimes must be an array with at least one MIME type"),
    ),
    (
        "asset-video-no-maxduration",
        '{"context":1,"plcmttype":1,"assets":[{"video":{"mimes":["video/mp4"],"minduration":30,"protocols":[3]}}]}',
        asset_text(".video.maxduration must be a positive integer"),
    ),
    (
        "asset-video-no-mimes",
        '{"context":1,"plcmttype":1,"assets":[{"video":{"minduration":30,"maxduration":120,"protocols":[3]}}]}',
        asset_text(".video.mimes must be an array with at least one MIME type"),
    ),
    (
        "asset-video-no-minduration",
        '{"context":1,"plcmttype":1,"assets":[{"video":{"mimes":["video/mp4"],"maxduration":120,"protocols":[3]}}]}',
        asset_text(".video.minduration must be a positive integer"),
    ),
    (
        "asset-video-no-protocols",
        '{"context":1,"plcmttype":1,"assets":[{"video":{"mimes":["video/mp4"],"minduration":30,"maxduration":120}}]}',
        asset_text(".video.protocols must be an array with at least one element"),
    ),
    (
        "asset-video-protocols-empty",
        '{"context":1,"plcmttype":1,"assets":[{"video":{"mimes":["video/mp4"],"minduration":30,"maxduration":120,'
        '"protocols":[]}}]}',
        asset_text(".video.protocols must be an array with at least one element"),
    ),
    (
        "asset-video-protocols-invalid",
        '{"context":1,"plcmttype":1,"assets":[{"video":{"mimes":["video/mp4"],"minduration":30,"maxduration":120,'
        '"protocols":[97]}}]}',
        asset_text(f".video.protocols[0] is invalid. See Section 5.8: {ORTB25}#page=52"),
    ),
    (
        "assets-with-dup-ids",
        '{"context":1,"plcmttype":1,"assets":[{"id":1,"img":{"wmin":30}},{"id":1,"title":{"len":20}}]}',
        asset_text(".id is already being used by another asset. Each asset ID must be unique.", 1),
    ),
    (
        "assets-with-partial-ids",
        '{"context":1,"plcmttype":1,"assets":[{"id":1,"img":{"wmin":30}},{"title":{"len":20}},{"img":{"wmin":50}}]}',
        asset_text(".id is already being used by another asset. Each asset ID must be unique.", 2),
    ),
    (
        "context-type-content-incompatible-subtype",
        json.dumps({"context": 1, "contextsubtype": 21, "plcmttype": 1, "assets": FOUR_ASSETS}),
        "request.imp[0].native.request.context is 1, but contextsubtype is 21. This is an invalid combination. "
        f"See {SPEC}#page=39",
    ),
    (
        "context-type-product-incompatible-subtype",
        json.dumps({"context": 3, "contextsubtype": 11, "plcmttype": 1, "assets": FOUR_ASSETS}),
        "request.imp[0].native.request.context is 3, but contextsubtype is 11. This is an invalid combination. "
        f"See {SPEC}#page=39",
    ),
    (
        "context-type-social-incompatible-subtype",
        json.dumps({"context": 2, "contextsubtype": 31, "plcmttype": 1, "assets": FOUR_ASSETS}),
        "request.imp[0].native.request.context is 2, but contextsubtype is 31. This is an invalid combination. "
        f"See {SPEC}#page=39",
    ),
    (
        "contextsubtype-invalid",
        json.dumps({"context": 1, "contextsubtype": 41, "plcmttype": 1, "assets": FOUR_ASSETS}),
        f"request.imp[0].native.request.contextsubtype is invalid. See {SPEC}#page=39",
    ),
    (
        "contextsubtype-negative",
        json.dumps({"context": 1, "contextsubtype": -1, "plcmttype": 1, "assets": FOUR_ASSETS}),
        f"request.imp[0].native.request.contextsubtype value can't be less than 0. See {SPEC}#page=39",
    ),
    (
        "empty-object",
        "{}",
        "request.imp[0].native.request.assets must be an array containing at least one object",
    ),
    ("empty", "", 'request.imp[0].native missing required property "request"'),
    (
        "eventtracker-empty",
        json.dumps({"context": 1, "plcmttype": 1, "assets": FOUR_ASSETS, "eventtrackers": [{}]}),
        f"request.imp[0].native.request.eventtrackers[0].event is invalid. See section 7.6: {SPEC}#page=43",
    ),
    (
        "eventtracker-event-large",
        json.dumps(
            {"context": 1, "plcmttype": 1, "assets": FOUR_ASSETS, "eventtrackers": [{"event": 5, "methods": [2]}]}
        ),
        f"request.imp[0].native.request.eventtrackers[0].event is invalid. See section 7.6: {SPEC}#page=43",
    ),
    (
        "eventtracker-methods-empty",
        json.dumps(
            {"context": 1, "plcmttype": 1, "assets": FOUR_ASSETS, "eventtrackers": [{"event": 1, "methods": []}]}
        ),
        f"request.imp[0].native.request.eventtrackers[0].method is required. See section 7.7: {SPEC}#page=43",
    ),
    (
        "eventtracker-methods-large",
        json.dumps(
            {"context": 1, "plcmttype": 1, "assets": FOUR_ASSETS, "eventtrackers": [{"event": 1, "methods": [3]}]}
        ),
        f"request.imp[0].native.request.eventtrackers[0].methods[0] is invalid. See section 7.7: {SPEC}#page=43",
    ),
    (
        "request-context-invalid",
        '{"context":376,"plcmttype":2,"assets":[{"img":{"hmin":30,"wmin":20}}]}',
        f"request.imp[0].native.request.context is invalid. See {SPEC}#page=39",
    ),
    (
        "request-plcmttype-invalid",
        '{"context":1,"plcmttype":423,"assets":[{"img":{"hmin":30,"wmin":20}}]}',
        f"request.imp[0].native.request.plcmttype is invalid. See {SPEC}#page=40",
    ),
    # valid-native/*.json
    ("asset-img-no-hmin", '{"context":1,"plcmttype":1,"assets":[{"img":{"wmin":30}}]}', OK),
    ("asset-img-no-wmin", '{"context":1,"plcmttype":1,"assets":[{"img":{"hmin":30}}]}', OK),
    ("asset-with-id", '{"context":1,"plcmttype":1,"assets":[{"id":1,"img":{"wmin":30}}]}', OK),
    ("asset-with-no-id", '{"context":1,"plcmttype":1,"assets":[{"img":{"wmin":30}}]}', OK),
    (
        "assets-with-unique-ids",
        '{"context":1,"plcmttype":1,"assets":[{"id":1,"img":{"wmin":30}},{"id":2,"title":{"len":20}}]}',
        OK,
    ),
    (
        "context-product-compatible-subtype",
        json.dumps({"context": 3, "contextsubtype": 31, "plcmttype": 1, "assets": FOUR_ASSETS}),
        OK,
    ),
    (
        "context-social-compatible-subtype",
        json.dumps({"context": 2, "contextsubtype": 21, "plcmttype": 1, "assets": FOUR_ASSETS}),
        OK,
    ),
    (
        "eventtracker-exchange-specific",
        json.dumps(
            {"context": 1, "plcmttype": 1, "assets": FOUR_ASSETS, "eventtrackers": [{"event": 500, "methods": [1]}]}
        ),
        OK,
    ),
    ("request-no-context", '{"plcmttype":2,"assets":[{"img":{"hmin":30,"wmin":20}}]}', OK),
    ("request-plcmttype-empty", '{"context":1,"assets":[{"img":{"hmin":30,"wmin":20}}]}', OK),
    (
        "video-asset-event-tracker",
        json.dumps(
            {"context": 1, "plcmttype": 1, "assets": FOUR_ASSETS, "eventtrackers": [{"event": 1, "methods": [1]}]}
        ),
        OK,
    ),
    (
        "with-video-asset",
        json.dumps({"context": 1, "contextsubtype": 10, "plcmttype": 1, "assets": FOUR_ASSETS}),
        OK,
    ),
]


@pytest.mark.parametrize(("request_text", "expected"), [row[1:] for row in SAMPLES], ids=[row[0] for row in SAMPLES])
def test_pbs_go_samples(request_text, expected):
    assert error_of(request_text) == expected


def test_pbs_go_sample_native_without_request():
    """invalid-whole/native-empty.json: ``"native": {}``."""
    with pytest.raises(RequestError) as caught:
        fill_and_validate_native({}, 0)
    assert str(caught.value) == 'request.imp[0].native missing required property "request"'


# --- the rules one by one -------------------------------------------------------------------------------

MIXED = asset_text(" must define exactly one of {title, img, video, data}")
TITLE_LEN = asset_text(".title.len must be a positive number")
PROTOCOL_0 = asset_text(f".video.protocols[0] is invalid. See Section 5.8: {ORTB25}#page=52")


def video(**changes: Any) -> dict[str, Any]:
    return {"video": {**VIDEO["video"], **changes}}


@pytest.mark.parametrize(
    ("asset", "expected"),
    [
        ({}, MIXED),
        (None, MIXED),  # a null asset is an empty one
        ({"title": None, "img": None, "ext": {}}, MIXED),  # null is absent
        ({"required": 1}, MIXED),
        ({"title": {"len": 1}}, OK),
        ({"title": {"len": 0}}, TITLE_LEN),
        ({"title": {"len": -3}}, TITLE_LEN),
        ({"title": {"len": None}}, TITLE_LEN),
        ({"title": {"len": 0}, "img": {}}, TITLE_LEN),  # the first kind is checked before the second is seen
        ({"img": {"w": -1}, "video": {}}, asset_text(".img.w must be a positive integer")),
        ({"img": {}, "video": {}}, MIXED),
        ({"video": {}, "data": {"type": 99}}, asset_text(".video.mimes must be an array with at least one MIME type")),
        ({**VIDEO, "data": {"type": 99}}, MIXED),
        ({**TITLE, **IMG, **VIDEO, **DATA}, MIXED),
        ({"img": {}}, OK),  # an empty image is valid
        ({"img": {"w": 0, "h": 0, "wmin": 0, "hmin": 0}}, OK),
        ({"img": {"w": -1, "h": -1}}, asset_text(".img.w must be a positive integer")),  # w, h, wmin, hmin
        ({"img": {"hmin": -1, "h": -1}}, asset_text(".img.h must be a positive integer")),
        ({"img": {"hmin": -1, "wmin": -1}}, asset_text(".img.wmin must be a positive integer")),
        (video(mimes=None), asset_text(".video.mimes must be an array with at least one MIME type")),
        (video(minduration=0, maxduration=0), asset_text(".video.minduration must be a positive integer")),
        (video(maxduration=-1), asset_text(".video.maxduration must be a positive integer")),
        (video(protocols=None), asset_text(".video.protocols must be an array with at least one element")),
        (video(protocols=[10]), OK),  # DAAST 1.0 Wrapper
        (video(protocols=[11]), PROTOCOL_0),  # VAST 4.1: PBS-Go stops at 10
        (video(protocols=[0]), PROTOCOL_0),
        (video(protocols=[None]), PROTOCOL_0),
        (video(protocols=[3, 7, 14]), asset_text(f".video.protocols[2] is invalid. See Section 5.8: {ORTB25}#page=52")),
        ({"data": {"type": 1, "len": 20}}, OK),
    ],
)
def test_asset_rules(asset, expected):
    assert error_of({"assets": [asset]}) == expected


def test_rules_run_in_pbs_go_order():
    """context, then plcmttype, then the assets one by one (each checked before its id), then the trackers."""
    everything_wrong = {
        "context": 9,
        "plcmttype": 9,
        "assets": [{"id": 1, "data": {}}, {"id": 1, **TITLE}],
        "eventtrackers": [{}],
    }
    assert error_of(everything_wrong) == f"request.imp[0].native.request.context is invalid. See {SPEC}#page=39"
    del everything_wrong["context"]
    assert error_of(everything_wrong) == f"request.imp[0].native.request.plcmttype is invalid. See {SPEC}#page=40"
    del everything_wrong["plcmttype"]
    assert error_of(everything_wrong) == asset_text(f".data.type is invalid. See section 7.4: {SPEC}#page=40")
    everything_wrong["assets"][0] = {"id": 1, **DATA}
    assert error_of(everything_wrong) == asset_text(
        ".id is already being used by another asset. Each asset ID must be unique.", 1
    )
    everything_wrong["assets"][1]["id"] = 2
    assert error_of(everything_wrong) == (
        f"request.imp[0].native.request.eventtrackers[0].event is invalid. See section 7.6: {SPEC}#page=43"
    )


@pytest.mark.parametrize("imp", [0, 3, 17])
def test_imp_index_in_texts(imp):
    assert error_of({"assets": []}, imp) == (
        f"request.imp[{imp}].native.request.assets must be an array containing at least one object"
    )
    assert error_of({"assets": [{"img": {"h": -1}}]}, imp) == (
        f"request.imp[{imp}].native.request.assets[0].img.h must be a positive integer"
    )


# --- asset ids ------------------------------------------------------------------------------------------

DUP = ".id is already being used by another asset. Each asset ID must be unique."


@pytest.mark.parametrize(
    ("assets", "expected", "ids"),
    [
        ([TITLE, IMG, DATA], OK, [0, 1, 2]),  # none has an id: PBS-Go numbers them
        ([{"id": 0, **TITLE}, {"id": 0, **IMG}], OK, [0, 1]),  # 0 is no id
        ([{"id": None, **TITLE}, IMG], OK, [0, 1]),  # nor is null
        ([{"id": 7, **TITLE}], OK, SAME),  # ids given are kept, the string untouched
        ([{"id": 5, **TITLE}, IMG], OK, SAME),  # one given: the other keeps 0, which is unique
        ([{"id": 0, **TITLE}, {"id": 1, **IMG}], OK, SAME),
        ([{"id": -4, **TITLE}, {"id": 4, **IMG}], OK, SAME),
        ([{"id": 1, **IMG}, {"id": 1, **TITLE}], asset_text(DUP, 1), SAME),
        ([{"id": 1, **IMG}, TITLE, IMG], asset_text(DUP, 2), SAME),  # two assets left at 0
        ([TITLE, {"id": 2, **IMG}, {"id": 2, **DATA}, {"id": 2, **TITLE}], asset_text(DUP, 2), SAME),
        ([{"ID": 3, **TITLE}, {"id": 3, **IMG}], asset_text(DUP, 1), SAME),  # keys match ignoring case
        # each asset is checked before its id
        (
            [{"id": 1, **TITLE}, {"id": 1, "data": {}}],
            asset_text(f".data.type is invalid. See section 7.4: {SPEC}#page=40", 1),
            SAME,
        ),
    ],
)
def test_asset_ids(assets, expected, ids):
    error, handed_on = outcome({"assets": assets})
    assert error == expected
    if ids is SAME:
        assert handed_on is SAME
    else:
        assert [asset["id"] for asset in json.loads(handed_on)["assets"]] == ids


def test_assigned_id_replaces_other_spellings_and_comes_first():
    _, handed_on = outcome('{"assets":[{"title":{"len":5},"Id":0},{"ID":null,"img":{}}]}')
    assert handed_on == '{"assets":[{"id":0,"title":{"len":5}},{"id":1,"img":{}}]}'


# --- the Native 1.0 wrapped form ------------------------------------------------------------------------
# PBS-Go decodes the string into native1/request.Request, which has no "native" field: the wrapper is an
# unknown key, so no assets are seen. PBS-Java (ImpValidator, Jackson ignoring unknown properties) refuses it
# with the same text.

WRAPPED_NO_ASSETS = "request.imp[{}].native.request.assets must be an array containing at least one object"


@pytest.mark.parametrize(
    ("payload", "imp", "expected"),
    [
        ({"native": {"ver": "1.0", "assets": [{"id": 1, **TITLE}]}}, 0, WRAPPED_NO_ASSETS.format(0)),
        ({"native": {"context": 99, "assets": [{"title": {"len": 0}}]}}, 2, WRAPPED_NO_ASSETS.format(2)),
        ({"NATIVE": {"assets": [TITLE]}}, 1, WRAPPED_NO_ASSETS.format(1)),
        # the wrapper beside top-level assets is just an unknown key
        ({"native": {"context": 99}, "assets": [{"id": 1, **TITLE}]}, 0, OK),
    ],
)
def test_wrapped_form_is_refused(payload, imp, expected):
    assert error_of(payload, imp) == expected


# --- the string itself ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        # json-iterator's readObjectStart / skipThreeBytes / Unmarshal, as jsonutil.UnmarshalValid words them
        ("abc", "expect { or n, but found a"),
        ("[1]", "expect { or n, but found ["),
        ('"{}"', 'expect { or n, but found "'),
        ("123", "expect { or n, but found 1"),
        ("-1", "expect { or n, but found -"),
        ("true", "expect { or n, but found t"),
        ("  \n\t", "expect { or n, but found \x00"),  # only white space: the end of input
        ("\ufeff{}", "expect { or n, but found \ufffd"),  # Go prints the first byte of a multi-byte character
        ("nul", "expect ull"),
        ("nope", "expect ull"),
        ("None", "expect { or n, but found N"),
        ("null", "request.imp[0].native.request.assets must be an array containing at least one object"),
        (" null ", "request.imp[0].native.request.assets must be an array containing at least one object"),
        ("null x", "there are bytes left after unmarshal"),
        ('{"assets":[{"id":1,"title":{"len":1}}]} x', "there are bytes left after unmarshal"),
        ("{}{}", "there are bytes left after unmarshal"),
        # decoding fails first (json-iterator's text; 0xff prints as U+FFFD)
        ('{"context":"1"} x', "cannot unmarshal request.Request.Context: unexpected character: \ufffd"),
        ('  {"assets":[{"id":1,"title":{"len":1}}]}  \n', OK),
        # malformed inside the object: json-iterator's text (hbserver.auction.request.ortb_types)
        ('{"assets":', TYPE_TEXT),
        ('{"a":NaN}', TYPE_TEXT),
    ],
)
def test_request_string(request_text, expected):
    if expected is TYPE_TEXT:
        expected = native_request_text_error(request_text)
        assert expected is not None
    assert error_of(request_text) == expected


@pytest.mark.parametrize(
    ("native", "expected"),
    [
        ({}, 'request.imp[0].native missing required property "request"'),
        ({"request": None}, 'request.imp[0].native missing required property "request"'),
        ({"request": ""}, 'request.imp[0].native missing required property "request"'),
        ({"request": 5}, "request.imp[0].native.request must be a string"),
        ({"request": {"assets": []}}, "request.imp[0].native.request must be a string"),
        ([], "request.imp[0].native must be an object"),
    ],
)
def test_native_object(native, expected):
    with pytest.raises(RequestError) as caught:
        fill_and_validate_native(native, 0)
    assert str(caught.value) == expected


def test_null_native_is_not_checked():
    fill_and_validate_native(None, 0)


# --- wrong types: refused with the field named, never a crash -------------------------------------------

WHERE = "request.imp[0].native.request"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"assets": {"title": {}}}, f"{WHERE}.assets must be an array"),
        ({"assets": "x"}, f"{WHERE}.assets must be an array"),
        ({"assets": [5]}, f"{WHERE}.assets[0] must be an object"),
        ({"assets": [TITLE, {"title": {"len": "90"}}]}, f"{WHERE}.assets[1].title.len must be an integer"),
        ({"assets": [{"title": {"len": 9.5}}]}, f"{WHERE}.assets[0].title.len must be an integer"),
        ({"assets": [{"title": {"len": 90.0}}]}, f"{WHERE}.assets[0].title.len must be an integer"),
        ({"assets": [{"title": {"len": True}}]}, f"{WHERE}.assets[0].title.len must be an integer"),
        ({"assets": [{"title": []}]}, f"{WHERE}.assets[0].title must be an object"),
        ({"assets": [{"id": "1", **TITLE}]}, f"{WHERE}.assets[0].id must be an integer"),
        ({"assets": [{"required": 128, **TITLE}]}, f"{WHERE}.assets[0].required must be an integer from -128 to 127"),
        ({"assets": [{"img": {"mimes": "image/png"}}]}, f"{WHERE}.assets[0].img.mimes must be an array"),
        ({"assets": [{"img": {"mimes": [1]}}]}, f"{WHERE}.assets[0].img.mimes[0] must be a string"),
        ({"assets": [{"img": {"type": "main"}}]}, f"{WHERE}.assets[0].img.type must be an integer"),
        ({"assets": [{"data": {"type": [2]}}]}, f"{WHERE}.assets[0].data.type must be an integer"),
        (
            {"assets": [video(protocols=[300])]},
            f"{WHERE}.assets[0].video.protocols[0] must be an integer from -128 to 127",
        ),
        ({"assets": [video(protocols=3)]}, f"{WHERE}.assets[0].video.protocols must be an array"),
        ({"assets": [video(mimes=[None, 4])]}, f"{WHERE}.assets[0].video.mimes[1] must be a string"),
        ({"assets": [video(w="640")]}, f"{WHERE}.assets[0].video.w must be an integer"),
        ({"assets": [video(mincpmpersec="1")]}, f"{WHERE}.assets[0].video.mincpmpersec must be a number"),
        (
            {"assets": [video(companionad=[{"format": [{"w": "x"}]}])]},
            f"{WHERE}.assets[0].video.companionad[0].format[0].w must be an integer",
        ),
        (
            {"assets": [video(durfloors=[{"bidfloor": "1"}])]},
            f"{WHERE}.assets[0].video.durfloors[0].bidfloor must be a number",
        ),
        ({"context": "1", "assets": [TITLE]}, f"{WHERE}.context must be an integer"),
        ({"ver": 1.2, "assets": [TITLE]}, f"{WHERE}.ver must be a string"),
        ({"plcmtcnt": "1", "assets": [TITLE]}, f"{WHERE}.plcmtcnt must be an integer"),
        ({"aurlsupport": 200, "assets": [TITLE]}, f"{WHERE}.aurlsupport must be an integer from -128 to 127"),
        ({"eventtrackers": {}, "assets": [TITLE]}, f"{WHERE}.eventtrackers must be an array"),
        ({"eventtrackers": [{"methods": ["1"]}]}, f"{WHERE}.eventtrackers[0].methods[0] must be an integer"),
        ({"Context": "1", "assets": [TITLE]}, f"{WHERE}.context must be an integer"),  # keys match ignoring case
        # the first problem in document order, before any rule
        ({"eventtrackers": 1, "context": "x"}, f"{WHERE}.eventtrackers must be an array"),
        ({"context": 99, "assets": [{"title": {"len": "x"}}]}, f"{WHERE}.assets[0].title.len must be an integer"),
        # any JSON is a valid ext; unknown keys are not looked at
        ({"ext": "x", "assets": [{"ext": [1], "id": 1, "title": {"len": 1, "ext": 5}}], "foo": {"len": "x"}}, OK),
    ],
)
def test_wrong_types(payload, expected):
    """Each wrong type is refused with json-iterator's text (exact texts: tests/auction/test_ortb_types.py)
    before any rule runs; ``expected`` names the field in plain words."""
    if expected is OK:
        assert error_of(payload) is None
        return
    text = native_request_type_error(payload)
    assert text is not None, expected
    assert error_of(payload) == text


WRONG_TYPE_PAYLOADS = [
    {"context": "1", "contextsubtype": [], "plcmttype": {}, "assets": [{"id": {}, "title": {"len": "9"}}]},
    {"assets": "abc"},
    {"assets": 5, "eventtrackers": 5},
    {"assets": [{"id": [1], **TITLE}, {"id": [1], **IMG}]},
    {"assets": [5, "x", [1], {"title": 5}, {"img": [1]}, {"img": {"w": "-1", "h": {}}}]},
    {"assets": [{"video": {"mimes": "x", "minduration": "5", "maxduration": 1.5, "protocols": "abc"}}]},
    {"assets": [video(protocols=[[1], "2", 3.0])]},
    {"assets": [{"data": {"type": "2"}}]},
    {"assets": [{"id": 1, **TITLE}], "eventtrackers": [5, "x", {"event": "1", "methods": "12"}]},
    {"assets": [{"id": 1, **TITLE}], "eventtrackers": [{"event": 1, "methods": [{}, "1"]}]},
    {"assets": [{"id": 1, **TITLE}], "eventtrackers": "abc"},
]


@pytest.mark.parametrize("payload", WRONG_TYPE_PAYLOADS)
def test_rules_never_crash_without_the_type_check(payload, monkeypatch):
    """Should the type check be done elsewhere and miss a value, the rules still answer with a RequestError
    (or accept) instead of failing with a Python error."""
    assert error_of(payload) is not None  # the type check refuses it
    monkeypatch.setattr(native_module, "_type_problem", lambda payload, imp_index: None)
    outcome(payload)  # no exception but RequestError


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ('{"assets":[{"id":9223372036854775807,"title":{"len":1}}]}', OK),
        (
            '{"assets":[{"id":9223372036854775808,"title":{"len":1}}]}',
            f"{WHERE}.assets[0].id must be an integer from -9223372036854775808 to 9223372036854775807",
        ),
        (
            '{"assets":[{"id":1,"title":{"len":18446744073709551616}}]}',
            f"{WHERE}.assets[0].title.len must be an integer",
        ),
        ('{"assets":[{"id":1,"title":{"len":1}}],"x":18446744073709551616}', OK),
        # beyond a double, even in an unknown field: json-iterator v1.1.12 refuses it
        ('{"assets":[{"id":1,"title":{"len":1}}],"x":1e400}', "invalid number"),
        ('{"assets":[{"id":1,"title":{"len":1e2}}]}', f"{WHERE}.assets[0].title.len must be an integer"),
    ],
)
def test_integer_ranges(request_text, expected):
    if expected is not OK and expected != "invalid number":
        expected = native_request_type_error(json.loads(request_text))
        assert expected is not None
    assert error_of(request_text) == expected


# --- what the bidders receive ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "handed_on"),
    [
        # nothing assigned: the publisher's string as it came, spacing, unknown keys and all
        ('{"ver":"1.2","assets":[{"id":1,"required":1,"title":{"len":80}}]}', SAME),
        ('{ "assets" : [ {"id":1, "title":{"len":80}, "x-custom": true} ], "ext": {"a": [1, 2]} }', SAME),
        ('{"assets":[{"id":1,"title":{"len":80}}],"native":{"ignored":1}}', SAME),
        # ids assigned: compact JSON, the publisher's keys and order kept, only the ids added
        (
            '{"ver":"1.2", "zzz":{"keep":[1,2.5]}, "assets":[{"required":1,"title":{"len":80},"ext":{"x":1}}]}',
            '{"ver":"1.2","zzz":{"keep":[1,2.5]},"assets":[{"id":0,"required":1,"title":{"len":80},"ext":{"x":1}}]}',
        ),
        (
            '{"assets":[{"id":0,"title":{"len":80}},{"img":{"type":3,"w":300,"h":250}}],"privacy":1}',
            '{"assets":[{"id":0,"title":{"len":80}},{"id":1,"img":{"type":3,"w":300,"h":250}}],"privacy":1}',
        ),
        ('{"assets":[{"title":{"len":80}}],"t":"é<>&"}', '{"assets":[{"id":0,"title":{"len":80}}],"t":"é<>&"}'),
        (  # a lone surrogate escape (Go reads it; orjson does not): kept escaped
            '{"assets":[{"title":{"len":1}}],"t":"\\ud800é"}',
            '{"assets":[{"id":0,"title":{"len":1}}],"t":"\\ud800\\u00e9"}',
        ),
    ],
)
def test_handed_on(request_text, handed_on):
    assert outcome(request_text) == (None, handed_on)


def test_prebid_js_native_request_is_left_alone():
    """A native imp as Prebid.js sends it (shared/fixtures/real-clients): ids given, nothing to change."""
    request = (
        '{"ver":"1.2","assets":[{"id":1,"required":1,"title":{"len":80}},'
        '{"id":2,"required":1,"img":{"type":3,"w":300,"h":250}}]}'
    )
    native = {"request": request, "ver": "1.2"}
    fill_and_validate_native(native, 0)
    assert native == {"request": request, "ver": "1.2"}
    assert native["request"] is request
