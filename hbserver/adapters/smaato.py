"""Smaato adapter: one OpenRTB call to ``prebid.ad.smaato.net/oapi/prebid`` per imp and media type,
or, from the video endpoint, one call per ad pod.

Every call carries the request with ``ext`` replaced by ``{"client": "prebid_server_1.2"}``;
``user.ext.data``'s ``gender``, ``yob`` and ``keywords`` moved onto ``user`` (``data`` dropped from
``user.ext``); ``site.ext.data.keywords`` as ``site.keywords`` (``site.ext`` dropped); and the site's
(else the app's, else the DOOH's) ``publisher`` replaced by ``{"id": publisherId}``. A request with
no imps, or whose ``user.ext``/``site.ext`` does not decode, fails as a whole.

Auction: an imp asking for banner, video and native becomes three calls, each imp carrying one of
them, ``adspaceId`` as ``tagid`` and ``imp.ext`` without ``bidder``. Video endpoint: video imps are
grouped by the part of their id before the first ``_``; each pod is one call whose imps all take the
first imp's ``adbreakId`` as ``tagid``, ``video.sequence`` 1, 2, ... and ``video.ext``
``{"context": "adpod"}``, only the first keeping its ``imp.ext`` (without ``bidder``). Params are
read as PBS-Go's jsonparser reads them: exact names, strings only.

Answers: the ``X-Smt-Adtype`` header types every bid (``Img``/``Richmedia`` banner, ``Video``,
``Native``); a banner's ``ext.curls`` wrap its ``adm`` in a ``<div>`` firing them on click, a native
``adm`` is cut down to its ``native`` object. ``exp`` is the seconds left until ``X-Smt-Expires``
(epoch milliseconds, read through ``now``), else 300. The currency is always USD.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from json import JSONDecoder
from typing import Any
from urllib.parse import quote_plus

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
from hbserver.adapters.common import (
    UNEXPECTED_STATUS,
    AnswerWording,
    JsonShapeError,
    expect_object,
    imp_ids,
    json_call,
    json_headers,
)
from hbserver.adapters.golike import (
    GO_HTML_ESCAPES,
    GoKind,
    decode_go_answer,
    go_int,
    go_media_objects,
    go_members,
    go_request_top,
    go_value,
    go_wrap_int,
    json_object_members,
    json_path_string,
    json_space_end,
    set_omitempty,
)
from hbserver.numbers import INT64, int_or

CLIENT_VERSION = "prebid_server_1.2"
VIDEO_ENTRY_POINT = "openrtb2-video"
DEFAULT_TTL = 300

_ANSWER_WORDING = AnswerWording(status=UNEXPECTED_STATUS + ".", bad_request_is_input=False)
_MEDIA_TYPES = ("banner", "video", "native")
_PUBLISHER_OWNERS = ("site", "app", "dooh")
_MARKUP_TYPES = {"Img": "banner", "Richmedia": "banner", "Video": "video", "Native": "native"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)
# Go's json.Marshal of a raw value: whitespace outside strings dropped, HTML characters escaped
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[ \t\n\r]+', re.DOTALL)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid JSON constant {name}")


_DECODER = JSONDecoder(parse_constant=_reject_constant)


class _Refused(ValueError):
    """What stops a call (or the whole request); the message is PBS-Go's bidder error."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


# --- request ---------------------------------------------------------------------------------------


def _user(user: Any) -> Any:
    """``user`` with ``ext.data``'s gender, yob and keywords moved onto it (``data`` dropped from
    ``ext``); ``user`` itself when its ext has no ``data``."""
    if not isinstance(user, dict) or user.get("ext") is None:
        return user
    ext = user["ext"]
    if not isinstance(ext, dict):
        raise _Refused("Invalid user.ext.")
    if "data" not in ext:
        return user
    try:
        data = expect_object(ext["data"], "")
        values: dict[str, Any] = {}
        for name, value in go_members(data, "keywords", "gender", "yob"):
            kind = GoKind.INT if name == "yob" else GoKind.STRING
            if go_value(value, kind, name) is not None:
                values[name] = value
    except JsonShapeError:
        raise _Refused("Invalid user.ext.data.") from None
    out = dict(user)
    for name in ("gender", "yob", "keywords"):
        if values.get(name):
            out[name] = values[name]
    out["ext"] = {key: value for key, value in ext.items() if key != "data"}
    return out


def _site(site: Any) -> Any:
    """``site`` with ``ext.data.keywords`` as its ``keywords`` and no ``ext`` (PBS-Go overwrites the
    keywords even with none); ``site`` itself when it has no ``ext``."""
    if not isinstance(site, dict) or "ext" not in site:
        return site
    keywords = ""
    try:
        for _, data in go_members(expect_object(site["ext"], ""), "data"):
            for _, value in go_members(expect_object(data, ""), "keywords"):
                if go_value(value, GoKind.STRING, "keywords") is not None:
                    keywords = value
    except JsonShapeError:
        raise _Refused("Invalid site.ext.") from None
    out = {key: value for key, value in site.items() if key != "ext"}
    set_omitempty(out, "keywords", keywords)
    return out


