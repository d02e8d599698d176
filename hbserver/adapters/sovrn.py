"""Sovrn adapter: every valid imp in one OpenRTB call to ``pbs.lijit.com/rtb/bid``.

Per imp the ``tagid`` param (or the older ``tagId``) becomes ``imp.tagid`` and is required; the
``bidfloor`` param (a number or a string holding one) becomes the floor when the imp has none. A
video imp must carry ``mimes``, ``maxduration`` and ``protocols``. Imps that fail are reported and
left out; ``imp.ext`` goes unchanged. The call carries the device's user agent, IP, language and
DNT as headers, and the user's ``buyeruid`` as the ``ljt_reader`` cookie. Bids are video when
their imp has a video object, else banner; their ``adm`` arrives URL-encoded and is decoded (a bid
whose ``adm`` does not decode is dropped, as PBS-Go drops it).

The module also holds helpers that read and write JSON the way PBS-Go's typed decoding does
(candidates for ``common.py``): ``go_fields`` (json-iterator's case-insensitive field matching),
``imp_bidder_params`` (``imp.ext`` as ``adapters.ExtImpBidder``, then ``bidder`` as an object),
``go_parse_float`` (``strconv.ParseFloat``) and ``go_video`` (a video object as Go re-encodes it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_to_bytes

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
)
from hbserver.adapters.common import (
    JsonShapeError,
    answer_bids,
    decode_answer,
    expect_object,
    expect_string,
    found,
    imp_ids,
    with_header,
)

# json-iterator's text when a struct is decoded from an absent raw value (Go passes empty bytes)
NOTHING_TO_DECODE = "expect { or n, but found \x00"
# decode_answer's text for an answer that is not a JSON object, in json-iterator's words
NOT_AN_OBJECT = "expect {{ or n, but found {found}"
# Go's unicode.IsSpace set, which strings.TrimSpace strips (Python's str.strip also strips \x1c-\x1f)
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
_DECIMAL_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+\Z")
_INF_OR_NAN = re.compile(r"(?:[+-]?inf(?:inity)?|nan)\Z", re.IGNORECASE)
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")
# openrtb2.Video (OpenRTB 2.6) as Go writes it: its omitempty value fields are left out when zero, its
# omitempty lists when empty, its pointers when null; only "mimes" is always written
_VIDEO_ZERO_OMITTED = frozenset({
    "minduration", "maxduration", "maxseq", "poddur", "protocol", "podid", "podseq", "placement", "plcmt",
    "linearity", "skipmin", "skipafter", "sequence", "slotinpod", "mincpmpersec", "maxextended", "minbitrate",
    "maxbitrate", "playbackend",
})  # fmt: skip
_VIDEO_LISTS = frozenset({
    "protocols", "rqddurs", "battr", "playbackmethod", "delivery", "companionad", "api", "companiontype",
    "poddedupe", "durfloors",
})  # fmt: skip
_VIDEO_FIELDS = _VIDEO_ZERO_OMITTED | _VIDEO_LISTS | {"startdelay", "w", "h", "skip", "boxingallowed", "pos", "ext"}
_PARAM_NAMES = {"tagId": "TagId", "tagid": "Tagid", "bidfloor": "BidFloor", "adunitcode": "AdUnitCode"}


def go_fields(obj: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """``obj``'s values for the Go struct fields whose JSON names are ``names``, keyed by those names
    in document order. Keys match as json-iterator matches them: exactly, else ignoring case (a
    lower-case name takes the lower-cased key); a later duplicate key wins."""
    exact = set(names)
    folded: dict[str, str] = {name: name for name in names if name == name.lower()}
    for name in names:
        folded.setdefault(name.lower(), name)
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = key if key in exact else folded.get(key.lower())
        if name is not None:
            out[name] = value
    return out


def imp_bidder_params(imp: Mapping[str, Any]) -> dict[str, Any]:
    """``imp.ext.bidder`` read as PBS-Go adapters read it: ``imp.ext`` decoded as
    ``adapters.ExtImpBidder``, then ``bidder`` decoded as an object (null reads as empty). Raises
    JsonShapeError in json-iterator's words."""
    ext = imp.get("ext")
    if ext is not None and not isinstance(ext, dict):
        raise JsonShapeError(f"expect {{ or n, but found {found(ext)}")
    fields = go_fields(ext or {}, "prebid", "bidder")
    expect_object(fields.get("prebid"), "adapters.ExtImpBidder.Prebid")
    if "bidder" not in fields:
        raise JsonShapeError(NOTHING_TO_DECODE)
    return expect_object(fields["bidder"], "")


def go_parse_float(text: str) -> float | None:
    """Go's ``strconv.ParseFloat(text, 64)``: None where it fails (bad syntax, or out of range)."""
    if _DECIMAL_FLOAT.match(text):
        value = float(text)
        return None if math.isinf(value) else value
    if _INF_OR_NAN.match(text):
        return float(text)
    if _HEX_FLOAT.match(text):
        try:
            return float.fromhex(text)
        except OverflowError:
            return None
    return None


