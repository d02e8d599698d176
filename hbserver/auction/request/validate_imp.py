"""The media checks of one imp (PBS-Go ``ortb.ValidateImp`` up to the imp's ext), in PBS-Go's order.

``id``, ``metric``, at least one media object, then banner (sizes, the deprecated flexible fields,
each format), video, audio, native (parsed and normalised in place) and the deals. Each check raises
RequestError with PBS-Go's text. Fields of the wrong JSON type were refused earlier
(``ortb_types``); the checks here still never fail on one.
"""

from __future__ import annotations

from typing import Any

from hbserver.auction.common.request_error import RequestError
from hbserver.auction.request.native import fill_and_validate_native

_DEPRECATED_BANNER_KEYS = ("wmin", "wmax", "hmin", "hmax")
_VIDEO_NON_NEGATIVE = ("minbitrate", "maxbitrate")
_AUDIO_NON_NEGATIVE = ("sequence", "maxseq", "minbitrate", "maxbitrate")
_FORMAT_NON_NEGATIVE = ("w", "h", "wratio", "hratio", "wmin")


def go_number(value: Any) -> float:
    """A number field as Go reads it: absent, null or not a number is 0."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return 0


def validate_imp_media(imp: dict[str, Any], index: int) -> dict[str, Any]:
    """PBS-Go's checks of ``request.imp[index]`` before its ext. Returns the imp, or a copy with the
    normalised native request when validation changed it (the caller's objects are never changed)."""
    imp_id = imp.get("id")
    if not isinstance(imp_id, str) or not imp_id:
        raise RequestError(f'request.imp[{index}] missing required field: "id"')
    metric = imp.get("metric")
    if isinstance(metric, list) and metric:
        raise RequestError(
            f"request.imp[{index}].metric is not yet supported by prebid-server. Support may be added in the future"
        )
    banner, video, audio, native = imp.get("banner"), imp.get("video"), imp.get("audio"), imp.get("native")
    if banner is None and video is None and audio is None and native is None:
        raise RequestError(f'request.imp[{index}] must contain at least one of "banner", "video", "audio", or "native"')
    for kind, value in (("banner", banner), ("video", video), ("audio", audio), ("native", native)):
        if value is not None and not isinstance(value, dict):
            raise RequestError(f"request.imp[{index}].{kind} must be an object")
    if banner is not None:
        _check_banner(banner, index, imp.get("instl") == 1)
    if video is not None:
        _check_video(video, index)
    if audio is not None:
        _check_audio(audio, index)
    if native is not None:
        checked = dict(native)
        fill_and_validate_native(checked, index)
        if checked.get("request") is not native.get("request"):
            imp = {**imp, "native": checked}
    pmp = imp.get("pmp")
    if isinstance(pmp, dict):
        _check_deals(pmp.get("deals"), index)
    return imp


def _check_banner(banner: dict[str, Any], index: int, interstitial: bool) -> None:
    w, h = banner.get("w"), banner.get("h")
    if go_number(w) < 0:
        raise RequestError(f"request.imp[{index}].banner.w must be a positive number")
    if go_number(h) < 0:
        raise RequestError(f"request.imp[{index}].banner.h must be a positive number")
    for key in _DEPRECATED_BANNER_KEYS:
        if go_number(banner.get(key)) != 0:
            raise RequestError(
                f'request.imp[{index}].banner uses unsupported property: "{key}". Use the "format" array instead.'
            )
    formats = banner.get("format")
    if formats is not None and not isinstance(formats, list):
        raise RequestError(f"request.imp[{index}].banner.format must be an array")
    if not (go_number(w) > 0 and go_number(h) > 0) and not formats and not interstitial:
        raise RequestError(
            f'request.imp[{index}].banner has no sizes. Define "w" and "h", or include "format" elements.'
        )
    for fmt_index, fmt in enumerate(formats or ()):
        if type(fmt) is dict:
            fw, fh = fmt.get("w"), fmt.get("h")
            if type(fw) is int and type(fh) is int and fw > 0 and fh > 0 and len(fmt) == 2:
                continue  # the usual {w, h}: nothing more to check
        _check_format(fmt, index, fmt_index)


def _check_format(fmt: Any, index: int, fmt_index: int) -> None:
    if not isinstance(fmt, dict):
        raise RequestError(f"request.imp[{index}].banner.format[{fmt_index}] must be an object")
    for key in _FORMAT_NON_NEGATIVE:
        if go_number(fmt.get(key)) < 0:
            raise RequestError(f"request.imp[{index}].banner.format[{fmt_index}].{key} must be a positive number")
    w, h = go_number(fmt.get("w")), go_number(fmt.get("h"))
    wmin, wratio, hratio = go_number(fmt.get("wmin")), go_number(fmt.get("wratio")), go_number(fmt.get("hratio"))
    uses_size = w != 0 or h != 0
    uses_ratios = wmin != 0 or wratio != 0 or hratio != 0
    where = f"Request imp[{index}].banner.format[{fmt_index}]"
    if uses_size and uses_ratios:
        raise RequestError(
            f"{where} should define *either* {{w, h}} *or* {{wmin, wratio, hratio}}, but not both. "
            'If both are valid, send two "format" objects in the request.'
        )
    if not uses_size and not uses_ratios:
        raise RequestError(
            f"{where} should define *either* {{w, h}} (for static size requirements) *or* "
            "{wmin, wratio, hratio} (for flexible sizes) to be non-zero."
        )
    if uses_size and (w == 0 or h == 0):
        raise RequestError(f'{where} must define non-zero "h" and "w" properties.')
    if uses_ratios and (wmin == 0 or wratio == 0 or hratio == 0):
        raise RequestError(f'{where} must define non-zero "wmin", "wratio", and "hratio" properties.')


def _check_video(video: dict[str, Any], index: int) -> None:
    mimes = video.get("mimes")
    if not isinstance(mimes, list) or not mimes:
        raise RequestError(f"request.imp[{index}].video.mimes must contain at least one supported MIME type")
    for key in ("w", "h", *_VIDEO_NON_NEGATIVE):
        if go_number(video.get(key)) < 0:
            raise RequestError(f"request.imp[{index}].video.{key} must be a positive number")


def _check_audio(audio: dict[str, Any], index: int) -> None:
    mimes = audio.get("mimes")
    if not isinstance(mimes, list) or not mimes:
        raise RequestError(f"request.imp[{index}].audio.mimes must contain at least one supported MIME type")
    for key in _AUDIO_NON_NEGATIVE:
        if go_number(audio.get(key)) < 0:
            raise RequestError(f"request.imp[{index}].audio.{key} must be a positive number")


def _check_deals(deals: Any, index: int) -> None:
    if not isinstance(deals, list):
        return
    for deal_index, deal in enumerate(deals):
        deal_id = deal.get("id") if isinstance(deal, dict) else None
        if not isinstance(deal_id, str) or not deal_id:
            raise RequestError(f'request.imp[{index}].pmp.deals[{deal_index}] missing required field: "id"')
