"""The module API: what a hook receives and what it answers (PBS-Go's ``hooks/hookstage``).

A module is an object whose methods are its hooks, one per stage it works at, named
``handle_<stage>`` (``handle_bidder_request``, ...). A hook is called with an
:class:`InvocationContext` and the stage's payload and returns a :class:`HookResult`, or an
awaitable of one (an ``async def`` hook: only those can be cut off at their group's timeout; a
plain hook that runs over it is still recorded as timed out and its result dropped).

A hook never changes its payload itself: it returns :class:`Mutation` s, which the executor
applies in order after the whole group has answered (hooks of one group see the same payload).
A mutation's ``apply`` returns the new payload; it may copy what it changes and share the rest
(payloads are plain dicts and lists that other bidders' requests may share below the top
level: copy before changing anything nested).

Analytics tags are PBS-Go's ``hookanalytics.Analytics`` as JSON-shaped dicts:
``{"activities": [{"name", "status": "success"|"error", "results": [{"status":
"success-allow"|"success-block"|"success-modify"|"error", "values": {...}, "appliedto":
{"bidder", "bidids", "impids", "request", "response"}}]}]}``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, NamedTuple, NoReturn, Protocol, TypeVar

from hbserver.adapters.base import BidderResponse
from hbserver.auction.bids.accept import AuctionBid


class Stage(StrEnum):
    """PBS-Go's stages, in the order an auction passes them."""

    ENTRYPOINT = "entrypoint"
    RAW_AUCTION_REQUEST = "raw_auction_request"
    PROCESSED_AUCTION_REQUEST = "processed_auction_request"
    BIDDER_REQUEST = "bidder_request"
    RAW_BIDDER_RESPONSE = "raw_bidder_response"
    ALL_PROCESSED_BID_RESPONSES = "all_processed_bid_responses"
    AUCTION_RESPONSE = "auction_response"
    EXITPOINT = "exitpoint"

    # hashed as its text (Enum's own hash is a Python call): stages key the plans and the metrics
    # of every hook call, and a stage and its name are then the same key
    __hash__ = str.__hash__

    @property
    def rejectable(self) -> bool:
        """Whether a hook may reject here (PBS-Go: not after the bids are processed)."""
        return self not in _NOT_REJECTABLE

    @property
    def method(self) -> str:
        """The name of a module's hook for this stage."""
        return "handle_" + self.value


_NOT_REJECTABLE = frozenset({Stage.ALL_PROCESSED_BID_RESPONSES, Stage.AUCTION_RESPONSE, Stage.EXITPOINT})

ENDPOINT_AUCTION = "/openrtb2/auction"
ENDPOINT_AMP = "/openrtb2/amp"


@dataclass(slots=True)
class EntrypointPayload:
    """The HTTP request as it arrived: ``body`` is empty for AMP (a GET)."""

    headers: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes


@dataclass(slots=True)
class RawAuctionRequestPayload:
    """The request body (parsed), before stored requests are merged into it."""

    request: dict[str, Any]


@dataclass(slots=True)
class ProcessedAuctionRequestPayload:
    """The resolved and validated OpenRTB request, before it is split per bidder."""

    request: dict[str, Any]


@dataclass(slots=True)
class BidderRequestPayload:
    """One bidder's OpenRTB request (privacy already applied), before its adapter builds the calls.

    The request dict's top level, its ``imp`` list and each imp object are this bidder's own copies
    for this auction (as PBS-Go's bidder request is): a mutation may set or remove their keys in place
    and return the payload. Everything deeper (``imp.banner``, ``site``, ``user``, ...) is shared with
    other bidders: replace it by a changed copy, never change it."""

    request: dict[str, Any]
    bidder: str


@dataclass(slots=True)
class RawBidderResponsePayload:
    """One answer of a bidder as its adapter read it (bids not yet converted or checked)."""

    response: BidderResponse
    bidder: str


@dataclass(slots=True)
class AllProcessedBidResponsesPayload:
    """Every accepted bid of the auction (converted, adjusted, floors and DSA enforced), before the
    winners are chosen."""

    bids: list[AuctionBid]
    request: dict[str, Any] | None = None  # the auction's request (read only)


@dataclass(slots=True)
class AuctionResponsePayload:
    """The OpenRTB response, before the modules' trace is added to it."""

    response: dict[str, Any]


