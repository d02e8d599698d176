"""Capabilities (PBS-Go's info-aware bidder): each rule a row, texts as PBS-Go words them."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.auction.exchange.capabilities import NO_MEDIA_TYPES_LEFT, fit_imps, preferred_media_type, request_channel

BANNER = {"format": [{"w": 300, "h": 250}]}
VIDEO = {"mimes": ["video/mp4"]}
NATIVE = {"request": "{}"}
ALL = ("banner", "video", "audio", "native")


def imp(imp_id: str = "i", **media: Any) -> dict[str, Any]:
    return {"id": imp_id, **media, "ext": {"bidder": {}}}


@pytest.mark.parametrize(
    ("imps", "supported", "channel", "multiformat", "preferred", "kept", "warnings"),
    [
        # everything supported: unchanged, no warning
        ([imp(banner=BANNER, video=VIDEO)], {"site": ALL}, "site", True, "", [imp(banner=BANNER, video=VIDEO)], []),
        # a channel the bidder does not serve: no imp, one warning
        ([imp(banner=BANNER)], {"site": ALL}, "app", True, "", [], ["this bidder does not support app requests"]),
        ([imp(banner=BANNER)], {"site": ALL}, "dooh", True, "", [], ["this bidder does not support dooh requests"]),
        # an unsupported media type goes from the bidder's copy
        ([imp(banner=BANNER, native=NATIVE)], {"site": ("banner",)}, "site", True, "", [imp(banner=BANNER)],
         ["request.imp[0] uses native, but this bidder doesn't support it"]),
        # an imp left with none is skipped; the bidder keeps its other imps
        ([imp("a", video=VIDEO), imp("b", banner=BANNER)], {"app": ("banner",)}, "app", True, "",
         [imp("b", banner=BANNER)],
         ["request.imp[0] uses video, but this bidder doesn't support it",
          "request.imp[0] has no supported MediaTypes. It will be ignored"]),
        # nothing left at all: no call
        ([imp(video=VIDEO)], {"site": ("banner",)}, "site", True, "", [],
         ["request.imp[0] uses video, but this bidder doesn't support it",
          "request.imp[0] has no supported MediaTypes. It will be ignored", NO_MEDIA_TYPES_LEFT]),
        # a single-format bidder keeps the preferred media type of a multi-format imp
        ([imp(banner=BANNER, video=VIDEO)], {"site": ALL}, "site", False, "video", [imp(video=VIDEO)],
         ["Imp i uses banner, removing banner as the bidder doesn't support multi-format"]),
        # ... skips it without a preference, or when the imp lacks the preferred type
        ([imp(banner=BANNER, video=VIDEO)], {"site": ALL}, "site", False, "", [],
         ["Removing the imp i as the bidder does not support multi-format and preferred media type is not "
          "defined for the bidder", NO_MEDIA_TYPES_LEFT]),
        ([imp(banner=BANNER, video=VIDEO)], {"site": ALL}, "site", False, "native", [],
         ["Imp i does not have a preferred NATIVE media type. It will be ignored.", NO_MEDIA_TYPES_LEFT]),
        ([imp(banner=BANNER, video=VIDEO)], {"site": ALL}, "site", False, "popup", [],
         ["Imp i has an invalid preferred media type: popup. It will be ignored.", NO_MEDIA_TYPES_LEFT]),
        # a single-format imp is fine for a single-format bidder
        ([imp(banner=BANNER)], {"site": ALL}, "site", False, "", [imp(banner=BANNER)], []),
    ],
    ids=["all-supported", "no-app", "no-dooh", "type-removed", "imp-skipped", "nothing-left", "preferred-kept",
         "no-preference", "preferred-missing", "preferred-invalid", "single-format"],
)
def test_fit_imps(imps, supported, channel, multiformat, preferred, kept, warnings):
    got, notes = fit_imps(imps, supported, channel, multiformat, preferred)
    assert got == kept
    assert notes == warnings


@pytest.mark.parametrize(
    ("request_", "channel"),
    [({"site": {}}, "site"), ({"app": {}}, "app"), ({"dooh": {}}, "dooh"), ({"site": {}, "dooh": {}}, "dooh"),
     ({}, "")],
)
def test_request_channel(request_, channel):
    assert request_channel(request_) == channel


@pytest.mark.parametrize(
    ("prebid", "expected"),
    [
        ({"biddercontrols": {"criteo": {"prefmtype": "video"}}}, "video"),
        ({"biddercontrols": {"other": {"prefmtype": "video"}}}, ""),
        ({"biddercontrols": {"criteo": {"prefmtype": 2}}}, ""),
        ({"biddercontrols": "x"}, ""),
        ({}, ""),
    ],
)
def test_preferred_media_type(prebid, expected):
    assert preferred_media_type(prebid, "criteo") == expected
