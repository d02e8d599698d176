"""HuaweiAds adapter: every imp becomes an ad slot of one call in Huawei's own ADX protocol (API 3.4),
sent to the site of the device's country (China, Russia, Europe, else Asia; ``extra_info``'s
``closeSiteSelectionByCountry: "1"`` keeps the configured endpoint) with a digest ``Authorization``
signed (HMAC-SHA256) by the imp's publisher key.

The app's bundle may be renamed by ``extra_info``'s ``pkgNameConvert`` rules; device ids come from
``device.ifa`` and ``user.ext.data`` (gaid, oaid, imei, clientTime), one of them is required. The
answer's ads are matched to the imps by slot id; each one's markup is built here: an HTML picture
or a VAST 3.0 document for a banner, VAST for a video, a native 1.x response for a native imp.
Prices are in the answer's currency, CNY by default.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
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
    bad_server_response,
)
from hbserver.adapters.common import JsonShapeError, expect_object, imp_ids, optional_object
from hbserver.adapters.golike import GO_SPACE, GoKind, go_fields, go_int, go_list, go_value
from hbserver.adapters.gourl import go_query_unescape

API_VERSION = "3.4"
DEFAULT_COUNTRY = "ZA"
DEFAULT_ZONE = "+0200"
DEFAULT_MODEL = "HUAWEI"
CHINESE_SITE = "https://acd.op.hicloud.com/ppsadx/getResult"
EUROPEAN_SITE = "https://adx-dre.op.hicloud.com/ppsadx/getResult"
ASIAN_SITE = "https://adx-dra.op.hicloud.com/ppsadx/getResult"
RUSSIAN_SITE = "https://adx-drru.op.hicloud.com/ppsadx/getResult"
TEST_NONCE = "1629473330823"  # the nonce of a test imp (isTestAuthorization "true"): 2021-08-20 19:30

_EUROPEAN_COUNTRIES = frozenset(
    "AX AL AD AU AT BE BA BG CA HR CY CZ DK EE FO FI FR DE GI GR GL GG VA HU IS IE IM IL IT JE YK LV LI LT LU "
    "MT MD MC ME NL AN NZ NO PL PT RO MF VC SM RS SX SK SI ES SE CH TR UA GB US MK SJ BQ PM CW".split()
)
_ALPHA3_TO_ALPHA2 = dict(
    pair.split(":")
    for pair in (
        "AND:AD AGO:AO AUT:AT BGD:BD BLR:BY CAF:CF TCD:TD CHL:CL CHN:CN COG:CG COD:CD DNK:DK GNQ:GQ EST:EE "
        "GIN:GN GNB:GW GUY:GY IRQ:IQ IRL:IE ISR:IL KAZ:KZ LBY:LY MDG:MG MDV:MV MEX:MX MNE:ME MOZ:MZ PAK:PK "
        "PNG:PG PRY:PY POL:PL PRT:PT SRB:RS SVK:SK SVN:SI SWE:SE TUN:TN TUR:TR TKM:TM UKR:UA ARE:AE URY:UY"
    ).split()
)
# mobile country code -> ISO 3166 alpha-2 (PBS-Go's mcc_list.go)
_MCC_COUNTRIES = {
    int(code): country.upper()
    for code, country in (
        pair.split(":")
        for pair in """
202:gr 204:nl 206:be 208:fr 212:mc 213:ad 214:es 216:hu 218:ba 219:hr 220:rs 222:it 225:va 226:ro
228:ch 230:cz 231:sk 232:at 234:gb 235:gb 238:dk 240:se 242:no 244:fi 246:lt 247:lv 248:ee 250:ru
255:ua 257:by 259:md 260:pl 262:de 266:gi 268:pt 270:lu 272:ie 274:is 276:al 278:mt 280:cy 282:ge
283:am 284:bg 286:tr 288:fo 289:ge 290:gl 292:sm 293:si 294:mk 295:li 297:me 302:ca 308:pm 310:us
311:us 312:us 313:us 314:us 315:us 316:us 330:pr 332:vi 334:mx 338:jm 340:gp 342:bb 344:ag 346:ky
348:vg 350:bm 352:gd 354:ms 356:kn 358:lc 360:vc 362:ai 363:aw 364:bs 365:ai 366:dm 368:cu 370:do
372:ht 374:tt 376:tc 400:az 401:kz 402:bt 404:in 405:in 406:in 410:pk 412:af 413:lk 414:mm 415:lb
416:jo 417:sy 418:iq 419:kw 420:sa 421:ye 422:om 423:ps 424:ae 425:il 426:bh 427:qa 428:mn 429:np
430:ae 431:ae 432:ir 434:uz 436:tj 437:kg 438:tm 440:jp 441:jp 450:kr 452:vn 454:hk 455:mo 456:kh
457:la 460:cn 461:cn 466:tw 467:kp 470:bd 472:mv 502:my 505:au 510:id 514:tl 515:ph 520:th 525:sg
528:bn 530:nz 534:mp 535:gu 536:nr 537:pg 539:to 540:sb 541:vu 542:fj 543:wf 544:as 545:ki 546:nc
547:pf 548:ck 549:ws 550:fm 551:mh 552:pw 553:tv 555:nu 602:eg 603:dz 604:ma 605:tn 606:ly 607:gm
608:sn 609:mr 610:ml 611:gn 612:ci 613:bf 614:ne 615:tg 616:bj 617:mu 618:lr 619:sl 620:gh 621:ng
622:td 623:cf 624:cm 625:cv 626:st 627:gq 628:ga 629:cg 630:cg 631:ao 632:gw 633:sc 634:sd 635:rw
636:et 637:so 638:dj 639:ke 640:tz 641:ug 642:bi 643:mz 645:zm 646:mg 647:re 648:zw 649:na 650:mw
651:ls 652:bw 653:sz 654:km 655:za 657:er 658:sh 659:ss 702:bz 704:gt 706:sv 708:hn 710:ni 712:cr
714:pa 716:pe 722:ar 724:br 730:cl 732:co 734:ve 736:bo 738:gy 740:ec 742:gf 744:py 746:sr 748:uy
750:fk""".split()
    )
}
# mobile network (mcc + mnc) -> Huawei's carrier code: 1 China Unicom, 2 China Mobile, 3 China Telecom
_CARRIERS = {
    **dict.fromkeys(("46000", "46002", "46007"), 2),
    **dict.fromkeys(("46001", "46006"), 1),
    **dict.fromkeys(("46003", "46005", "46011"), 3),
}

# Huawei's ad types, by the names the params give (an unknown name is a banner)
BANNER, NATIVE, ROLL, INTERSTITIAL, REWARDED = 8, 3, 60, 12, 7
_AD_TYPES = {
    "banner": BANNER, "native": NATIVE, "rewarded": REWARDED, "interstitial": INTERSTITIAL, "roll": ROLL,
    "splash": 1, "magazinelock": 2, "audio": 17,
}  # fmt: skip
_PICTURE_CREATIVES = frozenset({1, 2, 3, 4, 7, 8, 10})  # text, pictures, gif, icon with text
_VIDEO_CREATIVES = frozenset({6, 9, 11})
APP_PROMOTION = 3  # interaction type: the click opens the app's intent
_POPULAR_SIZES = ((225, 150), (1080, 607), (300, 250), (1080, 1620), (1280, 720), (640, 360), (1080, 1920), (720, 1280))
_MAIN_IMAGE, _ICON_IMAGE = 3, 1  # native image asset types
_DESC, _DESC2, _CTA_TEXT = 2, 10, 12  # native data asset types

_CLIENT_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}")
_ZONE = re.compile(r"[+-][0-9]{4}")
_ATOI = re.compile(r"[+-]?[0-9]+")


class _Refused(Exception):
    """A request or an answer the adapter gives up on; ``error`` says why in PBS-Go's words."""

    def __init__(self, error: BidderError | str) -> None:
        self.error = error if isinstance(error, BidderError) else BidderError(error)
        super().__init__(self.error.message)