def go_video(video: Mapping[str, Any]) -> dict[str, Any]:
    """``video`` as PBS-Go writes a typed openrtb2.Video again: unknown keys dropped, zero values,
    empty lists and nulls of its omitempty fields left out, ``mimes`` written even when absent."""
    out: dict[str, Any] = {"mimes": video.get("mimes")}
    for key, value in video.items():
        if key not in _VIDEO_FIELDS or (value is None and key != "ext"):
            continue
        if (key in _VIDEO_ZERO_OMITTED and value in (0, "")) or (key in _VIDEO_LISTS and value == []):
            continue
        out[key] = value
    return out


def _go_query_unescape(text: str) -> str | None:
    """Go's ``url.QueryUnescape``: ``+`` is a space, ``%XX`` a byte; None for a malformed escape."""
    if "%" not in text and "+" not in text:
        return text
    if _BAD_ESCAPE.search(text):
        return None
    return unquote_to_bytes(text.replace("+", " ")).decode("utf-8", "replace")


def _params(imp: Mapping[str, Any]) -> tuple[str, float]:
    """(tag id, floor from the params; 0 when none or unreadable)."""
    fields = go_fields(imp_bidder_params(imp), *_PARAM_NAMES)
    for name, value in fields.items():
        if name != "bidfloor":
            expect_string(value, f"openrtb_ext.ExtImpSovrn.{_PARAM_NAMES[name]}")
    floor = fields.get("bidfloor")
    if isinstance(floor, str):
        floor = go_parse_float(floor)
    elif isinstance(floor, bool) or not isinstance(floor, int | float):
        floor = None
    return fields.get("tagid") or fields.get("tagId") or "", floor or 0.0


def _video_complete(video: Any) -> bool:
    return not isinstance(video, dict) or (
        video.get("mimes") is not None and bool(video.get("maxduration")) and video.get("protocols") is not None
    )


def _headers(request: Mapping[str, Any]) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    device = request.get("device")
    if isinstance(device, dict):
        with_header(headers, "User-Agent", device.get("ua"))
        with_header(headers, "X-Forwarded-For", device.get("ip"))
        with_header(headers, "Accept-Language", device.get("language"))
        dnt = device.get("dnt")
        if isinstance(dnt, int) and not isinstance(dnt, bool):
            headers["Dnt"] = str(dnt)
    user = request.get("user")
    buyer_uid = user.get("buyeruid") if isinstance(user, dict) else None
    if isinstance(buyer_uid, str) and buyer_uid.strip(GO_SPACE):
        headers["Cookie"] = f"ljt_reader={buyer_uid.strip(GO_SPACE)}"
    return headers


class SovrnAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        errors: list[BidderError] = []
        imps = []
        for imp in request.get("imp") or ():
            try:
                tag_id, floor = _params(imp)
            except JsonShapeError as exc:
                errors.append(bad_input(str(exc)))
                continue
            if not tag_id:
                errors.append(bad_input("Missing required parameter 'tagid'"))
                continue
            if not _video_complete(imp.get("video")):
                errors.append(bad_input("Missing required video parameter"))
                continue
            out = dict(imp)
            out["tagid"] = tag_id
            if isinstance(imp.get("video"), dict):
                out["video"] = go_video(imp["video"])
            if not imp.get("bidfloor") and floor > 0:
                out["bidfloor"] = floor
            imps.append(out)
        if not imps:
            return [], errors
        if any(math.isinf(imp.get("bidfloor") or 0) for imp in imps):  # a "bidfloor": "Inf" param
            errors.append(BidderError("json: unsupported value: +Inf"))
            return [], errors
        body = orjson.dumps({**request, "imp": imps})
        return [RequestData("POST", self.endpoint, body, _headers(request), imp_ids(imps))], errors

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        data, failure = decode_answer(response, NOT_AN_OBJECT)
        if data is None:
            return None, failure
        imp_is_video: dict[str, bool] = {}
        for imp in request.get("imp") or ():
            imp_is_video.setdefault(imp.get("id", ""), imp.get("video") is not None)  # the first imp of an id
        result = BidderResponse()
        errors: list[BidderError] = []
        for _, bid in answer_bids(data):
            adm = bid.get("adm")
            if isinstance(adm, str):
                decoded = _go_query_unescape(adm)
                if decoded is None:
                    continue
                if decoded != adm:
                    bid = {**bid, "adm": decoded}
            imp_id = bid.get("impid", "")
            if imp_id not in imp_is_video:
                errors.append(bad_input(f"Imp ID {imp_id} in bid didn't match with any imp in the original request"))
                continue
            result.bids.append(TypedBid(bid, "video" if imp_is_video[imp_id] else "banner"))
        return result, errors


def build(config: AdapterConfig) -> SovrnAdapter:
    return SovrnAdapter(config)
