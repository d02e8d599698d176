"""Ad Generation adapter (PBS-Go ``adapters/adgeneration``): not OpenRTB on the wire.

One GET per imp, no body: the endpoint with its query replaced by the imp's location ``id`` and the
request's facts (currency, banner sizes, SDK type by device OS, page, transaction id, app bundle and
name, the advertising id) encoded as Go's ``url.Values`` (keys sorted); any imp whose params fail
stops the request. The answer is Ad Generation's own JSON: one ad for the imp whose location id it
names, turned into a banner bid (a VAST ad wrapped in its video player, the beacon put before
``</body>``, the ``<body>`` wrapper taken off); its currency is the request's (JPY first).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.common import PLAIN_BODY_WORDING, JsonShapeError, OwnAnswerAdapter, expect_object
from hbserver.adapters.golike import GO_SPACE, go_field, go_fields, go_json_object, go_list
from hbserver.adapters.steps import HEADER_SETS, ParamsSpec, decode_kind

VERSION = "1.0.3"
DEFAULT_CURRENCY = "JPY"
NO_LOCATION = "No Location ID in ExtImpAdgeneration."
_PARAMS = ParamsSpec("openrtb_ext.ExtImpAdgeneration", {"id": ("Id", "string")}, null_is_absent=True)
_SDK_TYPES = {"android": "1", "ios": "2"}
_AD_IDS = {"ios": "idfa", "android": "advertising_id"}
# adgServerResponse: json name -> (Go field, kind); Cpm's tag is misspelt in Go, so its name matches
_ANSWER = {
    "locationid": ("Locationid", "string"), "dealid": ("Dealid", "string"), "ad": ("Ad", "string"),
    "beacon": ("Beacon", "string"), "beaconurl": ("Beaconurl", "string"), "cpm": ("Cpm", "float64"),
    "creativeid": ("Creativeid", "string"), "h": ("H", "uint64"), "w": ("W", "uint64"),
    "ttl": ("Ttl", "uint64"), "vastxml": ("Vastxml", "string"), "landing_url": ("LandingUrl", "string"),
    "scheduleid": ("Scheduleid", "string"),
}  # fmt: skip
_PLAYER = '<script type="text/javascript" id="apv" src="https://cdn.apvdr.com/js/VideoAd.min.js"></script>'
_BODY_END = re.compile(r"</[\t\n\f\r ]?body>")  # Go's RE2 \s: no \v
_VAST_NEWLINE = re.compile(r"/\r?\n/g")  # a JavaScript regex literal Go reads as plain text
_GO_TEMPLATE_NAME = re.compile(r"\$(?:\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")


def location_id(imp: Mapping[str, Any]) -> str:
    """The imp's location id; JsonShapeError (json-iterator's or the adapter's words) when its
    params do not decode or name none."""
    location = _PARAMS.read(imp)["id"]
    if not location:
        raise JsonShapeError(NO_LOCATION)
    return str(location)


def _text(request: Mapping[str, Any], holder: str, name: str) -> str:
    """A string field of one of the request's objects, its names matched as Go matches them."""
    place = go_field(request, holder)
    value = go_field(place, name) if isinstance(place, Mapping) else None
    return value if isinstance(value, str) else ""


def currency(request: Mapping[str, Any]) -> str:
    """JPY when the request allows it or names none, else its first currency."""
    allowed = [cur for cur in request.get("cur") or () if isinstance(cur, str)]
    return DEFAULT_CURRENCY if not allowed or DEFAULT_CURRENCY in allowed else allowed[0]


def sizes(imp: Mapping[str, Any]) -> str:
    """The banner's formats as ``WxH`` joined by commas ("" without any)."""
    banner = imp.get("banner")
    formats = banner.get("format") if isinstance(banner, Mapping) else None
    return ",".join(f"{size.get('w') or 0}x{size.get('h') or 0}" for size in formats or () if isinstance(size, Mapping))


def query(location: str, request: Mapping[str, Any], imp: Mapping[str, Any]) -> dict[str, str]:
    """The call's query parameters (those with an empty value left out, as Go sets them)."""
    os_name = _text(request, "device", "os")
    values = {
        "posall": "SSPLOC", "id": location, "hb": "true", "t": "json3", "currency": currency(request),
        "sdkname": "prebidserver", "adapterver": VERSION, "sizes": sizes(imp),
        "sdktype": _SDK_TYPES.get(os_name, "0"),
        "tp": _text(request, "site", "page"), "transactionid": _text(request, "source", "tid"),
        "appbundle": _text(request, "app", "bundle"), "appname": _text(request, "app", "name"),
    }  # fmt: skip
    if os_name in _AD_IDS:
        values[_AD_IDS[os_name]] = _text(request, "device", "ifa")
    return {name: value for name, value in values.items() if value}


