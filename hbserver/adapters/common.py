"""What several adapters share: PBS-Go's status-code errors and each adapter's wording of a failed
answer (``PUBLISHER_WORDING``: the adapter template's), json-iterator's wording for input of the
wrong JSON shape (the fixtures' expected error texts), optional string params, JSON calls with
Go-canonical header names, bid types from ``mtype`` or from the imp, make_bids' outcome from bids
typed one by one (``typed_bid_response``), banners sized by their first format, endpoint macros
and floors in another currency."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from hbserver.adapters.base import (
    JSON_HEADERS,
    MTYPE_TO_TYPE,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
    bad_input,
    bad_server_response,
)
from hbserver.adapters.gourl import go_url_scheme_host

UNEXPECTED_STATUS = "Unexpected status code: {}. Run with request.debug = 1 for more info"


@dataclass(frozen=True, slots=True)
class AnswerWording:
    """How an adapter words a failed answer: PBS-Go's adapters each have their own texts and error
    classes for a failure status, a body that is not JSON and a body that is not a JSON object."""

    status: str = UNEXPECTED_STATUS  # a failure status; {} is the status
    bad_request: str | None = None  # a 400's own text (None: ``status``'s)
    bad_request_is_input: bool = True  # False: a 400 is reported like any other failure status
    status_error: Callable[[str], BidderError] = bad_server_response  # the error for a failure status but 400
    bad_json: str = "Bad response body: {}"  # a body that is not JSON; {} is the parser's message
    not_an_object: str = "Bad response body: not a JSON object"  # {found}: json-iterator's "but found"
    body_text: str = "{}"  # the words around either text for a body that does not decode
    body_error: Callable[[str], BidderError] = bad_server_response  # the error for a body that does not decode

    def status_failure(self, status: int) -> list[BidderError] | None:
        """None for 200 (the body is read); what make_bids answers otherwise: no error for 204 (no
        bids), else the one error."""
        if status == 200:
            return None
        if status == 204:
            return []
        if status == 400 and self.bad_request_is_input:
            return [bad_input(self.bad_request or self.status.format(400))]
        return [self.status_error(self.status.format(status))]

    def body_failure(self, problem: str) -> BidderError:
        """The error for a body that does not decode, ``problem`` saying why."""
        return self.body_error(self.body_text.format(problem))


DEFAULT_WORDING = AnswerWording()
# PBS-Go's adapter template (outbrain, taboola, limelightdigital, richaudience...): a sentence with a
# full stop, a 400 blamed on the publisher
BAD_REQUEST_FROM_PUBLISHER = (
    "Unexpected status code: 400. Bad request from publisher. Run with request.debug = 1 for more info."
)
# ...and the body error json-iterator's own, unclassified
PUBLISHER_WORDING = AnswerWording(
    status=UNEXPECTED_STATUS + ".", bad_request=BAD_REQUEST_FROM_PUBLISHER, body_error=BidderError
)


def status_error(status: int) -> BidderError | None:
    """None for 200 and 204; 400 is bad input, anything else a bad server response (PBS's usual text)."""
    failure = DEFAULT_WORDING.status_failure(status)
    return failure[0] if failure else None


def decode_answer(
    response: ResponseData, wording: AnswerWording = DEFAULT_WORDING
) -> tuple[dict[str, Any] | None, list[BidderError]]:
    """A bidder's OpenRTB answer as a JSON object: (None, []) for 204, (None, [error]) for a failure
    status or a body that is not a JSON object, each error worded and classed by ``wording``."""
    failure = wording.status_failure(response.status)
    if failure is not None:
        return None, failure
    try:
        data = orjson.loads(response.body)
    except orjson.JSONDecodeError as exc:
        return None, [wording.body_failure(wording.bad_json.format(exc))]
    if not isinstance(data, dict):
        return None, [wording.body_failure(wording.not_an_object.format(found=found(data)))]
    return data, []


class AnswerAdapter:
    """The opening most adapters' ``make_bids`` share: the answer decoded with ``answer_wording``
    (None and the failure for 204, a failure status or a body that is not a JSON object), else what
    the adapter's own :meth:`bids_from` makes of the decoded answer."""

    answer_wording: AnswerWording = DEFAULT_WORDING

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        data, failure = decode_answer(response, self.answer_wording)
        if data is None:
            return None, failure
        return self.bids_from(request, call, data)

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: dict[str, Any]
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        """The bids in a decoded answer (``data``, a JSON object): each adapter's own part."""
        raise NotImplementedError


# PBS's usual status errors; a body that does not decode reported in the decoder's words, unclassified
PLAIN_BODY_WORDING = AnswerWording(body_error=BidderError)


class OwnAnswerAdapter:
    """``make_bids`` for an answer in the bidder's own shape: a status other than 200 worded by
    ``answer_wording`` (204: no bids), the body read by the adapter's :meth:`read_body` (a
    JsonShapeError it raises worded by ``answer_wording.body_failure``), then :meth:`bids_from`."""

    answer_wording: AnswerWording = DEFAULT_WORDING

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        failure = self.answer_wording.status_failure(response.status)
        if failure is not None:
            return None, failure
        try:
            data = self.read_body(response.body)
        except JsonShapeError as exc:
            return None, [self.answer_wording.body_failure(str(exc))]
        return self.bids_from(request, call, data)

    def read_body(self, body: bytes) -> Any:
        """The answer's body decoded; JsonShapeError (the text reported) when it does not decode."""
        raise NotImplementedError

    def bids_from(
        self, request: dict[str, Any], call: RequestData, data: Any
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        """The bids in what :meth:`read_body` made of the body: each adapter's own part."""
        raise NotImplementedError


class Refusal(Exception):
    """What an adapter will not send or keep (an imp, a call, a bid); ``error`` is the bidder error
    PBS-Go reports for it. Adapters subclass it for their own catch sites."""

    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


class JsonShapeError(ValueError):
    """Input of the wrong JSON shape; the message is PBS-Go's (json-iterator's) text."""


def found(value: Any) -> str:
    """The first character of ``value`` as JSON text (json-iterator's "but found" character)."""
    if isinstance(value, str):
        return '"'
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, list):
        return "["
    if isinstance(value, dict):
        return "{"
    return str(value)[:1]


def expect_object(value: Any, where: str) -> dict[str, Any]:
    """A JSON object field (null = empty); anything else fails as json-iterator words it."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    prefix = f"cannot unmarshal {where}: " if where else ""
    raise JsonShapeError(f"{prefix}expect {{ or n, but found {found(value)}")


def optional_object(value: Any, where: str) -> dict[str, Any] | None:
    """:func:`expect_object`, but null stays None: a Go pointer to a struct or a
    ``map[string]interface{}``, where absent and empty differ."""
    return None if value is None else expect_object(value, where)


def expect_string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise JsonShapeError(f'cannot unmarshal {where}: expects " or n, but found {found(value)}')


def string_param(params: Mapping[str, Any], name: str, error: type[Exception], where: str) -> str:
    """The string param ``name`` ("" when absent or null); any other value raises
    ``error("<where>: <name> must be a string")``."""
    value = params.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise error(f"{where}: {name} must be a string")
    return value


def canonical_header(name: str) -> str:
    """Go's canonical form of a header name (``x-openrtb-version`` -> ``X-Openrtb-Version``): the
    fixtures compare request headers by that form."""
    if not name or not all(c.isalnum() or c == "-" for c in name):
        return name
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))


def with_header(headers: dict[str, str], name: str, value: Any) -> None:
    """Set ``name`` (canonicalised) unless ``value`` is empty or None; numbers become text."""
    if value is None or value == "":
        return
    headers[canonical_header(name)] = value if isinstance(value, str) else str(value)


def json_headers(**extra: Any) -> dict[str, str]:
    """PBS's usual ``Content-Type``/``Accept`` pair plus ``extra`` (keyword ``_`` reads as ``-``)."""
    headers = dict(JSON_HEADERS)
    for name, value in extra.items():
        with_header(headers, name.replace("_", "-"), value)
    return headers


def json_call(
    uri: str, body: Any, imp_ids: Iterable[str], headers: Mapping[str, str] | None = None, method: str = "POST"
) -> RequestData:
    """One HTTP call carrying ``body`` as JSON."""
    return RequestData(
        method, uri, orjson.dumps(body), JSON_HEADERS if headers is None else headers, imp_ids=list(imp_ids)
    )


def imp_ids(imps: Iterable[Mapping[str, Any]]) -> list[str]:
    return [imp.get("id", "") for imp in imps]


def mtype_bid_type(bid: Mapping[str, Any]) -> str | None:
    """The media type OpenRTB 2.6 ``mtype`` names (1 banner, 2 video, 3 audio, 4 native), else None."""
    return MTYPE_TO_TYPE.get(bid.get("mtype"))  # type: ignore[arg-type]


IMP_TYPE_ORDER = ("banner", "video", "native", "audio")
BANNER_VIDEO_NATIVE = ("banner", "video", "native")


def first_media_type(imp: Mapping[str, Any], order: Iterable[str] = IMP_TYPE_ORDER) -> str | None:
    """The first media type in ``order`` that ``imp`` asks for; None when it asks for none of them."""
    for kind in order:
        if imp.get(kind) is not None:
            return kind
    return None


def imp_bid_type(imps: Iterable[Mapping[str, Any]], imp_id: Any, order: Iterable[str] = IMP_TYPE_ORDER) -> str | None:
    """The first media type in ``order`` the imp with ``imp_id`` asks for; None when no imp has that
    id or it asks for none of them (callers word their own error, as PBS adapters do)."""
    for imp in imps:
        if imp.get("id") == imp_id:
            return first_media_type(imp, order)
    return None


def any_imp_bid_type(
    imps: Iterable[Mapping[str, Any]], imp_id: Any, order: Iterable[str] = IMP_TYPE_ORDER
) -> str | None:
    """Like ``imp_bid_type``, but an imp with ``imp_id`` that asks for none of the types in ``order``
    is passed over for a later one with that id (PBS-Go's loops that only stop at a match)."""
    kinds = tuple(order)
    for imp in imps:
        if imp.get("id") == imp_id:
            kind = first_media_type(imp, kinds)
            if kind is not None:
                return kind
    return None


def typed_by_imp(
    imps: Iterable[Mapping[str, Any]], missing: Callable[[str], BidderError], order: Iterable[str] = IMP_TYPE_ORDER
) -> Callable[[dict[str, Any]], TypedBid | BidderError]:
    """A ``typed`` for ``golike.typed_bids``: a bid typed by its imp (``any_imp_bid_type``), else the
    error ``missing`` makes of its ``impid``."""
    imp_list, kinds = list(imps), tuple(order)

    def typed(bid: dict[str, Any]) -> TypedBid | BidderError:
        kind = any_imp_bid_type(imp_list, bid.get("impid"), kinds)
        return missing(bid.get("impid", "")) if kind is None else TypedBid(bid, kind)

    return typed


def typed_as(
    kind_of: Callable[[dict[str, Any]], str | BidderError],
) -> Callable[[dict[str, Any]], TypedBid | BidderError]:
    """A ``typed`` for ``typed_bid_response``/``golike.typed_bids`` from an adapter's rule that
    gives a bid's media type or the error it reports for the bid."""

    def typed(bid: dict[str, Any]) -> TypedBid | BidderError:
        kind = kind_of(bid)
        return kind if isinstance(kind, BidderError) else TypedBid(bid, kind)

    return typed


def typed_catching(
    kind_of: Callable[[dict[str, Any]], str], *failures: type[Exception]
) -> Callable[[dict[str, Any]], TypedBid | BidderError]:
    """A ``typed`` from a rule that raises one of ``failures`` for a bid it cannot type: that bid is
    reported with the exception's text, unclassified, as PBS-Go's ``errors.New(err.Error())``."""

    def typed(bid: dict[str, Any]) -> TypedBid | BidderError:
        try:
            return TypedBid(bid, kind_of(bid))
        except failures as exc:
            return BidderError(str(exc))

    return typed


def with_video_facts(
    outcome: tuple[BidderResponse | None, list[BidderError]], facts: Callable[[dict[str, Any]], dict[str, Any]]
) -> tuple[BidderResponse | None, list[BidderError]]:
    """make_bids' ``outcome`` with each video bid's ``bid_video`` set to ``facts`` of the bid (the
    other bids get none), for adapters that fill PBS-Go's ``BidVideo`` for video bids alone."""
    result, _ = outcome
    for typed in result.bids if result is not None else ():
        if typed.bid_type == "video":
            typed.bid_video = facts(typed.bid)
    return outcome


def imp_not_in_request(imp_id: str) -> BidderError:
    """PBS-Go's words (admatic, onetag, flatads, pwbid) for a bid whose imp the request lacks."""
    return bad_server_response(f"The impression with ID {imp_id} is not present into the request")


def banner_sized_by_first_format(banner: Mapping[str, Any]) -> dict[str, Any] | None:
    """The banner with ``w``/``h`` of its first format (a size the format lacks is 0, a format that is
    no object is 0x0), its formats kept; None when it has no format list or an empty one."""
    formats = banner.get("format")
    if not isinstance(formats, list) or not formats:
        return None
    first = formats[0] if isinstance(formats[0], Mapping) else {}
    return {**banner, "w": first.get("w", 0), "h": first.get("h", 0)}


def banner_taking_first_format(banner: Mapping[str, Any]) -> dict[str, Any] | None:
    """A banner with neither ``w`` nor ``h`` given its first format's size, that format leaving the
    list (an emptied list left out); a banner with either kept as it is; None when it needs a size
    and has no format."""
    if banner.get("w") is not None or banner.get("h") is not None:
        return dict(banner)
    formats = banner.get("format")
    if not isinstance(formats, list) or not formats:
        return None
    first = formats[0] if isinstance(formats[0], Mapping) else {}
    out = {key: value for key, value in banner.items() if key != "format"}
    out.update(w=first.get("w") or 0, h=first.get("h") or 0)
    if len(formats) > 1:
        out["format"] = formats[1:]
    return out


def page_is_https(request: Mapping[str, Any]) -> bool:
    """Whether ``site.page`` parses (as Go's ``url.Parse``) with the scheme https."""
    site = request.get("site")
    page = site.get("page") if isinstance(site, Mapping) else None
    parsed = go_url_scheme_host(page) if isinstance(page, str) and page else None
    return parsed is not None and parsed[0] == "https"


def items_of(value: Any) -> list[Any]:
    """A JSON array's items; anything else (null, an object, a number) has none."""
    return value if isinstance(value, list) else []


def seat_bids(seatbid: Any) -> list[Any]:
    """The ``bid`` items of a ``seatbid`` entry (none when either has the wrong shape)."""
    return items_of(seatbid.get("bid")) if isinstance(seatbid, dict) else []


def answer_bids(answer: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(seatbid, bid) for every bid object of an OpenRTB answer; entries of the wrong shape are skipped."""
    seatbids = answer.get("seatbid")
    for seatbid in seatbids if isinstance(seatbids, list) else ():
        if not isinstance(seatbid, dict):
            continue
        bids = seatbid.get("bid")
        for bid in bids if isinstance(bids, list) else ():
            if isinstance(bid, dict):
                yield seatbid, bid


def typed_bid_response(
    bids: Iterable[Any],
    typed: Callable[[Any], TypedBid | BidderError | None],
    currency: str = "USD",
    *,
    first_error_fails: bool = False,
) -> tuple[BidderResponse | None, list[BidderError]]:
    """make_bids' outcome for ``bids``, each as ``typed`` takes it on its own: a TypedBid is kept, a
    BidderError reported and the bid skipped, None skipped silently. With ``first_error_fails`` the
    first error is the whole outcome (None, [error]), as PBS-Go adapters that return on it do."""
    result = BidderResponse(currency=currency)
    errors: list[BidderError] = []
    for bid in bids:
        outcome = typed(bid)
        if isinstance(outcome, TypedBid):
            result.bids.append(outcome)
        elif outcome is not None:
            if first_error_fails:
                return None, [outcome]
            errors.append(outcome)
    return result, errors


def app_display_manager_version(request: Mapping[str, Any]) -> str:
    """``<source>-<version>`` from ``app.ext.prebid`` when both are strings, else "": what the Prebid
    SDKs fill there stands in for ``imp.displaymanagerver`` (appnexus, msft, connatix)."""
    app = request.get("app")
    ext = app.get("ext") if isinstance(app, dict) else None
    prebid = ext.get("prebid") if isinstance(ext, dict) else None
    if not isinstance(prebid, dict):
        return ""
    source, version = prebid.get("source"), prebid.get("version")
    return f"{source}-{version}" if isinstance(source, str) and isinstance(version, str) else ""


def resolve_macros(template: str, values: Mapping[str, str]) -> str:
    """PBS endpoint macros: each ``{{.Name}}`` replaced by ``values[Name]`` as given (callers escape
    what Go escapes); a macro without a value becomes empty, as Go's template does."""
    out = template
    start = out.find("{{.")
    while start != -1:
        end = out.find("}}", start)
        if end == -1:
            break
        name = out[start + 3 : end].strip()
        value = values.get(name, "")
        out = out[:start] + value + out[end + 2 :]
        start = out.find("{{.", start + len(value))
    return out


def floor_in_usd(imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
    """``imp`` with a positive ``bidfloor`` in another currency converted to USD (a new dict, with
    ``bidfloorcur: USD``); ``imp`` itself when it has no positive floor, no currency or USD already.
    Raises ConversionError (PBS-Go's text) when there is no rate."""
    floor, currency = imp.get("bidfloor"), imp.get("bidfloorcur")
    if not isinstance(floor, int | float) or isinstance(floor, bool) or floor <= 0:
        return imp
    if not isinstance(currency, str) or not currency or currency.upper() == "USD":
        return imp
    return {**imp, "bidfloor": info.convert_currency(floor, currency, "USD"), "bidfloorcur": "USD"}