def _common_body(request: Mapping[str, Any]) -> dict[str, Any]:
    """What every call carries apart from its imps and publisher."""
    body = go_request_top(request)
    if "user" in body:
        body["user"] = _user(body["user"])
    if "site" in body:
        body["site"] = _site(body["site"])
    body["ext"] = {"client": CLIENT_VERSION}
    return body


def _param(imp: Mapping[str, Any], name: str) -> str | None:
    """``imp.ext.bidder.<name>`` as jsonparser's GetString reads it: the exact key, a string only."""
    try:
        return json_path_string(imp, "ext", "bidder", name)
    except ValueError:
        return None


def _required_param(imp: Mapping[str, Any], name: str) -> str:
    value = _param(imp, name)
    if value is None:
        raise _Refused(f"Missing {name} parameter.")
    return value


def _with_publisher(common: dict[str, Any], publisher_id: str) -> dict[str, Any]:
    """``common`` with the site's (else the app's, else the DOOH's) publisher replaced."""
    for owner in _PUBLISHER_OWNERS:
        holder = common.get(owner)
        if isinstance(holder, dict):
            publisher = {"id": publisher_id} if publisher_id else {}
            return {**common, owner: {**holder, "publisher": publisher}}
    raise _Refused("Missing Site/App/DOOH.")


def _ext_without_bidder(imp: Mapping[str, Any]) -> dict[str, Any] | None:
    """``imp.ext`` without ``bidder``; None when nothing else is left."""
    ext = imp.get("ext")
    rest = {key: value for key, value in ext.items() if key != "bidder"} if isinstance(ext, dict) else None
    return rest or None


class SmaatoAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint
        self.headers = json_headers()
        # the clock ``exp`` is reckoned from (PBS-Go's test fixes it)
        self.now: Callable[[], datetime] = _utc_now

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        if not imps:
            return [], [bad_input("No impressions in bid request.")]
        try:
            common = _common_body(request)
        except _Refused as exc:
            return [], [bad_input(str(exc))]
        if info.entry_point == VIDEO_ENTRY_POINT:
            return self._pod_calls(common, imps)
        return self._imp_calls(common, imps)

    def _imp_calls(
        self, common: dict[str, Any], imps: Iterable[dict[str, Any]]
    ) -> tuple[list[RequestData], list[BidderError]]:
        """One call per imp and media type it asks for."""
        calls: list[RequestData] = []
        errors: list[BidderError] = []
        for imp in imps:
            kinds = [kind for kind in _MEDIA_TYPES if imp.get(kind) is not None]
            if not kinds:
                errors.append(bad_input("Invalid MediaType. Smaato only supports Banner, Video and Native."))
                continue
            for kind in kinds:
                try:
                    body = _with_publisher(common, _required_param(imp, "publisherId"))
                    adspace = _required_param(imp, "adspaceId")
                except _Refused as exc:
                    errors.append(bad_input(str(exc)))
                    continue
                one = {key: value for key, value in imp.items() if key == kind or key not in _MEDIA_TYPES}
                set_omitempty(one, "ext", _ext_without_bidder(imp))
                set_omitempty(one, "tagid", adspace)
                calls.append(self._call(body, [go_media_objects(one)]))
        return calls, errors

    def _pod_calls(
        self, common: dict[str, Any], imps: Iterable[dict[str, Any]]
    ) -> tuple[list[RequestData], list[BidderError]]:
        """One call per ad pod: the video imps whose ids share the part before the first ``_``."""
        errors: list[BidderError] = []
        pods: dict[str, list[dict[str, Any]]] = {}
        for imp in imps:
            if imp.get("video") is None:
                errors.append(bad_input("Invalid MediaType. Smaato only supports Video for AdPod."))
                continue
            pods.setdefault(str(imp.get("id", "")).split("_", 1)[0], []).append(imp)
        calls: list[RequestData] = []
        for pod in pods.values():
            first = pod[0]
            try:
                body = _with_publisher(common, _required_param(first, "publisherId"))
                adbreak = _required_param(first, "adbreakId")
            except _Refused as exc:
                errors.append(bad_input(str(exc)))
                continue
            built = []
            for index, imp in enumerate(pod):
                one = {key: value for key, value in imp.items() if key != "ext"}
                set_omitempty(one, "tagid", adbreak)
                video = {**imp["video"], "ext": {"context": "adpod"}}
                set_omitempty(video, "sequence", go_wrap_int(index + 1, 8))
                one["video"] = video
                built.append(go_media_objects(one))
            set_omitempty(built[0], "ext", _ext_without_bidder(first))
            calls.append(self._call(body, built))
        return calls, errors

    def _call(self, body: dict[str, Any], imps: list[dict[str, Any]]) -> RequestData:
        body["imp"] = imps
        return json_call(self.endpoint, body, imp_ids(imps), self.headers)

    # --- answer ------------------------------------------------------------------------------------

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        answer, failure = decode_go_answer(response, _ANSWER_WORDING)
        if answer is None:
            return None, failure
        markup = _header(response.headers, "x-smt-adtype")
        if not markup:
            return None, [bad_server_response("X-Smt-Adtype header is missing.")]
        bid_type = _MARKUP_TYPES.get(markup)
        ttl = self._ttl(response.headers)
        result = BidderResponse()
        errors: list[BidderError] = []
        for bid in answer.bids:
            try:
                duration, curls = _bid_ext(bid.get("ext"))
                if bid_type is None:
                    raise _Refused(f"Unknown markup type {markup}.")
                adm = bid.get("adm", "")
                if bid_type == "banner":
                    adm = _banner_markup(adm, curls)
                elif bid_type == "native":
                    adm = _native_markup(adm)
            except _Refused as exc:
                errors.append(bad_server_response(str(exc)))
                continue
            set_omitempty(bid, "adm", adm)
            set_omitempty(bid, "exp", ttl)
            video = None
            if bid_type == "video":
                categories = bid.get("cat") or [""]
                video = {"duration": duration, "primary_category": categories[0] or ""}
            result.bids.append(TypedBid(bid, bid_type, bid_video=video))
        return result, errors

    def _ttl(self, headers: Mapping[str, str]) -> int:
        """Seconds until ``X-Smt-Expires`` (epoch milliseconds; never below 0), else 300. Go's int64
        arithmetic: the difference wraps and the division truncates."""
        expires = int_or(_header(headers, "x-smt-expires"), None, INT64)  # strconv.ParseInt(s, 10, 64)
        if expires is None:
            return DEFAULT_TTL
        now = (self.now() - _EPOCH) // _MILLISECOND
        left = go_wrap_int(expires - now)
        return left // 1000 if left > 0 else 0