def with_query(endpoint: str, values: Mapping[str, str]) -> str:
    """``endpoint`` with its query replaced by ``values`` as ``url.Values.Encode`` writes them."""
    return urlunsplit(urlsplit(endpoint)._replace(query=urlencode(sorted(values.items()))))


def _go_expand(template: str, match: re.Match[str]) -> str:
    """Go's ``Regexp.Expand`` of a replacement with no groups: ``$0`` is the match, ``$$`` a dollar,
    any other ``$name``/``${name}`` nothing, a ``$`` naming nothing itself."""
    out, index = [], 0
    while (dollar := template.find("$", index)) >= 0:
        out.append(template[index:dollar])
        if template.startswith("$$", dollar):
            out.append("$")
            index = dollar + 2
            continue
        name = _GO_TEMPLATE_NAME.match(template, dollar)
        if name is None:
            out.append("$")
            index = dollar + 1
            continue
        out.append(match.group(0) if (name.group(1) or name.group(2)) == "0" else "")
        index = name.end()
    return "".join(out) + template[index:]


def create_ad(answer: Mapping[str, Any], imp_id: str) -> str:
    """The bid's markup: the ad (or the VAST player), the beacon before ``</body>``, unwrapped."""
    ad = answer["ad"]
    if answer["vastxml"]:
        vast = _VAST_NEWLINE.sub("", answer["vastxml"])
        call = f"new APV.VideoAd({{s:\"{imp_id}\"}}).load('{vast}');"
        load = f'<script type="text/javascript"> (function(){{ {call} }})(); </script>'
        ad = f'<body><div id="apvad-{imp_id}"></div>{_PLAYER}{load}</body>'
    ad = _BODY_END.sub(lambda match: _go_expand(answer["beacon"] + "</body>", match), ad)
    start, end = ad.find("<body>"), ad.rfind("</body>")
    if start < 0 or end < 0:
        return ad
    inner = ad[start:end].replace("<body>", "", 1).replace("</body>", "", 1).strip(GO_SPACE)
    return inner or ad


def read_answer(body: bytes) -> dict[str, Any]:
    """The answer as Go decodes ``adgServerResponse``; JsonShapeError (json-iterator's words)."""
    data = go_json_object(body)
    fields = go_fields(expect_object(data, ""), *_ANSWER, "results") if data is not None else {}
    out: dict[str, Any] = {}
    for name, (go_name, kind) in _ANSWER.items():
        value = decode_kind(fields.get(name), kind, f"adgeneration.adgServerResponse.{go_name}")
        out[name] = value if value is not None else ("" if kind == "string" else 0)
    out["results"] = go_list(fields.get("results"), "adgeneration.adgServerResponse.Results")
    return out


def _bid(answer: Mapping[str, Any], imp_id: str) -> dict[str, Any]:
    bid = {"id": answer["locationid"], "impid": imp_id, "price": answer["cpm"], "adm": create_ad(answer, imp_id)}
    fields = {"w": answer["w"], "h": answer["h"], "crid": answer["creativeid"], "dealid": answer["dealid"]}
    bid.update((name, value) for name, value in fields.items() if value)
    return bid


class AdgenerationAdapter(OwnAnswerAdapter):
    answer_wording = PLAIN_BODY_WORDING

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impression in the bid request")]
        headers: dict[str, str] = {}
        for name in ("json", "user_agent", "ip"):
            HEADER_SETS[name](headers, request)
        calls = []
        for imp in imps:
            try:
                uri = with_query(self.endpoint, query(location_id(imp), request, imp))
            except (JsonShapeError, ValueError) as exc:
                return [], [bad_input(str(exc))]
            calls.append(RequestData("GET", uri, None, headers, [imp.get("id", "")]))
        return calls, []

    def read_body(self, body: bytes) -> dict[str, Any]:
        """The answer as ``read_answer`` reads it."""
        return read_answer(body)

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer = data
        if not answer["results"]:
            return None, []
        for imp in request.get("imp") or ():
            try:
                location = location_id(imp)
            except JsonShapeError as exc:
                return None, [bad_server_response(str(exc))]
            if location == answer["locationid"]:
                bid = TypedBid(_bid(answer, imp.get("id", "")), "banner")
                return BidderResponse([bid], currency(request)), []
        return None, []


def build(config: AdapterConfig) -> AdgenerationAdapter:
    return AdgenerationAdapter(config.endpoint)
