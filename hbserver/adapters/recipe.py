"""Adapters as recipes: a bidder whose PBS-Go adapter is a composition of steps that many share is a
data file, ``hbserver/adapters/recipes/<code>.yaml``, not a module (see the README's "Adding a
bidder"). The steps live in :mod:`hbserver.adapters.steps`, each with its own table test.

A recipe names, for the calls (``make_requests``):

* ``params``: the bidder's params struct as PBS-Go decodes it (Go struct name, fields with their Go
  names and kinds), so a param of the wrong type fails in json-iterator's words;
* ``split``: ``per_imp`` (one call per imp, the request with that imp alone), ``all`` (one call
  with every imp whose params decode), ``first_imp`` (one call with the whole request, its endpoint
  and the rewrite from the first imp's params; with ``imp_checks``, the imps that fail them dropped
  first) or ``by_params`` (one call per distinct params);
* ``on_bad_imp``: ``drop`` an imp whose params fail (its error kept), ``abort`` (no call, that
  error alone), ``refuse`` (no call when any imp fails, every failed imp's error) or ``ignore``
  (dropped without an error);
  ``errors_with_calls``: false when the errors of dropped imps are let go once any call is made;
  ``same_param``: a param every sent imp must share with the first (else it fails, worded by
  ``mixed_params_error``, ``{}`` its value; one publisher per call);
  ``checks``: rules the params must pass (``PARAM_CHECKS``);
* ``endpoint``: Go template macros filled from the params (``{Host: env}``), else the configured
  endpoint as it is; ``required: true`` refuses an empty configured endpoint at build time;
  ``format``: the URI as Go's Sprintf makes it (``{endpoint}``, ``{param}``, ``{Macro}``: a macro's
  text); ``default``: the
  endpoint when none is configured;
* ``imp_ext``: how the imp's ``ext`` is rewritten (a step of ``IMP_EXT_REWRITES``; ``imp_ext_param``:
  the param a rewrite reads, e.g. the stored request id of ``stored_request``); ``imp_rewrites``:
  further rewrites of the imp (``IMP_REWRITES``, e.g. a banner sized from its format); ``tagid``: the
  param that becomes ``imp.tagid``; ``floors``: ``usd`` converts a floor in another currency;
  ``floor_param``: a positive param that becomes the floor of an imp without one;
* ``headers``: header sets (``HEADER_SETS``); ``param_headers``: headers filled from the (first)
  imp's params (``{X-Partner: publisherId}``); ``header_values``: fixed headers every call carries
  (``{Prebid-Adapter-Ver: 1.0.0}``, set after the header sets); ``publisher_id``: the param that becomes the
  publisher id of the request's app, else its site (``with_publisher_id``); ``body``: ``typed`` (the
  top level and the imps as Go's typed structs) or ``go_typed`` (the whole request, all the way down);
* ``imp_checks``: rules the imp itself must pass before its params are read (``IMP_CHECKS``);
  ``request_checks``: rules the request must pass, else no call (``REQUEST_CHECKS``);
  ``call_imp_ids``: ``request`` when each call names every imp id of the request (Go's ids taken
  before the split);
* the wording of an imp that is dropped (``imp_ext_error``, ``params_error``; ``{}`` the problem,
  ``{index}`` the imp's position, ``{id}`` its id; ``absent``: the text for an absent ext or
  bidder) and of a request that yields no call (``no_calls_error``; ``no_imps_error`` for one
  without imps); ``request_sets``: top-level fields the request is sent with (``{cur: [USD]}``);

and for the answer (``make_bids``): the status and body wording and what a 204 is (``answer``), whether an answer
without seatbids is an error (``empty_seatbid_error``; ``empty_bids_error``: one whose first seatbid has no
bids; ``seatbid_count_error``: one without exactly one seatbid, ``{}`` the count), how a bid is
typed (``bid_type``), what an
untyped bid costs (``untyped``: the answer, the bid alone, ``skip``: the bid, silently, or
``answer_all``: the answer, every untyped bid reported; a bid dropped for its ext counts too), the
currency (``currency``), how each bid is rewritten (``bid_rewrites``, ``BID_REWRITES``), its video
facts and meta (``bid_video``, ``BID_VIDEO``; ``bid_meta``, ``BID_META``; a bid whose ext does not
decode dropped, ``bid_ext_error``), ``seatbids: first`` (only the first seatbid's bids are read),
``skip_bids`` (bids let go silently, ``BID_SKIPS``) and whether an answer left without bids is no
answer (``empty_answer: none``; ``quiet``: no answer and no errors; ``first_seatbid``: one whose
first seatbid has no bids; ``no_seatbid``: one without seatbids).

A module may build a :class:`RecipeAdapter` and override one step when the rest is shared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple, Self

import yaml

from hbserver.adapters import recipe_path
from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ConversionError,
    ErrorCode,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.common import JsonShapeError, floor_in_usd, json_call
from hbserver.adapters.golike import (
    ABSENT_OBJECT,
    GoAnswer,
    ImpExtError,
    go_media_objects,
    go_request_top,
    go_typed_request,
    set_omitempty,
)
from hbserver.adapters.steps import (
    BID_META,
    BID_REWRITES,
    BID_SKIPS,
    BID_VIDEO,
    ERROR_CLASSES,
    HEADER_SETS,
    IMP_EXT_REWRITES,
    IMP_REWRITES,
    REQUEST_CHECKS,
    AnswerSpec,
    BidTyper,
    EndpointSpec,
    ImpCheck,
    ParamCheck,
    ParamsSpec,
    StepError,
    UntypedBid,
    checked_text,
    error_class_name,
    macro_text,
    with_publisher_id,
)
from hbserver.auction.request.ortb_schema import STRUCTS

SPLITS = ("per_imp", "all", "first_imp", "by_params")
ON_BAD_IMP = ("drop", "abort", "refuse", "ignore")  # refuse: any bad imp, no call (every bad imp's error)
# ignore: the bad imp dropped without an error
FLOORS = ("keep", "usd", "usd_first")  # usd_first: converted before the params are read
# an answer left without bids: an empty response, or none; first_seatbid: none when the first seatbid has no bids
# quiet: none, and the errors of the untyped bids let go too
# no_seatbid: none when the answer has no seatbid at all
EMPTY_ANSWERS = ("response", "none", "first_seatbid", "quiet", "no_seatbid")
# an untyped bid fails the whole answer, or only itself; skip: silently; answer_all: no answer, every
# untyped bid reported
UNTYPED = ("answer", "bid", "skip", "answer_all")
CURRENCIES = ("answer", "usd")
BODIES = ("typed", "go_typed")  # the top level and imps as Go's typed structs, or all the way down


# openrtb2.BidRequest's and openrtb2.Imp's fields: Go's typed re-encoding drops any other key
_REQUEST_FIELDS = frozenset(name for name, _, _ in STRUCTS["openrtb2.BidRequest"])
_IMP_FIELDS = frozenset(name for name, _, _ in STRUCTS["openrtb2.Imp"])


def typed_imp(imp: Mapping[str, Any]) -> dict[str, Any]:
    """An imp as PBS-Go's typed ``openrtb2.Imp`` writes it again: its own fields alone, the media
    objects' required fields written."""
    return go_media_objects({key: value for key, value in imp.items() if key in _IMP_FIELDS})


