"""Interstitial sizes (PBS-Go ``processInterstitials``): an ``imp.instl == 1`` banner gets its format list
from ``device.ext.prebid.interstitial``.

The largest size is the imp's first format, or the device's screen when that format is 1x1 or absent;
the smallest is ``minwidthperc``/``minheightperc`` percent of it. The format list becomes the first ten
of PBS-Go's ranked sizes that fit between the two. Runs before validation, as in PBS-Go, and only for
``/openrtb2/auction`` (PBS-Go's AMP endpoint does not call it).
"""

from __future__ import annotations

from typing import Any

from hbserver.auction.request.ortb_types import device_ext_error

MAX_FORMATS = 10
_PERCENT_KEYS = ("minwidthperc", "minheightperc")

# PBS-Go config.ResolvedInterstitialSizes: larger and more common sizes first (AppNexus/Xandr stats).
RANKED_SIZES: tuple[tuple[int, int], ...] = (
    (300, 250), (728, 90), (160, 600), (320, 50), (300, 600), (970, 250), (2000, 1400), (1920, 1200),
    (1800, 1000), (1920, 1080), (1600, 1150), (1696, 900), (1600, 900), (1270, 800), (970, 1000),
    (1920, 480), (320, 320), (1600, 500), (768, 1024), (1024, 768), (828, 910), (728, 970), (120, 600),
    (640, 960), (980, 600), (620, 891), (930, 600), (980, 552), (1272, 328), (300, 50), (500, 1000),
    (900, 550), (980, 500), (970, 500), (800, 600), (336, 280), (1250, 360), (980, 400), (320, 250),
    (320, 480), (980, 240), (580, 400), (970, 415), (480, 820), (620, 620), (980, 300), (970, 90),
    (600, 600), (1800, 200), (970, 310), (720, 480), (1295, 250), (300, 1050), (1272, 250), (300, 300),
    (640, 480), (320, 100), (580, 500), (1000, 300), (1250, 240), (600, 500), (300, 1000), (728, 410),
    (800, 250), (970, 300), (950, 300), (994, 250), (940, 300), (640, 320), (468, 600), (970, 200),
    (930, 180), (250, 600), (491, 555), (550, 480), (750, 300), (980, 250), (1000, 260), (980, 150),
    (350, 240), (970, 210), (640, 360), (580, 415), (480, 300), (750, 200), (360, 640), (624, 368),
    (900, 250), (468, 400), (608, 226), (690, 300), (605, 340), (320, 640), (450, 450), (300, 480),
    (250, 800), (640, 300), (320, 160), (980, 200), (950, 200), (480, 400), (740, 250), (336, 544),
    (303, 603), (320, 568), (301, 601), (300, 601), (600, 300), (180, 500), (980, 120), (950, 180),
    (935, 180), (994, 170), (468, 360), (320, 400), (320, 240), (320, 500), (316, 513), (630, 250),
    (480, 320), (320, 481), (520, 290), (250, 250), (300, 500), (1000, 150), (320, 460), (970, 150),
    (800, 180), (468, 60), (482, 282), (680, 200), (320, 416), (480, 280), (300, 431), (728, 180),
    (300, 430), (180, 701), (840, 150), (600, 200), (768, 150), (200, 600), (350, 350), (202, 600),
    (400, 300), (414, 286), (656, 180), (994, 118), (638, 180), (650, 170), (1000, 90), (300, 360),
    (600, 180), (240, 400), (161, 601), (610, 138), (164, 601), (980, 100), (970, 100), (468, 200),
    (250, 360), (320, 180), (605, 150), (600, 150), (980, 90), (750, 100), (150, 600), (630, 140),
    (696, 120), (307, 254), (303, 253), (703, 110), (550, 140), (300, 251), (298, 250), (500, 150),
    (413, 180), (728, 100), (269, 269), (640, 106), (768, 90), (320, 200), (728, 93), (729, 90),
    (727, 90), (640, 100), (720, 90), (300, 100), (970, 66), (480, 110), (300, 200), (707, 83), (900, 65),
    (467, 120), (200, 200), (450, 121), (320, 150), (600, 90), (300, 170), (468, 100), (300, 169),
    (500, 100), (300, 150), (990, 50), (140, 350), (160, 300), (300, 158), (190, 240), (180, 150),
    (300, 145), (310, 122), (468, 90), (594, 70), (480, 80), (600, 65), (484, 80), (320, 75), (335, 100),
    (375, 80), (300, 75), (120, 240), (480, 60), (300, 90), (120, 60), (100, 200), (320, 80), (160, 160),
    (400, 63), (300, 81), (1, 1), (300, 80), (375, 58), (232, 90), (321, 51), (320, 63), (319, 49),
    (300, 65), (360, 50), (125, 125), (298, 60), (300, 60), (299, 60), (301, 50), (234, 60), (280, 47),
    (120, 90), (13, 13), (17, 17), (168, 50), (140, 50), (120, 20),
)