@dataclass(slots=True)
class ExitpointPayload:
    """What goes on the wire: ``response`` (a dict; AMP's ``{"targeting", "ext"?}``) and the headers
    to send with it (a hook may add to them through a mutation)."""

    response: Any
    headers: dict[str, str]


P = TypeVar("P")


class Mutation(NamedTuple, Generic[P]):
    """A change a hook asks for: ``kind`` (PBS-Go's mutation types: ``update``, ``delete``,
    ``add``) and ``key`` (the path it touches, for the trace) are what the trace shows;
    ``apply`` makes the new payload (and may raise: the mutation is then skipped with a warning).
    (A named tuple: hooks make one per change of every call, and a frozen dataclass costs several
    times more to build.)"""

    kind: str
    key: tuple[str, ...]
    apply: Callable[[P], P]
    # further (key, kind) changes the same ``apply`` makes: the trace lists each as its own mutation
    # (one function for several keys is cheaper when a module always changes them together)
    also: tuple[tuple[tuple[str, ...], str], ...] = ()

    def changes(self) -> tuple[tuple[tuple[str, ...], str], ...]:
        """Every (key, kind) this mutation makes, in order."""
        return ((self.key, self.kind), *self.also)


class _Unset(list):  # type: ignore[type-arg]
    """The empty list every HookResult shares until it is given its own: it refuses changes (a hook
    adds to a result's lists by setting a list of its own, or by passing one to the constructor)."""

    __slots__ = ()

    def __hash__(self) -> int:  # a dataclass field default must be hashable (it is immutable)
        return 0

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a HookResult's default list is shared and empty: set a list of its own")

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


class _UnsetTags(dict):  # type: ignore[type-arg]
    """The empty analytics tags every HookResult shares until it is given its own (refuses changes)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return 0

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a HookResult's default analytics tags are shared and empty: set a dict of its own")

    __setitem__ = __delitem__ = setdefault = update = pop = popitem = clear = __ior__ = _refuse


NO_ITEMS: list[Any] = _Unset()
NO_TAGS: dict[str, Any] = _UnsetTags()


@dataclass(init=False)
class HookResult(Generic[P]):
    """A hook's answer (PBS-Go's ``HookResult``). ``reject`` ends the stage's entity: the whole
    auction at the request stages, a bidder at ``bidder_request``, one answer at
    ``raw_bidder_response``; ``nbr_code`` is the no-bid reason then.

    What a hook does not set is the class's default, its lists and tags a shared empty value that
    refuses changes: a hook that adds to them sets (or passes) a list or dict of its own. One is made
    per hook call, so nothing is made for what a call leaves empty; ``HookResult.__new__(HookResult)``
    is one with every default and costs no constructor call at all. Read a result, never change it."""

    reject: bool = False
    nbr_code: int = 0
    message: str = ""
    mutations: list[Mutation[P]] = NO_ITEMS
    errors: list[str] = NO_ITEMS
    warnings: list[str] = NO_ITEMS
    debug_messages: list[str] = NO_ITEMS
    analytics_tags: dict[str, Any] = NO_TAGS
    # values the module hands itself at its later stages (merged into InvocationContext.module_context)
    module_context: dict[str, Any] | None = None
    # bids a hook removed at all_processed_bid_responses that the auction reports (PBS-Java's
    # rejections): each a seat-non-bid with its code, and an error for its bidder
    rejected_bids: list[RejectedBids] = NO_ITEMS

    def __init__(
        self,
        reject: bool = False,
        nbr_code: int = 0,
        message: str = "",
        mutations: list[Mutation[P]] | None = None,
        errors: list[str] | None = None,
        warnings: list[str] | None = None,
        debug_messages: list[str] | None = None,
        analytics_tags: dict[str, Any] | None = None,
        module_context: dict[str, Any] | None = None,
        rejected_bids: list[RejectedBids] | None = None,
    ) -> None:
        # only what differs from the defaults is set (a falsy reject, code or message is the default's)
        if reject:
            self.reject = reject
        if nbr_code:
            self.nbr_code = nbr_code
        if message:
            self.message = message
        if mutations is not None:
            self.mutations = mutations
        if errors is not None:
            self.errors = errors
        if warnings is not None:
            self.warnings = warnings
        if debug_messages is not None:
            self.debug_messages = debug_messages
        if analytics_tags is not None:
            self.analytics_tags = analytics_tags
        if module_context is not None:
            self.module_context = module_context
        if rejected_bids is not None:
            self.rejected_bids = rejected_bids


@dataclass(frozen=True, slots=True)
class RejectedBids:
    """Bids of one bidder a hook rejected: ``nonbid_code`` for each in seat-non-bid, and ``error``
    (``{"code", "message", ...}``) in the response's ``ext.errors[bidder]``."""

    bidder: str
    bids: list[AuctionBid]
    nonbid_code: int
    error: dict[str, Any] | None = None