def _header(headers: Mapping[str, str], name: str) -> str:
    """A response header's value, its name (given in lower case) matched case-insensitively."""
    value = headers.get(name)
    if value is not None:
        return value
    for key, value in headers.items():
        if key.lower() == name:
            return value or ""
    return ""


def _bid_ext(ext: Any) -> tuple[int, list[str]]:
    """(``duration``, ``curls``) of a bid's ext as PBS-Go decodes them: a null duration keeps the
    one read before, a null ``curls`` empties the list, a null tracker is ""."""
    duration, curls = 0, []
    try:
        for name, value in go_members(expect_object(ext, ""), "duration", "curls"):
            if name == "curls":
                curls = [url or "" for url in go_value(value, GoKind.STRINGS, name) or ()]
            elif value is not None:
                duration = go_int(value, name)
    except JsonShapeError:
        raise _Refused("Invalid bid.ext.") from None
    return duration, curls


def _banner_markup(adm: str, curls: list[str]) -> str:
    """``adm`` in a ``<div>`` that fetches every click tracker on click (as given without any)."""
    if not curls:
        return adm
    clicks = "".join(
        f"fetch(decodeURIComponent('{quote_plus(url, safe='')}'.replace(/\\+/g, ' ')), {{cache: 'no-cache'}});"
        for url in curls
    )
    return f'<div style="cursor:pointer" onclick="{clicks}">{adm}</div>'


def _native_markup(adm: str) -> str:
    """The ``native`` member of ``adm`` (a JSON object, or null) as Go re-encodes it: compact, its
    HTML characters escaped; ``null`` when there is none."""
    try:
        raw = _native_member(adm)
    except (ValueError, IndexError):
        raise _Refused(f"Invalid ad markup {adm}.") from None
    if raw is None:
        return "null"
    return _JSON_TOKEN.sub(_compact_token, raw)


def _compact_token(match: re.Match[str]) -> str:
    token = match.group()
    return token.translate(GO_HTML_ESCAPES) if token[0] == '"' else ""


def _native_member(text: str) -> str | None:
    """The raw text of the last member of the JSON object ``text`` named ``native`` in any case
    (Go's field matching), None when it has none or ``text`` is null; ValueError (or IndexError)
    when ``text`` is not a JSON object or null."""
    index = json_space_end(text, 0)
    raw = None
    if text.startswith("null", index):
        index += 4
    elif text[index] != "{":
        raise ValueError("not an object")
    else:
        last = index + 1  # past the last member (or the brace): the closing brace follows
        for key, start, last in json_object_members(text, index, _DECODER):
            if key.lower() == "native":
                raw = text[start:last]
        index = json_space_end(text, last) + 1
    if json_space_end(text, index) != len(text):
        raise ValueError("data after the value")
    return raw


def build(config: AdapterConfig) -> SmaatoAdapter:
    return SmaatoAdapter(config)
