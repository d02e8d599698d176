"""The result functions of the processed-auction-request stage (PBS-Go
``modules/prebid/rulesengine/result_functions.go``) and the bidder mutations they ask for
(``hooks/hookstage/processedauctionrequest_mutations.go``).

PBS-Go builds only ``excludeBidders`` and ``includeBidders`` here: ``logATag`` passes the schema
but its factory refuses it, so a model group naming it fails to build (its rule set is dropped).
The ``seatnonbid``, ``analyticsvalue`` and ``ifsyncedid`` args are read (and type-checked) but
PBS-Go does nothing with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from hbserver.hooks.api import Mutation, ProcessedAuctionRequestPayload
from hbserver.modules.rulesengine.args import optional_typed, require_object, string_list

EXCLUDE_BIDDERS = "excludeBidders"
INCLUDE_BIDDERS = "includeBidders"
MUTATION_KEY = ("bidrequest", "imp", "ext", "prebid", "bidders")

# imp.ext keys that are not bidders (hbserver's validate.RESERVED_IMP_EXT_KEYS): the legacy
# ``imp.ext.<bidder>`` layout is filtered when ``imp.ext.prebid.bidder`` is absent
_NOT_BIDDERS = frozenset({"prebid", "data", "context", "gpid", "tid", "skadn", "ae", "igs"})

Payload = ProcessedAuctionRequestPayload


@dataclass(slots=True)
class Outcome:
    """What running the rule sets produced (PBS-Go ``ProcessedAuctionHookResult``). ``allowed``
    is one set shared by every ``add`` mutation, as PBS-Go's map is: each applies the final union."""

    mutations: list[Mutation[Payload]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    allowed: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class ResultMeta:
    """PBS-Go ``ResultFunctionMeta``: what the walk saw (no result function reads it yet)."""

    schema_results: tuple[tuple[str, str], ...]
    rule_fired: str
    analytics_key: str = ""
    model_version: str = ""


class ResultFunction(Protocol):
    """Adds to the outcome of the request it is called for."""

    name: str

    def __call__(self, request: Mapping[str, Any], outcome: Outcome, meta: ResultMeta) -> None: ...


@dataclass(frozen=True, slots=True)
class ResultParams:
    """PBS-Go ``config.ResultFuncParams``."""

    bidders: tuple[str, ...]
    seat_non_bid: int = 0
    analytics_value: str = ""
    if_synced_id: bool = False


def parse_params(args: Any, func: str) -> ResultParams:
    """The args of an include/exclude function (at least one bidder)."""
    obj = require_object(args, func)
    bidders = string_list(obj, "bidders", func)
    seat = optional_typed(obj, "seatnonbid", int, func, "an integer")
    value = optional_typed(obj, "analyticsvalue", str, func, "a string")
    synced = optional_typed(obj, "ifsyncedid", bool, func, "a boolean")
    if not bidders:
        raise ValueError(f"{func} requires at least one bidder to be specified")
    return ResultParams(
        tuple(bidders),
        seat if isinstance(seat, int) else 0,
        value if isinstance(value, str) else "",
        synced is True,
    )


@dataclass(frozen=True, slots=True)
class ExcludeBidders:
    """Removes its bidders from every imp (one ``delete`` mutation per call)."""

    params: ResultParams
    name: str = EXCLUDE_BIDDERS

    def __call__(self, request: Mapping[str, Any], outcome: Outcome, meta: ResultMeta) -> None:
        outcome.mutations.append(delete_bidders_mutation(frozenset(self.params.bidders)))


@dataclass(frozen=True, slots=True)
class IncludeBidders:
    """Adds its bidders to the allowed set that the hook turns into ``add`` mutations."""

    params: ResultParams
    name: str = INCLUDE_BIDDERS

    def __call__(self, request: Mapping[str, Any], outcome: Outcome, meta: ResultMeta) -> None:
        outcome.allowed.update(self.params.bidders)


def new_result_function(name: str, args: Any) -> ResultFunction:
    """PBS-Go ``NewProcessedAuctionRequestResultFunction`` (names are case-sensitive)."""
    if name == EXCLUDE_BIDDERS:
        return ExcludeBidders(parse_params(args, name))
    if name == INCLUDE_BIDDERS:
        return IncludeBidders(parse_params(args, name))
    raise ValueError(f"result function {name} was not created")


def _filter_imp(imp: Any, keep: Any) -> Any:
    """A copy of ``imp`` whose bidders are those ``keep(name)`` accepts: ``imp.ext.prebid.bidder``
    when the imp has it, else the legacy ``imp.ext.<bidder>`` keys."""
    if not isinstance(imp, dict) or not isinstance(imp.get("ext"), dict):
        return imp
    ext = imp["ext"]
    prebid = ext.get("prebid")
    if isinstance(prebid, dict) and isinstance(prebid.get("bidder"), dict):
        bidders = {name: params for name, params in prebid["bidder"].items() if keep(name)}
        new_ext = {**ext, "prebid": {**prebid, "bidder": bidders}}
    else:
        new_ext = {key: value for key, value in ext.items() if key in _NOT_BIDDERS or keep(key)}
    return {**imp, "ext": new_ext}


def _filtered(payload: Payload, keep: Any) -> Payload:
    request = payload.request
    imps = request.get("imp")
    if not isinstance(imps, list):
        return payload
    return ProcessedAuctionRequestPayload({**request, "imp": [_filter_imp(imp, keep) for imp in imps]})


def delete_bidders_mutation(bidders: frozenset[str]) -> Mutation[Payload]:
    """PBS-Go ``ChangeBidders.Delete``: drop these bidders from every imp."""
    return Mutation("delete", MUTATION_KEY, lambda payload: _filtered(payload, lambda name: name not in bidders))


def add_bidders_mutation(allowed: set[str]) -> Mutation[Payload]:
    """PBS-Go ``ChangeBidders.Add``: keep only the allowed bidders in every imp (``allowed`` is read
    when the mutation is applied)."""
    return Mutation("add", MUTATION_KEY, lambda payload: _filtered(payload, lambda name: name in allowed))