def typed_top(request: Mapping[str, Any]) -> dict[str, Any]:
    """The request's top level as PBS-Go's typed ``openrtb2.BidRequest`` writes it (its own fields,
    zero-valued omitempty scalars left out)."""
    return go_request_top({key: value for key, value in request.items() if key in _REQUEST_FIELDS})


RecipeError = StepError  # a recipe file that names an unknown step or has a value of the wrong shape


@dataclass(frozen=True, slots=True)
class Worded:
    """An error text (``{}`` = the underlying problem) and its PBS-Go error class; ``absent``: the
    text instead when the problem is an absent object (Go's ``len(imp.Ext) == 0`` checks)."""

    text: str = "{}"
    code: ErrorCode = ErrorCode.UNKNOWN
    absent: str | None = None

    def error(self, problem: str = "", index: int = 0, imp_id: Any = "") -> BidderError:
        text = self.absent if self.absent is not None and problem == ABSENT_OBJECT else self.text
        return BidderError(text.format(problem, index=index, id=imp_id), self.code)

    @classmethod
    def of(cls, data: Any, where: str) -> Worded | None:
        """``"text"`` or ``{text, class, absent}`` (class: bad_input | bad_server_response | generic)."""
        if data is None:
            return None
        if isinstance(data, str):
            worded = cls(data)
        elif isinstance(data, Mapping) and isinstance(data.get("text"), str):
            absent = data.get("absent")
            worded = cls(
                data["text"], _error_class(data.get("class", "generic"), where), None if absent is None else str(absent)
            )
        else:
            raise RecipeError(f"{where}: expected a text or {{text, class}}, got {data!r}")
        for text in (worded.text, worded.absent or ""):
            checked_text(text, where, "", index=0, id="")
        return worded


