"""Adapters as recipes: a bidder whose PBS-Go adapter is a composition of steps that many share is a
data file, ``hbserver/adapters/recipes/<code>.yaml``, not a module (see the README's "Adding a
bidder"). The steps live in :mod:`hbserver.adapters.steps`, each with its own table test.

A recipe names, for the calls (``make_requests``):

* ``params``: the bidder's params struct as PBS-Go decodes it (Go struct name, fields with their Go
  names and kinds), so a param of the wrong type fails in json-iterator's words;
* ``split``: ``per_imp`` (one call per imp, the request with that imp alone) or ``all`` (one call
  with every imp whose params decode);
* ``endpoint``: Go template macros filled from the params (``{Host: env}``), else the configured
  endpoint as it is;
* ``imp_ext``: how the imp's ``ext`` is rewritten (a step of ``IMP_EXT_REWRITES``);
* ``headers``: header sets (``HEADER_SETS``);
* the wording of an imp that is dropped (``imp_ext_error``, ``params_error``) and of a request
  that yields no call (``no_calls_error``);

and for the answer (``make_bids``): the status and body wording (``answer``), whether an answer
without seatbids is an error (``empty_seatbid_error``), how a bid is typed (``bid_type``), what an
untyped bid costs (``untyped``: the answer or the bid alone) and the currency (``currency``).

A module may build a :class:`RecipeAdapter` and override one step when the rest is shared.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

from hbserver.adapters import recipe_path
from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    ErrorCode,
    RequestData,
    RequestInfo,
    ResponseData,
    TypedBid,
)
from hbserver.adapters.common import JsonShapeError, json_call
from hbserver.adapters.golike import GoAnswer, ImpExtError, decode_go_answer, go_media_objects, go_request_top
from hbserver.adapters.steps import (
    ERROR_CLASSES,
    HEADER_SETS,
    IMP_EXT_REWRITES,
    AnswerSpec,
    BidTyper,
    EndpointSpec,
    ParamsSpec,
    StepError,
    UntypedBid,
)

SPLITS = ("per_imp", "all")
UNTYPED = ("answer", "bid")  # an untyped bid fails the whole answer, or only itself
CURRENCIES = ("answer", "usd")


RecipeError = StepError  # a recipe file that names an unknown step or has a value of the wrong shape

@dataclass(frozen=True, slots=True)
class Worded:
    """An error text (``{}`` = the underlying problem) and its PBS-Go error class."""

    text: str = "{}"
    code: ErrorCode = ErrorCode.UNKNOWN

    def error(self, problem: str = "") -> BidderError:
        return BidderError(self.text.format(problem), self.code)

    @classmethod
    def of(cls, data: Any, where: str) -> Worded | None:
        """``"text"`` or ``{text, class}`` (class: bad_input | bad_server_response | generic)."""
        if data is None:
            return None
        if isinstance(data, str):
            return cls(data)
        if isinstance(data, Mapping) and isinstance(data.get("text"), str):
            return cls(data["text"], _error_class(data.get("class", "generic"), where))
        raise RecipeError(f"{where}: expected a text or {{text, class}}, got {data!r}")


def _error_class(name: Any, where: str) -> ErrorCode:
    if name not in ERROR_CLASSES:
        raise RecipeError(f"{where}: unknown error class {name!r} (one of {sorted(ERROR_CLASSES)})")
    return ERROR_CLASSES[name]


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
    endpoint: EndpointSpec = field(default_factory=EndpointSpec)
    imp_ext: str = "keep"
    headers: tuple[str, ...] = ("json",)
    imp_ext_error: Worded = Worded()
    params_error: Worded = Worded()
    no_calls_error: Worded | None = None
    answer: AnswerSpec = field(default_factory=AnswerSpec)
    empty_seatbid_error: Worded | None = None
    bid_type: BidTyper = field(default_factory=BidTyper)
    untyped: str = "answer"
    currency: str = "answer"

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Recipe:
        unknown = set(data) - _RECIPE_KEYS
        if unknown:
            raise RecipeError(f"unknown recipe keys {sorted(unknown)}")
        headers = tuple(data.get("headers", ("json",)))
        for name in headers:
            if name not in HEADER_SETS:
                raise RecipeError(f"headers: unknown header set {name!r} (one of {sorted(HEADER_SETS)})")
        return cls(
            params=ParamsSpec.of(data.get("params") or {}),
            split=_choice(data, "split", SPLITS, "per_imp"),
            endpoint=EndpointSpec.of(data.get("endpoint") or {}),
            imp_ext=_choice(data, "imp_ext", IMP_EXT_REWRITES, "keep"),
            headers=headers,
            imp_ext_error=Worded.of(data.get("imp_ext_error"), "imp_ext_error") or Worded(),
            params_error=Worded.of(data.get("params_error"), "params_error") or Worded(),
            no_calls_error=Worded.of(data.get("no_calls_error"), "no_calls_error"),
            answer=AnswerSpec.of(data.get("answer") or {}),
            empty_seatbid_error=Worded.of(data.get("empty_seatbid_error"), "empty_seatbid_error"),
            bid_type=BidTyper.of(data.get("bid_type") or {}),
            untyped=_choice(data, "untyped", UNTYPED, "answer"),
            currency=_choice(data, "currency", CURRENCIES, "answer"),
        )


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


class RecipeAdapter:
    """An adapter run from a :class:`Recipe`."""

    def __init__(self, recipe: Recipe, config: AdapterConfig) -> None:
        self.recipe = recipe
        self.endpoint = config.endpoint
        self.bidder = config.bidder

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        recipe = self.recipe
        errors: list[BidderError] = []
        prepared: list[tuple[dict[str, Any], str]] = []  # (the imp as sent, its endpoint)
        for imp in request.get("imp") or ():
            try:
                prepared.append(self.prepare_imp(imp))
            except _DroppedImp as dropped:
                errors.append(dropped.error)
        if not prepared:
            if recipe.no_calls_error is not None:
                errors.append(recipe.no_calls_error.error())
            return [], errors
        headers = self.headers(request)
        top = go_request_top(request)
        if recipe.split == "all":
            imps = [imp for imp, _ in prepared]
            return [json_call(prepared[0][1], {**top, "imp": imps}, _ids(imps), headers)], errors
        return [json_call(uri, {**top, "imp": [imp]}, _ids((imp,)), headers) for imp, uri in prepared], errors

    def prepare_imp(self, imp: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The imp as the bidder gets it and the endpoint of its call; _DroppedImp (worded by the
        recipe) when its ext or params do not decode."""
        recipe = self.recipe
        try:
            params = recipe.params.read(imp)
        except ImpExtError as exc:
            raise _DroppedImp(recipe.imp_ext_error.error(str(exc))) from None
        except JsonShapeError as exc:
            raise _DroppedImp(recipe.params_error.error(str(exc))) from None
        uri = recipe.endpoint.resolve(self.endpoint, params)
        return go_media_objects(IMP_EXT_REWRITES[recipe.imp_ext](imp, params)), uri

    def headers(self, request: Mapping[str, Any]) -> dict[str, str]:
        headers: dict[str, str] = {}
        for name in self.recipe.headers:
            HEADER_SETS[name](headers, request)
        return headers

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        recipe = self.recipe
        answer, failure = decode_go_answer(response, recipe.answer.wording)
        if answer is None:
            return None, failure
        if recipe.empty_seatbid_error is not None and not answer.seatbids:
            return None, [recipe.empty_seatbid_error.error()]
        return self.typed_bids(request, answer)

    def typed_bids(
        self, request: Mapping[str, Any], answer: GoAnswer
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        recipe = self.recipe
        result = BidderResponse(currency=(answer.cur or "USD") if recipe.currency == "answer" else "USD")
        errors: list[BidderError] = []
        for bid in answer.bids:
            try:
                bid_type = recipe.bid_type.type_of(bid, request)
            except UntypedBid as exc:
                if recipe.untyped == "answer":
                    return None, [exc.error]
                errors.append(exc.error)
                continue
            result.bids.append(TypedBid(bid, bid_type))
        return result, errors


class _DroppedImp(Exception):
    def __init__(self, error: BidderError) -> None:
        super().__init__(error.message)
        self.error = error


def _ids(imps: Any) -> list[str]:
    return [imp.get("id", "") for imp in imps]


def build_from_recipe(code: str, config: AdapterConfig) -> RecipeAdapter | None:
    """The adapter for ``code`` when it has a recipe file, else None."""
    recipe = load_recipe(code)
    return None if recipe is None else RecipeAdapter(recipe, config)