# --- reading the request ---------------------------------------------------------------------------


def _obj(parent: Any, key: str) -> dict[str, Any] | None:
    value = parent.get(key) if isinstance(parent, Mapping) else None
    return value if isinstance(value, dict) else None


def _str(parent: Any, key: str) -> str:
    value = parent.get(key) if isinstance(parent, Mapping) else None
    return value if isinstance(value, str) else ""


def _int(parent: Any, key: str) -> int:
    value = parent.get(key) if isinstance(parent, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _number(parent: Any, key: str) -> float:
    value = parent.get(key) if isinstance(parent, Mapping) else None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _int32(value: int) -> int:
    """Go's ``int32(v)`` of an int64: the low 32 bits, signed."""
    return (value + 2**31) % 2**32 - 2**31


def _float32(value: float) -> float:
    """Go's ``float32(v)`` as encoding/json writes it (the shortest digits that read back the same
    float32), read again as a float64."""
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        raise _Refused(f"json: unsupported value: {'+' if value > 0 else '-'}Inf") from None
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return float(text)
    return float(single)


def _omitempty(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value}


@dataclass(frozen=True, slots=True)
class _Params:
    """openrtb_ext.ExtImpHuaweiAds."""

    slotid: str
    adtype: str
    publisherid: str
    signkey: str
    keyid: str
    test: bool  # isTestAuthorization == "true": test slots and a fixed nonce


_PARAM_NAMES = ("slotid", "adtype", "publisherid", "signkey", "keyid", "isTestAuthorization")
_MISSING_PARAM = (
    ("slotid", "ExtImpHuaweiAds: slotid is empty."),
    ("adtype", "ExtImpHuaweiAds: adtype is empty."),
    ("publisherid", "ExtHuaweiAds: publisherid is empty."),
    ("signkey", "ExtHuaweiAds: signkey is empty."),
    ("keyid", "ExtImpHuaweiAds: keyid is empty."),
)


def read_params(imp: Mapping[str, Any]) -> _Params:
    """The imp's params; _Refused (PBS-Go's words) when its ext or params do not decode or one of
    the five is empty."""
    ext = imp.get("ext")
    if not isinstance(ext, dict) or not isinstance(_ext_prebid(ext), dict | None):
        raise _Refused("Unmarshal: openRTBImp.Ext -> bidderExt failed")
    fields = go_fields(ext, "bidder")
    bidder = fields.get("bidder")
    if "bidder" not in fields or not isinstance(bidder, dict | None):
        raise _Refused("Unmarshal: bidderExt.Bidder -> huaweiAdsImpExt failed")
    values = dict.fromkeys(_PARAM_NAMES, "")
    for name, value in go_fields(bidder or {}, *_PARAM_NAMES).items():
        if not isinstance(value, str | None):
            raise _Refused("Unmarshal: bidderExt.Bidder -> huaweiAdsImpExt failed")
        values[name] = value or ""
    for name, text in _MISSING_PARAM:
        if not values[name]:
            raise _Refused(text)
    test = values.pop("isTestAuthorization") == "true"
    return _Params(**values, test=test)


def _ext_prebid(ext: Mapping[str, Any]) -> Any:
    return go_fields(ext, "prebid").get("prebid")


# --- ad slots --------------------------------------------------------------------------------------


def ad_slot(params: _Params, imp: Mapping[str, Any]) -> dict[str, Any]:
    """The imp as one of Huawei's ad slots (adslot30), its sizes from the imp's media object."""
    adtype = _AD_TYPES.get(params.adtype.lower(), BANNER)
    slot: dict[str, Any] = {"slotid": params.slotid, "adtype": adtype, "test": 1 if params.test else 0}
    wrong = f"doesn't correspond to huawei adtype {params.adtype}"
    if _obj(imp, "banner") is not None:
        if adtype not in (BANNER, INTERSTITIAL):
            raise _Refused(f"check openrtb format: request has banner, {wrong}")
        _banner_sizes(slot, imp["banner"])
    elif _obj(imp, "native") is not None:
        if adtype != NATIVE:
            raise _Refused(f"check openrtb format: request has native, {wrong}")
        _native_sizes(slot, imp["native"])
    elif _obj(imp, "video") is not None:
        if adtype not in (BANNER, INTERSTITIAL, REWARDED, ROLL):
            raise _Refused(f"check openrtb format: request has video, {wrong}")
        video = imp["video"]
        slot.update(_omitempty(w=_int(video, "w"), h=_int(video, "h")))
        if adtype == ROLL:
            if not _int(video, "maxduration"):
                raise _Refused("extract openrtb video failed: MaxDuration is empty when huaweiads adtype is roll.")
            slot["totalDuration"] = _int32(_int(video, "maxduration"))
    elif _obj(imp, "audio") is not None:
        raise _Refused("check openrtb format: request has audio, not currently supported")
    else:
        raise _Refused("check openrtb format: please choose one of our supported type banner, native, or video")
    return slot


def _banner_sizes(slot: dict[str, Any], banner: Mapping[str, Any]) -> None:
    if banner.get("w") is not None and banner.get("h") is not None:
        slot.update(_omitempty(w=_int(banner, "w"), h=_int(banner, "h")))
    formats = [item for item in banner.get("format") or () if isinstance(item, dict)]
    sizes = [{"w": _int(item, "w"), "h": _int(item, "h")} for item in formats if _int(item, "w") and _int(item, "h")]
    if sizes:
        slot["format"] = sizes


def _native_sizes(slot: dict[str, Any], native: Mapping[str, Any]) -> None:
    """The sizes and creative types a native request asks for: the popular sizes when it has a video
    (plus the video's own), else sizes like its main image's (the same ratio, or larger than its
    minimum); 903 for a video, 901/904/905 for a main image."""
    if not _str(native, "request"):
        raise _Refused("extract openrtb native failed: imp.Native.Request is empty")
    payload = native_payload(native["request"])
    main_images = [img for img in _asset_objects(payload, "img") if img["type"] == _MAIN_IMAGE]
    wanted = min(len(main_images), 2)  # PBS-Go stops counting at two
    formats: list[tuple[int, int]] = []
    videos = 0
    for asset in payload["assets"]:
        if asset["video"] is not None:
            videos += 1
            size = (_int(asset["video"], "w"), _int(asset["video"], "h"))
            formats = [*_POPULAR_SIZES, *([size] if all(size) and size not in _POPULAR_SIZES else [])]
        img = asset["img"]
        if img is None or img["type"] != _MAIN_IMAGE:
            continue
        has_minimum = bool(img["wmin"] and img["hmin"])
        if wanted > 1 and img["w"] and img["h"] and has_minimum:
            formats.append((img["w"], img["h"]))
        elif wanted == 1 and img["w"] and img["h"] and has_minimum:
            ratio = img["w"] / img["h"]
            formats += [(w, h) for w, h in _POPULAR_SIZES if abs(w / h - ratio) <= 0.5]
        elif wanted == 1 and not img["w"] and not img["h"] and has_minimum:
            formats += [(w, h) for w, h in _POPULAR_SIZES if w > img["wmin"] and h > img["hmin"]]
    if formats:
        slot["format"] = [_omitempty(w=w, h=h) for w, h in formats]
    creative_types = (["903"] if videos else []) + (["901", "904", "905"] if main_images else [])
    if creative_types:
        slot["detailedCreativeTypeList"] = creative_types


def _asset_objects(payload: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    return [asset[kind] for asset in payload["assets"] if asset[kind] is not None]


_NATIVE_IMG = (("type", GoKind.INT), ("w", GoKind.INT), ("wmin", GoKind.INT), ("h", GoKind.INT), ("hmin", GoKind.INT))


def native_payload(text: str) -> dict[str, Any]:
    """The native request (native1 request.Request) as far as it is read here: ``ver`` and each
    asset's ``id``, ``title``, ``img`` (type and sizes), ``video`` and ``data`` (type). _Refused in
    json-iterator's words when it does not decode."""
    try:
        data = expect_object(orjson.loads(text), "")
        fields = go_fields(data, "ver", "assets")
        assets = [_native_asset(asset) for asset in go_list(fields.get("assets"), "request.Request.Assets")]
        return {"ver": go_value(fields.get("ver"), GoKind.STRING, "request.Request.Ver") or "", "assets": assets}
    except orjson.JSONDecodeError as exc:
        raise _Refused(f"request.Request: ReadObject: {exc}") from None
    except JsonShapeError as exc:
        raise _Refused(str(exc)) from None


def _native_asset(asset: Any) -> dict[str, Any]:
    fields = go_fields(expect_object(asset, "[]request.Asset"), "id", "title", "img", "video", "data")
    out: dict[str, Any] = {"id": go_int(fields.get("id"), "request.Asset.ID")}
    for kind in ("title", "img", "video", "data"):
        value = fields.get(kind)
        out[kind] = optional_object(value, f"request.Asset.{kind.capitalize()}")
    if out["img"] is not None:
        img = go_fields(out["img"], *(name for name, _ in _NATIVE_IMG))
        out["img"] = {name: go_value(img.get(name), kind, f"request.Image.{name}") or 0 for name, kind in _NATIVE_IMG}
    if out["video"] is not None:
        video = go_fields(out["video"], "w", "h")
        out["video"] = {name: go_int(video.get(name), f"openrtb2.Video.{name.upper()}") for name in ("w", "h")}
    if out["data"] is not None:
        out["data"] = {"type": go_int(go_fields(out["data"], "type").get("type"), "request.Data.Type")}
    return out


# --- the rest of the request -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PkgNameConvert:
    """One rule of ``extra_info``'s ``pkgNameConvert``: the bundles renamed to ``converted``."""

    converted: str
    names: tuple[str, ...] = ()  # exact bundles ("*" = any)
    keywords: tuple[str, ...] = ()  # contained past the bundle's start
    prefixes: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()  # never renamed

    def renames(self, bundle: str) -> bool | None:
        """True when this rule renames ``bundle``, False when it keeps it as it is, None when it
        does not apply."""
        if bundle in self.exceptions:
            return False
        if any(name in (bundle, "*") for name in self.names):
            return True
        if any(bundle.find(keyword) > 0 for keyword in self.keywords):
            return True
        return True if any(bundle.startswith(prefix) for prefix in self.prefixes) else None


@dataclass(frozen=True, slots=True)
class ExtraInfo:
    """``extra_info``: the package name rules and whether the site is chosen by country."""

    pkg_name_converts: tuple[PkgNameConvert, ...] = ()
    close_site_selection_by_country: str = ""

    def package_name(self, bundle: str) -> str:
        for rule in self.pkg_name_converts:
            renamed = rule.renames(bundle)
            if renamed is not None:
                return rule.converted if renamed else bundle
        return bundle


_CONVERT_FIELDS = {
    "unconvertedPkgNames": "UnconvertedPkgNames",
    "unconvertedPkgNameKeyWords": "UnconvertedPkgNameKeyWords",
    "unconvertedPkgNamePrefixs": "UnconvertedPkgNamePrefixs",
    "exceptionPkgNames": "ExceptionPkgNames",
}


def read_extra_info(text: str) -> ExtraInfo:
    """``extra_info`` as PBS-Go's builder reads it; ValueError (its words) when it does not decode, a
    rule has no converted name or an empty keyword or prefix."""
    if not text:
        return ExtraInfo()
    try:
        fields = go_fields(expect_object(orjson.loads(text), ""), "pkgNameConvert", "closeSiteSelectionByCountry")
        close = go_value(
            fields.get("closeSiteSelectionByCountry"), GoKind.STRING, "huaweiads.ExtraInfo.CloseSiteSelectionByCountry"
        )
        rules = [
            _convert_rule(item) for item in go_list(fields.get("pkgNameConvert"), "huaweiads.ExtraInfo.PkgNameConvert")
        ]
    except (orjson.JSONDecodeError, JsonShapeError) as exc:
        raise ValueError(f"invalid extra info: {exc} , pls check") from None
    for rule in rules:
        if not rule.converted:
            raise ValueError("invalid extra info: ConvertedPkgName is empty, pls check")
        if "" in rule.keywords:
            raise ValueError("invalid extra info: UnconvertedPkgNameKeyWords has a empty keyword, pls check")
        if "" in rule.prefixes:
            raise ValueError("invalid extra info: UnconvertedPkgNamePrefixs has a empty value, pls check")
    return ExtraInfo(tuple(rules), close or "")


def _convert_rule(item: Any) -> PkgNameConvert:
    fields = go_fields(expect_object(item, "[]huaweiads.pkgNameConvert"), "convertedPkgName", *_CONVERT_FIELDS)
    lists = []
    for name, go_name in _CONVERT_FIELDS.items():
        values = go_value(fields.get(name), GoKind.STRINGS, f"huaweiads.pkgNameConvert.{go_name}") or []
        lists.append(tuple(value or "" for value in values))
    converted = go_value(fields.get("convertedPkgName"), GoKind.STRING, "huaweiads.pkgNameConvert.ConvertedPkgName")
    return PkgNameConvert(converted or "", *lists)


def country_code(request: Mapping[str, Any]) -> str:
    """The alpha-2 country: the device's geo, the user's, the device's mobile country code, else ZA."""
    device = _obj(request, "device")
    for owner in (device, _obj(request, "user")):
        country = _str(_obj(owner, "geo"), "country")
        if country:
            return convert_country(country)
    mccmnc = _str(device, "mccmnc")
    if mccmnc:
        mcc = mccmnc.split("-")[0]
        if _ATOI.fullmatch(mcc):
            return _MCC_COUNTRIES.get(int(mcc), DEFAULT_COUNTRY)
    return DEFAULT_COUNTRY


def convert_country(country: str) -> str:
    """An alpha-3 code PBS-Go knows as its alpha-2 code, else the first two bytes."""
    if country in _ALPHA3_TO_ALPHA2:
        return _ALPHA3_TO_ALPHA2[country]
    raw = country.encode()
    return raw[:2].decode(errors="replace") if len(raw) >= 2 else DEFAULT_COUNTRY


def site_endpoint(country: str, endpoint: str, extra: ExtraInfo) -> str:
    """The Huawei site for a country, the configured endpoint without one or with site selection off."""
    if extra.close_site_selection_by_country == "1" or not country or len(country.encode()) > 2:
        return endpoint
    if country == "CN":
        return CHINESE_SITE
    if country == "RU":
        return RUSSIAN_SITE
    return EUROPEAN_SITE if country in _EUROPEAN_COUNTRIES else ASIAN_SITE


def _app(request: Mapping[str, Any], extra: ExtraInfo, country: str) -> dict[str, Any]:
    app = _obj(request, "app")
    if app is None:
        return {"pkgname": "", **_omitempty(country=country)}
    bundle = _str(app, "bundle")
    if not bundle:
        raise _Refused("generate HuaweiAds AppInfo failed: openrtb BidRequest.App.Bundle is empty.")
    lang = _str(_obj(app, "content"), "language") or "en"
    return {
        "pkgname": extra.package_name(bundle),
        **_omitempty(version=_str(app, "ver"), name=_str(app, "name"), lang=lang, country=country),
    }


def _device_ids(device: dict[str, Any], request: Mapping[str, Any], client_time: Callable[[str], str]) -> None:
    """The device ids (and client time) from ``user.ext.data``; without a user ext, ``device.ifa``
    is required."""
    user = _obj(request, "user")
    if user is None or "ext" not in user:
        if not device.get("gaid"):
            raise _Refused("getDeviceID: openRTBRequest.User.Ext is nil and device.Gaid is not specified.")
        return
    try:
        data = expect_object(
            go_fields(expect_object(user["ext"], ""), "data").get("data"), "openrtb_ext.ExtUserDataHuaweiAds.Data"
        )
        ids = {}
        for name, values in go_fields(data, "imei", "oaid", "gaid", "clientTime").items():
            where = f"openrtb_ext.ExtUserDataDeviceIdHuaweiAds.{name[0].upper()}{name[1:]}"
            ids[name] = [value or "" for value in go_value(values, GoKind.STRINGS, where) or ()]
    except JsonShapeError as exc:
        raise _Refused(
            "get gaid from openrtb Device.IFA failed, and get device id failed: Unmarshal "
            f"openRTBRequest.User.Ext -> extUserDataHuaweiAds. Error: {exc}"
        ) from None
    for name in ("oaid", "gaid", "imei"):
        if ids.get(name):
            device[name] = ids[name][0]
    if not any(ids.get(name) for name in ("oaid", "gaid", "imei")) and not device.get("gaid"):
        raise _Refused("getDeviceID: Imei ,Oaid, Gaid are all empty.")
    if ids.get("clientTime"):
        device["clientTime"] = client_time(ids["clientTime"][0])


def _network(device: Mapping[str, Any]) -> dict[str, Any]:
    network: dict[str, Any] = {"type": _int32(_int(device, "connectiontype"))}
    mccmnc = _str(device, "mccmnc")
    parts = mccmnc.split("-")
    if mccmnc and len(parts) >= 2:
        network["carrier"] = _CARRIERS.get(parts[0] + parts[1], 99)
        network["cellInfo"] = [_omitempty(mcc=parts[0], mnc=parts[1])]
    return network


def _geo(device: Mapping[str, Any] | None) -> dict[str, Any]:
    geo = _obj(device, "geo")
    if geo is None:
        return {}
    return _omitempty(
        lon=_float32(_number(geo, "lon")),
        lat=_float32(_number(geo, "lat")),
        accuracy=_int32(_int(geo, "accuracy")),
        lastfix=_int32(_int(geo, "lastfix")),
    )


def _consent(request: Mapping[str, Any]) -> str:
    """``user.ext.consent`` (nothing when the user ext does not decode)."""
    user = _obj(request, "user")
    ext = user.get("ext") if user is not None else None
    if not isinstance(ext, dict):
        return ""
    fields = go_fields(ext, "consent", "prebid", "eids")
    if not isinstance(fields.get("prebid"), dict | None) or not isinstance(fields.get("eids"), list | None):
        return ""
    consent = fields.get("consent")
    return consent if isinstance(consent, str) else ""


def _digest(params: _Params, nonce: str) -> str:
    """The ``Authorization`` header: a digest of the nonce keyed by the publisher's sign key."""
    publisher, key_id = params.publisherid.strip(GO_SPACE), params.keyid.strip(GO_SPACE)
    api_key = f"{publisher}:ppsadx/getResult:{params.signkey.strip(GO_SPACE)}"
    response = hmac.new(api_key.encode(), f"{nonce}:POST:/ppsadx/getResult".encode(), hashlib.sha256).hexdigest()
    return (
        f"Digest username={publisher},realm=ppsadx/getResult,nonce={nonce},response={response},"
        f"algorithm=HmacSHA256,usertype=1,keyid={key_id}"
    )


# --- the answer ------------------------------------------------------------------------------------

_STR, _INT, _FLOAT, _STRS = GoKind.STRING, GoKind.INT, GoKind.FLOAT, GoKind.STRINGS
_IMAGE = {"url": _STR, "height": _INT, "fileSize": _INT, "sha256": _STR, "imageType": _STR, "width": _INT}
_META = {
    "title": _STR, "description": _STR, "imageInfo": [_IMAGE], "icon": [_IMAGE], "clickUrl": _STR, "intent": _STR,
    "videoInfo": {
        "videoDownloadUrl": _STR, "videoDuration": _INT, "videoFileSize": _INT, "sha256": _STR,
        "videoRatio": _FLOAT, "width": _INT, "height": _INT,
    },
    "apkInfo": {
        "url": _STR, "fileSize": _INT, "sha256": _STR, "packageName": _STR, "secondUrl": _STR, "appName": _STR,
        "versionName": _STR, "appDesc": _STR, "appIcon": _STR,
    },
    "duration": _INT,
    "mediaFile": {"mime": _STR, "width": _INT, "height": _INT, "fileSize": _INT, "url": _STR, "sha256": _STR},
    "cta": _STR,
}  # fmt: skip
_CONTENT = {
    "contentid": _STR, "interactiontype": _INT, "creativetype": _INT, "metaData": _META,
    "monitor": [{"eventType": _STR, "url": _STRS}], "cur": _STR, "price": _FLOAT,
}  # fmt: skip
_ANSWER = {
    "retcode": _INT, "reason": _STR,
    "multiad": [{"adtype": _INT, "slotid": _STR, "retcode30": _INT, "content": [_CONTENT]}],
}  # fmt: skip
_ZERO = {_STR: "", _INT: 0, _FLOAT: 0.0, _STRS: None}


def decode_struct(value: Any, schema: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``value`` decoded into a Go struct described by ``schema`` (field -> GoKind, a nested schema
    or ``[schema]`` for a slice): every field present, a zero value when absent or null; a list field
    is None when absent or null. JsonShapeError when a value has the wrong type."""
    fields = go_fields(expect_object(value, where), *schema)
    out: dict[str, Any] = {}
    for name, kind in schema.items():
        item = fields.get(name)
        if isinstance(kind, list):
            items = None if item is None else go_list(item, f"{where}.{name}")
            out[name] = None if items is None else [decode_struct(one, kind[0], name) for one in items]
        elif isinstance(kind, dict):
            out[name] = decode_struct(item, kind, f"{where}.{name}")
        else:
            decoded = go_value(item, kind, f"{where}.{name}")
            if kind is _STRS and decoded is not None:
                decoded = [text or "" for text in decoded]
            out[name] = _ZERO[kind] if decoded is None else decoded
    return out


def go_unescape(text: str) -> str:
    """Go's ``url.QueryUnescape`` (``+`` is a space), "" when it fails (a bad ``%`` escape)."""
    return go_query_unescape(text) or ""


def _unescaped_len(text: str) -> int:
    """The byte length of ``go_unescape``'s result as Go counts it (before invalid bytes are replaced)."""
    if not text or re.search(r"%(?![0-9A-Fa-f]{2})", text):
        return 0
    return len(unquote_to_bytes(text.replace("+", " ")))


def vast_duration(milliseconds: int) -> str:
    """A duration in milliseconds as ``15:04:05.000`` (the time of day it reaches from midnight)."""
    nanos = (milliseconds * 1_000_000 + 2**63) % 2**64 - 2**63  # Go's time.Duration overflows
    of_day = nanos % (86_400 * 10**9)
    seconds, fraction = divmod(of_day, 10**9)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{fraction // 10**6:03d}"


def click_url(content: Mapping[str, Any]) -> str:
    """The click URL: the intent for an app promotion (required), else the click URL or the intent."""
    meta = content["metaData"]
    if content["interactiontype"] == APP_PROMOTION:
        if not meta["intent"]:
            raise _Refused(
                "content.MetaData.Intent in huaweiads resopnse is empty when interactiontype is appPromotion"
            )
        return go_unescape(meta["intent"])
    if meta["clickUrl"]:
        return str(meta["clickUrl"])
    return go_unescape(meta["intent"]) if meta["intent"] else ""


def _monitor_urls(content: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    return [(monitor["eventType"], monitor["url"]) for monitor in content["monitor"] or () if monitor["url"]]


def picture_markup(content: Mapping[str, Any]) -> tuple[str, int, int]:
    """An HTML picture ad: the first image, linked to the click URL, with its impression pixels and a
    script that calls the click trackers."""
    link = click_url(content)
    images = content["metaData"]["imageInfo"]
    if not images:
        raise _Refused("content.MetaData.ImageInfo is empty")
    image = images[0]
    width, height = image["width"], image["height"]
    impressions: list[str] = []
    clicks = ""
    for event, urls in _monitor_urls(content):
        if event == "imp":
            impressions = urls
        elif event == "click":
            clicks = ",".join(f'"{url}"' for url in urls)
    pixels = "".join(f'<img height="1" width="1" src=\'{url}\' >  ' for url in impressions)
    markup = (
        "<style> html, body  { margin: 0; padding: 0; width: 100%; height: 100%; vertical-align: middle; }  "
        "html  { display: table; }  body { display: table-cell; vertical-align: middle; text-align: center; "
        "-webkit-text-size-adjust: none; }  </style> "
        f'<span class="title-link advertiser_label">{go_unescape(content["metaData"]["title"])}</span> '
        f"<a href='{link}' style=\"text-decoration:none\" onclick=sendGetReq()> "
        f"<img src='{image['url']}' width='{width}' height='{height}'/> </a> {pixels}"
        f'<script type="text/javascript">var dspClickTrackings = [{clicks}];'
        "function sendGetReq() {sendSomeGetReq(dspClickTrackings)}"
        "function sendOneGetReq(url) {var req = new XMLHttpRequest();req.open('GET', url, true);req.send(null);}"
        "function sendSomeGetReq(urls) {for (var i = 0; i < urls.length; i++) {sendOneGetReq(urls[i]);}}"
        "</script>"
    )
    return markup, width, height


_VAST_EVENTS = {
    "userclose": "skip&closeLinear", "playStart": "start", "playEnd": "complete", "playResume": "resume",
    "playPause": "pause", "soundClickOff": "mute", "soundClickOn": "unmute",
}  # fmt: skip


def _tracking_events(content: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(error, impression, click tracking, tracking events) VAST elements from the monitors."""
    errors = impressions = clicks = events = ""
    for event, urls in _monitor_urls(content):
        if event == "vastError":
            errors = "".join(f"<Error><![CDATA[{url}&et=[ERRORCODE]]]></Error>" for url in urls)
        elif event == "imp":
            impressions = "".join(f"<Impression><![CDATA[{url}]]></Impression>" for url in urls)
        elif event == "click":
            clicks = "".join(f"<ClickTracking><![CDATA[{url}]]></ClickTracking>" for url in urls)
        elif _VAST_EVENTS.get(event) == "skip&closeLinear":
            events += "".join(
                f'<Tracking event="skip"><![CDATA[{url}]]></Tracking>'
                f'<Tracking event="closeLinear"><![CDATA[{url}]]></Tracking>'
                for url in urls
            )
        elif event in _VAST_EVENTS:
            events += "".join(f'<Tracking event="{_VAST_EVENTS[event]}"><![CDATA[{url}]]></Tracking>' for url in urls)
    return errors, impressions, clicks, events


def _video_file(
    ad_type: int, content: Mapping[str, Any], bid_type: str, imp: Mapping[str, Any]
) -> tuple[str, str, int, int, str]:
    """(mime, URL, width, height, duration) of the video: a roll ad's media file, else its video."""
    meta = content["metaData"]
    if ad_type == ROLL:
        media = meta["mediaFile"]
        if not media["url"]:
            raise _Refused("extract Adm for video failed: Content.MetaData.MediaFile.Url is empty")
        return (
            media["mime"] or "video/mp4",
            media["url"],
            media["width"],
            media["height"],
            vast_duration(meta["duration"]),
        )
    info = meta["videoInfo"]
    if not info["videoDownloadUrl"]:
        raise _Refused("extract Adm for video failed: content.MetaData.VideoInfo.VideoDownloadUrl is empty")
    width, height = info["width"], info["height"]
    if not (width and height):
        if bid_type != "video":
            raise _Refused("extract Adm for video failed: cannot get video width, height")
        video = _obj(imp, "video")
        width, height = (_int(video, "w"), _int(video, "h")) if _int(video, "w") and _int(video, "h") else (0, 0)
    return "video/mp4", info["videoDownloadUrl"], width, height, vast_duration(info["videoDuration"])


def _rewarded_companion(content: Mapping[str, Any], link: str, width: int, height: int) -> str:
    """A rewarded video's end card: the icon, else the first image, with the click URL."""
    meta = content["metaData"]
    for images in (meta["icon"], meta["imageInfo"]):
        if images and images[0]["url"]:
            image = images[0]
            w, h = (image["width"], image["height"]) if image["height"] > 0 and image["width"] > 0 else (width, height)
            break
    else:
        return ""
    ad_id = content["contentid"]
    return (
        f'<Creative adId="{ad_id}" id="{ad_id}"><CompanionAds><Companion width="{w}" height="{h}">'
        f'<StaticResource creativeType="image/png"><![CDATA[{image["url"]}]]></StaticResource>'
        f"<CompanionClickThrough><![CDATA[{link}]]></CompanionClickThrough></Companion></CompanionAds></Creative>"
    )


def video_markup(
    ad_type: int, content: Mapping[str, Any], bid_type: str, imp: Mapping[str, Any]
) -> tuple[str, int, int]:
    """A VAST 3.0 inline ad for the content (with an end card for a rewarded video)."""
    link = click_url(content)
    mime, url, width, height, duration = _video_file(ad_type, content, bid_type, imp)
    errors, impressions, clicks, events = _tracking_events(content)
    companion = _rewarded_companion(content, link, width, height) if ad_type == REWARDED else ""
    ad_id = content["contentid"]
    markup = (
        f'<?xml version="1.0" encoding="UTF-8"?><VAST version="3.0"><Ad id="{ad_id}"><InLine>'
        f"<AdSystem>HuaweiAds</AdSystem><AdTitle>{go_unescape(content['metaData']['title'])}</AdTitle>"
        f'{errors}{impressions}<Creatives><Creative adId="{ad_id}" id="{ad_id}"><Linear>'
        f"<Duration>{duration}</Duration><TrackingEvents>{events}</TrackingEvents>"
        f"<VideoClicks><ClickThrough><![CDATA[{link}]]></ClickThrough>{clicks}</VideoClicks>"
        f'<MediaFiles><MediaFile delivery="progressive" type="{mime}" width="{width}" height="{height}" '
        f'scalable="true" maintainAspectRatio="true"> <![CDATA[{url}]]></MediaFile></MediaFiles>'
        f"</Linear></Creative>{companion}</Creatives></InLine></Ad></VAST>"
    )
    return markup, width, height


def banner_markup(ad_type: int, content: Mapping[str, Any], imp: Mapping[str, Any]) -> tuple[str, int, int]:
    if ad_type not in (BANNER, INTERSTITIAL):
        raise _Refused("openrtb banner should correspond to huaweiads adtype: banner or interstitial")
    creative = content["creativetype"] - 100 if content["creativetype"] > 100 else content["creativetype"]
    if creative in _PICTURE_CREATIVES:
        return picture_markup(content)
    if creative in _VIDEO_CREATIVES:
        return video_markup(ad_type, content, "banner", imp)
    raise _Refused("no banner support creativetype")


def native_markup(ad_type: int, content: Mapping[str, Any], imp: Mapping[str, Any]) -> tuple[str, int, int]:
    """A native 1.x response answering each asset of the imp's native request."""
    if ad_type != NATIVE:
        raise _Refused("extract Adm for Native ad: huaweiads response is not a native ad")
    native = _obj(imp, "native")
    if native is None:
        raise _Refused("extract Adm for Native ad: imp.Native is nil")
    if not _str(native, "request"):
        raise _Refused("extract Adm for Native ad: imp.Native.Request is empty")
    payload = native_payload(native["request"])
    link: dict[str, Any] = {"url": click_url(content)}
    assets, size = _native_assets(ad_type, content, payload, imp)
    trackers = []
    for event, urls in _monitor_urls(content):
        if event == "click":
            link.setdefault("clicktrackers", []).extend(urls)
        elif event == "imp":
            trackers += [{"event": 1, "method": 1, **_omitempty(url=url)} for url in urls]
    result: dict[str, Any] = {"ver": payload["ver"] or "1.1", **_omitempty(assets=assets), "link": link}
    if trackers:
        result["eventtrackers"] = trackers
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"), *size


def _native_assets(
    ad_type: int, content: Mapping[str, Any], payload: Mapping[str, Any], imp: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], tuple[int, int]]:
    meta = content["metaData"]
    images, icons = list(meta["imageInfo"] or ()), list(meta["icon"] or ())
    width = height = 0
    assets = []
    for asset in payload["assets"]:
        answer: dict[str, Any] = {"id": asset["id"]}
        if asset["title"] is not None:
            answer["title"] = _omitempty(text=go_unescape(meta["title"]), len=_unescaped_len(meta["title"]))
            answer["title"].setdefault("text", "")
        elif asset["video"] is not None:
            vast, width, height = video_markup(ad_type, content, "native", imp)
            answer["video"] = {"vasttag": vast}
        elif asset["img"] is not None:
            kind = asset["img"]["type"]
            if not images and kind == _MAIN_IMAGE:
                continue
            source = icons if kind == _ICON_IMAGE else images
            picked = source.pop(0) if source else {"url": "", "width": 0, "height": 0}
            answer["img"] = {
                **_omitempty(type=kind),
                "url": picked["url"],
                **_omitempty(w=picked["width"], h=picked["height"]),
            }
            if not height and not width:
                width, height = picked["width"], picked["height"]
        elif asset["data"] is not None:
            answer["data"] = _native_data(asset["data"]["type"], meta)
        assets.append(answer)
    return assets, (width, height)


def _native_data(kind: int, meta: Mapping[str, Any]) -> dict[str, Any]:
    if kind == _CTA_TEXT:
        return {"type": _CTA_TEXT, "value": go_unescape(meta["cta"])}
    if kind in (_DESC, _DESC2):
        return {"label": "desc", "value": go_unescape(meta["description"])}
    return {"value": ""}


def _status_failure(response: ResponseData) -> BidderError | None:
    if response.status == 204:
        return None
    if response.status == 503:
        return bad_input(
            f"Something went wrong, please contact your Account Manager. Status Code: [ {response.status} ] "
        )
    if response.status != 200:
        return bad_input(f"Unexpected status code: [ {response.status} ]. Run with request.debug = 1 for more info")
    return BidderError("bidderRawResponse body is empty") if not response.body else None


def _retcode_failure(answer: Mapping[str, Any]) -> BidderError | None:
    code = answer["retcode"]
    if code in (200, 206):
        return None
    if code == 204:
        return bad_input(
            f"HuaweiAdsResponse retcode: {code} , reason: The request packet is correct, but no advertisement "
            "was found for this request."
        )
    if 400 <= code < 600 or 200 < code < 300:
        return bad_input(f"HuaweiAdsResponse retcode: {code} , reason: {answer['reason']}")
    return None


def _slot_imps(request: Mapping[str, Any]) -> dict[str, tuple[dict[str, Any], str]]:
    """slot id -> (the imp, its bid type: video, native, audio, else banner); imps whose params do
    not decode are left out, of two with one slot id the later one counts."""
    slots = {}
    for imp in request.get("imp") or ():
        try:
            params = read_params(imp)
        except _Refused:
            continue
        kind = next((kind for kind in ("video", "native", "audio") if imp.get(kind) is not None), "banner")
        slots[params.slotid] = (imp, kind)
    return slots


def _nurl(content: Mapping[str, Any]) -> str:
    return next((urls[0] for event, urls in _monitor_urls(content) if event == "win"), "")


# --- the adapter -----------------------------------------------------------------------------------


def _local_now() -> datetime:
    return datetime.now().astimezone()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class HuaweiAdsAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.extra = read_extra_info(str(config.extra.get("extra_info") or ""))
        self.now: Callable[[], datetime] = _local_now  # the clock: client times and nonces

    def client_time(self, given: str) -> str:
        """``given`` when it is ``yyyy-mm-dd hh:mm:ss.SSS±zzzz`` (the zone added when it has none),
        else the time now in that format, local zone."""
        now = self.now()
        zone = now.strftime("%z")
        zone = zone if _ZONE.fullmatch(zone) else DEFAULT_ZONE
        if _CLIENT_TIME.fullmatch(given[:-5]) and _ZONE.fullmatch(given[-5:]):
            return given
        if _CLIENT_TIME.fullmatch(given):
            return given + zone
        return f"{now:%Y-%m-%d %H:%M:%S}.{now.microsecond // 1000:03d}{zone}"

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        try:
            return [self._call(request)], []
        except _Refused as refused:
            return [], [refused.error]

    def _call(self, request: Mapping[str, Any]) -> RequestData:
        imps = [imp for imp in request.get("imp") or () if isinstance(imp, dict)]
        slots, params = [], None
        for imp in imps:
            params = read_params(imp)
            slots.append(ad_slot(params, imp))
        country = country_code(request)
        body: dict[str, Any] = {
            "version": API_VERSION,
            "multislot": slots,
            "app": _app(request, self.extra, country),
            "device": self._device(request, country),
            "network": _network(request["device"]) if _obj(request, "device") is not None else {"type": 0},
            "regs": _omitempty(coppa=_int32(max(_int(_obj(request, "regs"), "coppa"), 0))),
            "geo": _geo(_obj(request, "device")),
            **_omitempty(consent=_consent(request), clientAdRequestId=_str(request, "id")),
        }
        headers = {"Content-Type": "application/json;charset=utf-8", "Accept": "application/json"}
        if params is not None:
            headers["Authorization"] = _digest(params, TEST_NONCE if params.test else self._nonce())
            if _str(_obj(request, "device"), "ua"):
                headers["User-Agent"] = request["device"]["ua"]
        uri = site_endpoint(country, self.endpoint, self.extra)
        return RequestData("POST", uri, orjson.dumps(body), headers, imp_ids(imps))

    def _nonce(self) -> str:
        return str((self.now() - _EPOCH) // timedelta(milliseconds=1))

    def _device(self, request: Mapping[str, Any], country: str) -> dict[str, Any]:
        source = _obj(request, "device")
        device: dict[str, Any] = {"localeCountry": "", "belongCountry": "", "clientTime": ""}
        if source is not None:
            device.update(
                type=_int32(_int(source, "devicetype")), useragent=_str(source, "ua"), os=_str(source, "os"),
                version=_str(source, "osv"), maker=_str(source, "make"), model=_str(source, "model") or DEFAULT_MODEL,
                height=_int32(_int(source, "h")), width=_int32(_int(source, "w")), language=_str(source, "language"),
                pxratio=_float32(_number(source, "pxratio")), belongCountry=country, localeCountry=country,
                ip=_str(source, "ip"), gaid=_str(source, "ifa"), clientTime=self.client_time(""),
            )  # fmt: skip
        _device_ids(device, request, self.client_time)
        dnt = source.get("dnt") if source is not None else None
        if isinstance(dnt, int) and not isinstance(dnt, bool):
            if device.get("oaid"):
                device["isTrackingEnabled"] = str(1 - dnt)
            if device.get("gaid"):
                device["gaidTrackingEnabled"] = str(1 - dnt)
        always = ("localeCountry", "belongCountry", "clientTime")
        return {key: value for key, value in device.items() if value or key in always}

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        failure = _status_failure(response)
        if failure is not None:
            return None, [failure]
        try:
            answer = decode_struct(orjson.loads(response.body), _ANSWER, "huaweiads.huaweiAdsResponse")
        except (orjson.JSONDecodeError, JsonShapeError):
            return None, [bad_server_response("Unable to parse server response")]
        failure = _retcode_failure(answer)
        if failure is not None:
            return None, [failure]
        try:
            return self._bids(request, answer), []
        except _Refused as refused:
            return None, [refused.error]

    def _bids(self, request: Mapping[str, Any], answer: Mapping[str, Any]) -> BidderResponse:
        if not answer["multiad"]:
            raise _Refused(
                "convert huaweiads response to bidder response failed: multiad length is 0, "
                "get no ads from huawei side."
            )
        slots = _slot_imps(request)
        if not slots:
            raise _Refused("convert huaweiads response to bidder response failed: openRTBRequest.imp is nil")
        result = BidderResponse(currency="CNY")
        for ad in answer["multiad"]:
            imp, kind = slots.get(ad["slotid"], ({}, "banner"))
            imp_id = imp.get("id")
            if not isinstance(imp_id, str) or not imp_id or ad["retcode30"] != 200:
                continue
            for content in ad["content"] or ():
                if content["cur"]:
                    result.currency = content["cur"]
                markup, width, height = _markup(ad["adtype"], content, kind, imp)
                bid = {
                    "id": imp_id,
                    "impid": imp_id,
                    "price": content["price"],
                    "adm": markup,
                    "adomain": ["huaweiads"],
                }
                bid.update(_omitempty(crid=content["contentid"], w=width, h=height, nurl=_nurl(content)))
                result.bids.append(
                    TypedBid({key: value for key, value in bid.items() if value or key == "price"}, kind)
                )
        return result


def _markup(ad_type: int, content: Mapping[str, Any], kind: str, imp: Mapping[str, Any]) -> tuple[str, int, int]:
    """The bid's markup, width and height for its bid type."""
    try:
        if kind == "banner":
            return banner_markup(ad_type, content, imp)
        if kind == "native":
            return native_markup(ad_type, content, imp)
        if kind == "video":
            return video_markup(ad_type, content, kind, imp)
    except _Refused as refused:
        raise _Refused(f"generate Adm field from HuaweiAds response failed: {refused.error.message}") from None
    raise _Refused("no support bidtype: audio")


def build(config: AdapterConfig) -> HuaweiAdsAdapter:
    return HuaweiAdsAdapter(config)