class HookFailure(Exception):
    """Raised by a hook for a failure it expected (PBS-Go's ``FailureError``: status ``failure``);
    anything else a hook raises is an ``execution_failure``. ``result``: what the hook still reports
    (its warnings, errors and analytics tags are kept; its mutations are not applied)."""

    def __init__(self, message: str, result: HookResult[Any] | None = None) -> None:
        super().__init__(message)
        self.result = result


@dataclass(slots=True)
class InvocationContext:
    """What a hook knows besides its payload (PBS-Go's ``ModuleInvocationContext``)."""

    endpoint: str  # ENDPOINT_AUCTION | ENDPOINT_AMP
    account_id: str  # "" before the account is known (entrypoint)
    # the account's ``hooks.modules.<vendor>.<module>`` (None when it has none)
    account_config: Mapping[str, Any] | None
    module_context: dict[str, Any]  # this module's values from its earlier stages of this request
    hook_impl_code: str


class QuietBatch(NamedTuple):
    """A batch form's answer that every payload passes as it is: each one's result has no reject,
    mutation, rejected bids nor module context, and is made by ``result_of(payload)`` only if the
    stage's outcomes are read (for the trace or analytics: most auctions read none). A result
    ``result_of`` cannot make (it raised) shows as that payload's execution failure; one it makes that
    is not quiet is shown as it is, never applied."""

    result_of: Callable[[Any], HookResult[Any]]


class ChangedBatch(NamedTuple):
    """A batch form's answer that every payload succeeds with changes and nothing else: ``apply(payloads)``
    changes what every payload holds in place (at ``bidder_request`` its request; never which object a
    payload's field holds: callers keep theirs), as each one's result (made by ``result_of(payload)`` only if the
    stage's outcomes are read) says in its mutations, and ``module_context`` is what their results
    add to the module's context. The executor calls ``apply`` once it has taken the batch in time
    (late: nothing is applied, each run times out); ``apply`` checks what it could fail on before it
    changes anything (an exception fails each run, the payloads as it left them). For a stage whose
    payloads are each the hook's own to change in place (``bidder_request``: a bidder's request and
    imps), in one call rather than a mutation's call per payload."""

    result_of: Callable[[Any], HookResult[Any]]
    apply: Callable[[list[Any]], None]
    module_context: dict[str, Any]


Hook = Callable[[InvocationContext, Any], "HookResult[Any] | Awaitable[HookResult[Any]]"]
# a module's hook over all of a stage's payloads at once (``handle_<stage>_batch``, see batch_of)
BatchHook = Callable[[InvocationContext, list[Any]], "list[HookResult[Any] | Exception] | QuietBatch | ChangedBatch"]
BATCH_STAGES = frozenset({"bidder_request", "raw_bidder_response"})  # the stages of a payload per entity


def batch_of(hook: Hook, stage: Stage) -> BatchHook | None:
    """The batch form of a module's hook, where the module offers one: at ``bidder_request`` and
    ``raw_bidder_response`` (a payload per bidder, per answer), a method ``handle_<stage>_batch(ctx,
    payloads)`` of the hook's module, a plain function answering a list of one HookResult per
    payload in their order (an exception in place of one: that payload's hook raised it), or a
    :class:`QuietBatch` when every payload passes as it is (a :class:`ChangedBatch` when each is changed
    in place and nothing else). The
    executor calls it instead of the hook when the hook runs alone at the stage (one group of one
    hook, no A/B test): each answer is then taken as the hook's for its payload."""
    owner = getattr(hook, "__self__", None)
    stage = Stage(stage)
    if owner is None or stage.value not in BATCH_STAGES:
        return None
    batch = getattr(owner, stage.method + "_batch", None)
    return batch if callable(batch) else None


class Module(Protocol):
    """What a module built from its host configuration is: any object with ``handle_<stage>``
    methods. Built by a :data:`ModuleBuilder` from the host's ``hooks.modules.<vendor>.<module>``
    section (only when it says ``enabled: true``); raising ValueError there stops start-up with
    the message."""


ModuleBuilder = Callable[[Mapping[str, Any]], object]