class InterstitialError(ValueError):
    """PBS-Go's 400 text for an interstitial request it cannot size."""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def interstitial_percentages(device: Any) -> tuple[int, int] | None:
    """``(minwidthperc, minheightperc)`` from ``device.ext.prebid.interstitial``; None when the request
    asks for no interstitial sizing. Raises InterstitialError with PBS-Go's text for a bad value: each
    must be a JSON integer from 0 to 100 (``60.0``, ``"60"`` or a missing key are refused)."""
    ext = device.get("ext") if isinstance(device, dict) else None
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    settings = prebid.get("interstitial") if isinstance(prebid, dict) else None
    if settings is None:
        return None
    percentages = []
    for key in _PERCENT_KEYS:
        value = settings.get(key) if isinstance(settings, dict) else None
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
            raise InterstitialError(f"request.device.ext.prebid.interstitial.{key} must be a number between 0 and 100")
        percentages.append(value)
    return percentages[0], percentages[1]


def apply_interstitials(request: dict[str, Any]) -> None:
    """Fill the format list of every ``instl == 1`` banner imp. ``request["imp"]`` becomes a new list and
    the imps and banners touched are copies, so stored data is never changed. Raises InterstitialError."""
    imps = request.get("imp")
    if not isinstance(imps, list) or not any(isinstance(imp, dict) and imp.get("instl") == 1 for imp in imps):
        return
    device = request.get("device")
    if isinstance(device, dict) and device.get("ext") is not None:
        problem = device_ext_error(request)  # PBS-Go reads device.ext (its type errors) only here
        if problem is not None:
            raise InterstitialError(problem)
    percentages = interstitial_percentages(device)
    if percentages is None:
        return  # no interstitial sizing asked for
    request["imp"] = [
        _sized(imp, percentages, device)
        if isinstance(imp, dict) and imp.get("instl") == 1 and isinstance(imp.get("banner"), dict)
        else imp
        for imp in imps
    ]


def _percent_of(size: int, percent: int) -> int:
    """Go's integer division (truncates toward zero, also for a negative device size)."""
    product = size * percent
    return product // 100 if product >= 0 else -(-product // 100)


def _sized(imp: dict[str, Any], percentages: tuple[int, int], device: dict[str, Any]) -> dict[str, Any]:
    banner = imp["banner"]
    formats = banner.get("format")
    first = formats[0] if isinstance(formats, list) and formats and isinstance(formats[0], dict) else {}
    max_w, max_h = _int(first.get("w")), _int(first.get("h"))
    if max_w < 2 and max_h < 2:  # 1x1 (or nothing) means "the device's size"
        max_w, max_h = _int(device.get("w")), _int(device.get("h"))
    min_w = _percent_of(max_w, percentages[0])
    min_h = _percent_of(max_h, percentages[1])
    sizes = [
        {"w": w, "h": h} for w, h in RANKED_SIZES if min_w <= w <= max_w and min_h <= h <= max_h
    ][:MAX_FORMATS]
    if not sizes:
        raise InterstitialError(
            f"Unable to set interstitial size list for Imp id={imp.get('id') or ''} "
            f"(No valid sizes between {min_w}x{min_h} and {max_w}x{max_h})"
        )
    return {**imp, "banner": {**banner, "format": sizes}}