def _error_class(name: Any, where: str) -> ErrorCode:
    return ERROR_CLASSES[error_class_name(name, where)]


def _choice(data: Mapping[str, Any], key: str, options: Mapping[str, Any] | tuple[str, ...], default: str) -> str:
    value = data.get(key, default)
    if value not in options:
        raise RecipeError(f"{key}: unknown value {value!r} (one of {sorted(options)})")
    return str(value)


@dataclass(frozen=True)
class Recipe:
    """One adapter's steps (see the module docstring); :meth:`of` reads it from a recipe file's data."""

    params: ParamsSpec
    split: str = "per_imp"
    on_bad_imp: str = "drop"
    errors_with_calls: bool = True
    same_param: str = ""
    mixed_params_error: Worded = Worded()
    checks: tuple[ParamCheck, ...] = ()
    imp_checks: tuple[ImpCheck, ...] = ()
    request_checks: tuple[ImpCheck, ...] = ()
    call_imp_ids: str = "call"
    endpoint: EndpointSpec = field(default_factory=EndpointSpec)
    imp_ext: str = "keep"
    imp_ext_param: str = ""
    imp_rewrites: tuple[str, ...] = ()
    tagid: str = ""
    publisher_id: str = ""
    param_headers: Mapping[str, str] = field(default_factory=dict)
    header_values: Mapping[str, str] = field(default_factory=dict)
    body: str = "typed"
    request_sets: Mapping[str, Any] = field(default_factory=dict)
    floors: str = "keep"
    floor_param: str = ""
    headers: tuple[str, ...] = ("json",)
    imp_ext_error: Worded = Worded()
    params_error: Worded = Worded()
    no_calls_error: Worded | None = None
    no_imps_error: Worded | None = None
    answer: AnswerSpec = field(default_factory=AnswerSpec)
    empty_seatbid_error: Worded | None = None
    empty_bids_error: Worded | None = None  # the first seatbid has no bids
    seatbid_count_error: Worded | None = None  # not exactly one seatbid ({} = how many)
    bid_type: BidTyper = field(default_factory=BidTyper)
    untyped: str = "answer"
    currency: str = "answer"
    bid_rewrites: tuple[str, ...] = ()
    seatbids: str = "all"
    skip_bids: tuple[str, ...] = ()
    bid_video: str = ""
    bid_meta: str = ""
    bid_ext_error: Worded = Worded()
    empty_answer: str = "response"

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Recipe:
        unknown = set(data) - _RECIPE_KEYS
        if unknown:
            raise RecipeError(f"unknown recipe keys {sorted(unknown)}")
        headers = _names(data, "headers", HEADER_SETS, ("json",))
        params = ParamsSpec.of(data.get("params") or {})
        endpoint = EndpointSpec.of(data.get("endpoint") or {})
        if endpoint.format:
            fills = dict.fromkeys([*params.fields, *endpoint.macros], "")
            checked_text(endpoint.format, "endpoint.format", endpoint="", **fills)
        checks, imp_checks = data.get("checks") or [], data.get("imp_checks") or []
        request_checks = data.get("request_checks") or []
        if not all(isinstance(rules, list) for rules in (checks, imp_checks, request_checks)):
            raise RecipeError("checks, imp_checks, request_checks: expected a list")
        return cls(
            params=params,
            split=_choice(data, "split", SPLITS, "per_imp"),
            on_bad_imp=_choice(data, "on_bad_imp", ON_BAD_IMP, "drop"),
            errors_with_calls=bool(data.get("errors_with_calls", True)),
            same_param=str(data.get("same_param") or ""),
            mixed_params_error=Worded.of(data.get("mixed_params_error"), "mixed_params_error") or Worded(),
            checks=tuple(ParamCheck.of(check) for check in checks),
            imp_checks=tuple(ImpCheck.of(check) for check in imp_checks),
            request_checks=tuple(ImpCheck.of(check, "request_checks", REQUEST_CHECKS) for check in request_checks),
            call_imp_ids=_choice(data, "call_imp_ids", ("call", "request"), "call"),
            endpoint=endpoint,
            imp_ext=_choice(data, "imp_ext", IMP_EXT_REWRITES, "keep"),
            imp_ext_param=str(data.get("imp_ext_param") or ""),
            imp_rewrites=_names(data, "imp_rewrites", IMP_REWRITES, ()),
            tagid=str(data.get("tagid") or ""),
            publisher_id=str(data.get("publisher_id") or ""),
            param_headers=_param_headers(data.get("param_headers") or {}),
            header_values=_texts(data.get("header_values") or {}, "header_values"),
            body=_choice(data, "body", BODIES, "typed"),
            request_sets=_mapping(data.get("request_sets") or {}, "request_sets"),
            floors=_choice(data, "floors", FLOORS, "keep"),
            floor_param=str(data.get("floor_param") or ""),
            headers=headers,
            imp_ext_error=Worded.of(data.get("imp_ext_error"), "imp_ext_error") or Worded(),
            params_error=Worded.of(data.get("params_error"), "params_error") or Worded(),
            no_calls_error=Worded.of(data.get("no_calls_error"), "no_calls_error"),
            no_imps_error=Worded.of(data.get("no_imps_error"), "no_imps_error"),
            answer=AnswerSpec.of(data.get("answer") or {}),
            empty_seatbid_error=Worded.of(data.get("empty_seatbid_error"), "empty_seatbid_error"),
            empty_bids_error=Worded.of(data.get("empty_bids_error"), "empty_bids_error"),
            seatbid_count_error=Worded.of(data.get("seatbid_count_error"), "seatbid_count_error"),
            bid_type=BidTyper.of(data.get("bid_type") or {}),
            untyped=_choice(data, "untyped", UNTYPED, "answer"),
            currency=_choice(data, "currency", CURRENCIES, "answer"),
            bid_rewrites=_names(data, "bid_rewrites", BID_REWRITES, ()),
            seatbids=_choice(data, "seatbids", ("all", "first"), "all"),
            skip_bids=_names(data, "skip_bids", BID_SKIPS, ()),
            bid_video=_choice(data, "bid_video", {"": None, **BID_VIDEO}, ""),
            bid_meta=_choice(data, "bid_meta", {"": None, **BID_META}, ""),
            bid_ext_error=Worded.of(data.get("bid_ext_error"), "bid_ext_error") or Worded(),
            empty_answer=_choice(data, "empty_answer", EMPTY_ANSWERS, "response"),
        )


def _mapping(data: Any, key: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise RecipeError(f"{key}: expected a mapping")
    return dict(data)


def _texts(data: Any, key: str) -> dict[str, str]:
    """A mapping of names to texts (``header_values``)."""
    if not isinstance(data, Mapping) or not all(isinstance(v, str) for v in data.values()):
        raise RecipeError(f"{key}: expected Name: text")
    return {str(name): value for name, value in data.items()}


def _param_headers(data: Any) -> dict[str, str]:
    if not isinstance(data, Mapping) or not all(isinstance(v, str) for v in data.values()):
        raise RecipeError("param_headers: expected Header: param names")
    return {str(header): param for header, param in data.items()}


def _names(data: Mapping[str, Any], key: str, table: Mapping[str, Any], default: tuple[str, ...]) -> tuple[str, ...]:
    """A list of step names from ``table``."""
    names = data.get(key, default)
    if not isinstance(names, list | tuple):
        raise RecipeError(f"{key}: expected a list of names")
    for name in names:
        if name not in table:
            raise RecipeError(f"{key}: unknown step {name!r} (one of {sorted(table)})")
    return tuple(names)


_RECIPE_KEYS = frozenset(Recipe.__dataclass_fields__)


@cache
def load_recipe(code: str) -> Recipe | None:
    """The recipe of a built-in adapter code, None when it has no recipe file."""
    path = recipe_path(code)
    if not path.is_file():
        return None
    try:
        return Recipe.of(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except RecipeError as exc:
        raise RecipeError(f"{path.name}: {exc}") from None


class Prepared(NamedTuple):
    """An imp as the bidder gets it, the endpoint of its call and its params as decoded."""

    imp: dict[str, Any]
    uri: str
    params: Mapping[str, Any]

    @property
    def group(self) -> str:
        """The key of ``by_params``: imps with equal params go in one call."""
        return repr(sorted(self.params.items()))


class RecipeAdapter:
    """An adapter run from a :class:`Recipe`."""

    def __init__(self, recipe: Recipe, config: AdapterConfig) -> None:
        if recipe.endpoint.required and not config.endpoint:
            raise ValueError("endpoint is empty")  # PBS-Go's builder refuses it
        self.recipe = recipe
        self.endpoint = config.endpoint
        self.bidder = config.bidder

    @classmethod
    def of_code(cls, code: str, config: AdapterConfig) -> Self:
        """The adapter run from ``recipes/<code>.yaml`` (a module's ``build``); LookupError without one."""
        recipe = load_recipe(code)
        if recipe is None:
            raise LookupError(f"no recipe for {code!r}")
        return cls(recipe, config)

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        recipe = self.recipe
        imps = list(request.get("imp") or ())
        if not imps and recipe.no_imps_error is not None:
            return [], [recipe.no_imps_error.error()]
        for check in recipe.request_checks:
            failure = check.failure(request, REQUEST_CHECKS)
            if failure is not None:
                return [], [failure]
        abort = recipe.on_bad_imp == "abort" or recipe.split == "first_imp"
        errors: list[BidderError] = []
        if recipe.split == "first_imp" and recipe.imp_checks:  # the first imp that passes them rules
            imps = self.checked_imps(imps, errors)
            request = {**request, "imp": imps}
        prepared: list[Prepared] = []
        for index, imp in enumerate(imps[:1] if recipe.split == "first_imp" else imps):
            try:
                prepared.append(self.same_params(self.prepare_imp(imp, info, index), prepared))
            except DroppedImp as dropped:
                if abort:
                    return [], [dropped.error]
                if recipe.on_bad_imp != "ignore":
                    errors.append(dropped.error)
        if errors and recipe.on_bad_imp == "refuse":
            return [], errors
        if not prepared:
            if recipe.no_calls_error is not None:
                errors.append(recipe.no_calls_error.error())
            return [], errors
        return self.calls(request, prepared), errors if recipe.errors_with_calls else []

    def same_params(self, one: Prepared, prepared: list[Prepared]) -> Prepared:
        """``one`` when its ``same_param`` is the first prepared imp's (or none is set); else DroppedImp."""
        name = self.recipe.same_param
        if name and prepared and one.params.get(name) != prepared[0].params.get(name):
            raise DroppedImp(self.recipe.mixed_params_error.error(macro_text(one.params.get(name))))
        return one

    def checked_imps(self, imps: list[Any], errors: list[BidderError]) -> list[Any]:
        """The imps that pass the recipe's ``imp_checks``; the others' errors added to ``errors``."""
        kept = []
        for imp in imps:
            failure = next(filter(None, (check.failure(imp) for check in self.recipe.imp_checks)), None)
            if failure is None:
                kept.append(imp)
            else:
                errors.append(failure)
        return kept

    def calls(self, request: Mapping[str, Any], prepared: list[Prepared]) -> list[RequestData]:
        """The calls of the recipe's ``split`` for the imps that are sent."""
        split = self.recipe.split
        if split == "per_imp":
            return [self.call(request, [one]) for one in prepared]
        if split == "first_imp":
            more = [typed_imp(self.rewritten_imp(imp)) for imp in request["imp"][1:]]
            return [self.call(request, prepared[:1], more)]
        groups: dict[str, list[Prepared]] = {}
        for one in prepared:
            groups.setdefault(one.group if split == "by_params" else "", []).append(one)
        return [self.call(request, group) for group in groups.values()]

    def call(self, request: Mapping[str, Any], group: list[Prepared], more: list[Any] | None = None) -> RequestData:
        """One call with the ``group``'s imps (then ``more``, sent as they are) to its first imp's
        endpoint: the request's publisher id and the param headers from that imp's params."""
        recipe, params = self.recipe, group[0].params
        imps = [one.imp for one in group] + (more or [])
        if recipe.publisher_id:
            request = with_publisher_id(request, macro_text(params.get(recipe.publisher_id)))
        body = {**typed_top(request), **recipe.request_sets, "imp": imps}
        if recipe.body == "go_typed":
            body = go_typed_request(body)
        headers = self.headers(request)
        headers.update(recipe.header_values)
        for header, param in recipe.param_headers.items():
            headers[header] = macro_text(params.get(param))
        ids = _ids(request.get("imp") or ()) if recipe.call_imp_ids == "request" else _ids(imps)
        return json_call(group[0].uri, body, ids, headers)

    def prepare_imp(self, imp: dict[str, Any], info: RequestInfo, index: int = 0) -> Prepared:
        """The imp as the bidder gets it and the endpoint of its call; DroppedImp (worded by the
        recipe) when it fails a check, its ext or params do not decode or its floor cannot be converted."""
        recipe = self.recipe
        for imp_check in recipe.imp_checks:
            failure = imp_check.failure(imp)
            if failure is not None:
                raise DroppedImp(failure)
        if recipe.floors == "usd_first":
            imp = self.floored(imp, info)
        params = self.read_params(imp, index)
        out = self.rewritten_imp(IMP_EXT_REWRITES[recipe.imp_ext](imp, params, recipe.imp_ext_param))
        if recipe.tagid:
            out = dict(out)
            set_omitempty(out, "tagid", macro_text(params.get(recipe.tagid)))
        floor = params.get(recipe.floor_param) if recipe.floor_param else None
        if isinstance(floor, int | float) and floor > 0 and not out.get("bidfloor"):
            out = {**out, "bidfloor": floor}
        if recipe.floors == "usd":
            out = self.floored(out, info)
        uri = recipe.endpoint.resolve(self.endpoint, params)
        return Prepared(typed_imp(out), uri, params)

    def read_params(self, imp: Mapping[str, Any], index: int) -> dict[str, Any]:
        """The imp's params, checked; DroppedImp in the recipe's words."""
        recipe, imp_id = self.recipe, imp.get("id", "")
        try:
            params = recipe.params.read(imp)
        except ImpExtError as exc:
            raise DroppedImp(recipe.imp_ext_error.error(str(exc), index, imp_id)) from None
        except JsonShapeError as exc:
            raise DroppedImp(recipe.params_error.error(str(exc), index, imp_id)) from None
        for check in recipe.checks:
            failure = check.failure(params)
            if failure is not None:
                raise DroppedImp(failure)
        return params

    def imps_with_params(
        self, request: Mapping[str, Any], errors: list[BidderError], kinds: tuple[str, ...] = ()
    ) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """(imp, params) for each imp of the request whose params read (:meth:`read_params`), in
        order; with ``kinds``, an imp asking for none of those media types is let go silently. An
        imp whose params do not read is left out, its error added to ``errors``."""
        for index, imp in enumerate(request.get("imp") or ()):
            if kinds and all(imp.get(kind) is None for kind in kinds):
                continue
            try:
                params = self.read_params(imp, index)
            except DroppedImp as dropped:
                errors.append(dropped.error)
                continue
            yield imp, params

    # how an imp's floor is priced (``common.floor_in_usd``; orbidder's in EUR); ConversionError without a rate
    floor_rule: Callable[[dict[str, Any], RequestInfo], dict[str, Any]] = staticmethod(floor_in_usd)

    def floored(self, imp: dict[str, Any], info: RequestInfo) -> dict[str, Any]:
        """The imp with its floor priced by ``floor_rule``; DroppedImp (PBS-Go's conversion error)
        without a rate."""
        try:
            return self.floor_rule(imp, info)
        except ConversionError as exc:
            raise DroppedImp(BidderError(str(exc))) from None

    def rewritten_imp(self, imp: dict[str, Any]) -> dict[str, Any]:
        """The imp after the recipe's ``imp_rewrites`` (every imp sent, with ``first_imp`` the others too)."""
        for name in self.recipe.imp_rewrites:
            imp = IMP_REWRITES[name](imp)
        return imp

    def headers(self, request: Mapping[str, Any]) -> dict[str, str]:
        headers: dict[str, str] = {}
        for name in self.recipe.headers:
            HEADER_SETS[name](headers, request)
        return headers

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        recipe = self.recipe
        if response.status == 204 and recipe.answer.no_content == "response":
            return BidderResponse(), []
        answer, failure = recipe.answer.decode(response)
        if answer is None:
            return None, failure
        if recipe.empty_seatbid_error is not None and not answer.seatbids:
            return None, [recipe.empty_seatbid_error.error()]
        if recipe.empty_bids_error is not None and answer.seatbids and not answer.seatbids[0][1]:
            return None, [recipe.empty_bids_error.error()]
        if recipe.seatbid_count_error is not None and len(answer.seatbids) != 1:
            return None, [recipe.seatbid_count_error.error(str(len(answer.seatbids)))]
        if recipe.empty_answer == "first_seatbid" and not (answer.seatbids and answer.seatbids[0][1]):
            return None, []
        if recipe.empty_answer == "no_seatbid" and not answer.seatbids:
            return None, []
        return self.typed_bids(request, answer)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        recipe = self.recipe
        result = BidderResponse(currency=(answer.cur or "USD") if recipe.currency == "answer" else "USD")
        errors: list[BidderError] = []
        bids = answer.seatbids[0][1] if recipe.seatbids == "first" and answer.seatbids else answer.bids
        for bid in bids:
            if any(BID_SKIPS[name](bid) for name in recipe.skip_bids):
                continue
            for name in recipe.bid_rewrites:
                bid = BID_REWRITES[name](bid)
            try:
                bid_type = recipe.bid_type.type_of(bid, request)
            except UntypedBid as exc:
                if recipe.untyped == "answer":
                    return None, [exc.error]
                if recipe.untyped in ("bid", "answer_all"):
                    errors.append(exc.error)
                continue
            try:
                video = BID_VIDEO[recipe.bid_video](bid) if recipe.bid_video else None
                meta = BID_META[recipe.bid_meta](bid) if recipe.bid_meta else None
            except JsonShapeError as exc:
                errors.append(recipe.bid_ext_error.error(str(exc)))
                continue
            result.bids.append(TypedBid(bid, bid_type, bid_video=video, bid_meta=meta))
        if errors and recipe.untyped == "answer_all":
            return None, errors
        if not result.bids and recipe.empty_answer in ("none", "quiet"):
            return None, [] if recipe.empty_answer == "quiet" else errors
        return result, errors


class DroppedImp(Exception):
    """An imp that gets no call (``prepare_imp``); ``error`` says why, in the adapter's words."""

    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def _ids(imps: Any) -> list[str]:
    return [imp.get("id", "") for imp in imps]


def build_from_recipe(code: str, config: AdapterConfig) -> RecipeAdapter | None:
    """The adapter for ``code`` when it has a recipe file, else None."""
    recipe = load_recipe(code)
    return None if recipe is None else RecipeAdapter(recipe, config)
