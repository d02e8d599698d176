"""The raw_bidder_response hook (PBS-Go's ``hook_raw_bidder_response.go``): drops a bidder's bids
whose advertiser domains, categories, category taxonomy, app bundle or creative attributes are
blocked, for the attributes whose ``enforce_blocks`` is on (deals may be excepted).

Whether a check is enforced for a bidder and media type, and what it warns, comes from ``plans``;
a bid's own values and its deal's exceptions are looked at here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from hbserver.adapters.base import BidderResponse, TypedBid
from hbserver.hooks.api import HookResult, InvocationContext, Mutation, QuietBatch, RawBidderResponsePayload
from hbserver.modules.ortb2blocking import analytics
from hbserver.modules.ortb2blocking.attributes import NONE_BLOCKED, BlockingAttributes
from hbserver.modules.ortb2blocking.config import EMPTY, Config
from hbserver.modules.ortb2blocking.errors import BlockingFailure, OverrideError
from hbserver.modules.ortb2blocking.overrides import deal_exceptions
from hbserver.modules.ortb2blocking.plans import (
    BATTR_SLOT,
    MEMO_SIZE,
    CheckStep,
    QuickCheck,
    ResponsePlan,
    response_plan,
)

Result = HookResult[RawBidderResponsePayload]
_CATTAX_IAB_CONTENT_10 = 1  # the taxonomy allowed when the request named none
_NO_BLOCKED: tuple[Any, ...] = ()
_NO_KEYS: frozenset[str] = frozenset()
_NO_PLAN = ResponsePlan((None, None, None, None), ())
_UNSET: Any = object()
_new_result = object.__new__  # a HookResult of defaults, without its constructor's call


class _CheckError(Exception):
    pass


def handle_raw_bidder_response(
    cfg: Config, payload: RawBidderResponsePayload, module_context: Mapping[str, Any] | None
) -> Result:
    bidder = payload.bidder
    attrs = module_context.get(bidder, NONE_BLOCKED) if module_context else NONE_BLOCKED
    if not isinstance(attrs, BlockingAttributes):
        raise BlockingFailure(
            f"could not cast blocking attributes for bidder `{bidder}`, module context has incorrect data",
            HookResult(),
        )
    if not cfg.enforces or all_pass(cfg, (payload,), module_context):  # the common case: every bid kept, quietly
        return _all_kept(payload)
    return _checked(cfg, bidder, attrs, payload.response.bids)


def handle_raw_bidder_response_batch(
    module: Any, ctx: InvocationContext, payloads: list[RawBidderResponsePayload]
) -> list[Result | Exception] | QuietBatch:
    """The hook over an auction's answers at once (the module's ``handle_raw_bidder_response_batch``;
    ``module`` its :class:`~.module.Ortb2BlockingModule`, whose config is read here: one function run,
    its code cold once an auction): every answer kept quietly (the common case: each one's result made
    only if it is read), else each answer's result, or the exception the hook raised for it."""
    raw, last = ctx.account_config, module._last
    cfg = last[1] if last[0] is raw else EMPTY if raw is None else module._config(raw)
    module_context = ctx.module_context
    try:
        if all_pass(cfg, payloads, module_context) if cfg.enforces else _attributes_of_all(payloads, module_context):
            return ALL_KEPT
    except Exception:  # a payload's failure is its own: each is answered alone below
        pass
    return _each_response(cfg, payloads, module_context)


def _each_response(
    cfg: Config, payloads: list[RawBidderResponsePayload], module_context: Mapping[str, Any] | None
) -> list[Result | Exception]:
    """Each answer's result from the hook, or the exception the hook raised for it."""
    results: list[Result | Exception] = []
    for payload in payloads:
        try:
            results.append(handle_raw_bidder_response(cfg, payload, module_context))
        except Exception as exc:  # this answer's failure alone
            results.append(exc)
    return results


class AllKept(HookResult[RawBidderResponsePayload]):
    """The answer when every bid passes without a warning: no mutation, and the analytics tags (an
    allowed result per bid) written only when read (most auctions show no hook outcome)."""

    bidder: str
    bids: tuple[TypedBid, ...]

    @property  # type: ignore[override]
    def analytics_tags(self) -> dict[str, Any]:
        tags: dict[str, Any] | None = self.__dict__.get("_tags")
        if tags is None:
            outcomes = [analytics.allowed(self.bidder, _text(typed.bid.get("impid"))) for typed in self.bids]
            tags = self.__dict__["_tags"] = _tags(outcomes, "success")
        return tags


def _all_kept(payload: RawBidderResponsePayload) -> AllKept:
    """An answer's result when every one of its bids passed (a quiet batch's, made when read)."""
    kept: AllKept = _new_result(AllKept)
    kept.bidder, kept.bids = payload.bidder, tuple(payload.response.bids)
    return kept


ALL_KEPT = QuietBatch(_all_kept)


def _attributes_of_all(payloads: Sequence[RawBidderResponsePayload], module_context: Mapping[str, Any] | None) -> bool:
    """Whether each answer's bidder has its blocking attributes (or none) in the module context."""
    for payload in payloads:
        attrs = module_context.get(payload.bidder, NONE_BLOCKED) if module_context else NONE_BLOCKED
        if type(attrs) is not BlockingAttributes:
            return False
    return True


def all_pass(
    cfg: Config, payloads: Sequence[RawBidderResponsePayload], module_context: Mapping[str, Any] | None
) -> bool:
    """Whether every bid of the answers surely passes at a glance (its checks quiet: nothing warned
    either), against its bidder's attributes in ``module_context``; False leaves them to
    :func:`_checked` (and where a bidder's attributes are not BlockingAttributes, to the hook's failure).
    The glance is read once per bid type and attributes: bids mostly share their type, and an auction's
    bidders their attributes (where no override makes the checks the bidder's own, they share the glance)."""
    memo, per_bidder = cfg.memo, cfg.per_bidder
    attrs: Any = None
    bid_type: Any = _UNSET
    look: Any = None
    plain: tuple[tuple[str, frozenset[Any]], ...] | None = None  # the two set with a bid type's glance
    others: frozenset[str] = _NO_KEYS
    for payload in payloads:
        found = module_context.get(payload.bidder, NONE_BLOCKED) if module_context else NONE_BLOCKED
        if found is not attrs or per_bidder:
            if type(found) is not BlockingAttributes:
                return False
            attrs, bid_type = found, _UNSET
        for typed in payload.response.bids:
            if typed.bid_type != bid_type:
                bid_type = typed.bid_type
                kept = memo.get(("look", payload.bidder, bid_type))
                look = kept[1] if kept is not None and kept[0] is attrs else _look(cfg, payload.bidder, bid_type, attrs)
                if look is None:
                    return False
                plain, others = look[5], look[6]  # by index: by name is a generic attribute lookup, cold
            bid = typed.bid
            if plain is not None and bid.keys().isdisjoint(others):  # the common case: _passes's first check alone
                try:
                    for key, blocked in plain:
                        value = bid.get(key)
                        if isinstance(value, list) and not blocked.isdisjoint(value):
                            return False
                except TypeError:  # a value that cannot be in a set
                    return False
            elif not _passes(look, bid):
                return False
    return True


def _look(cfg: Config, bidder: str, bid_type: str, attrs: BlockingAttributes) -> Glance | None:
    """The glance at a bidder's bids of a type, kept in ``cfg``'s memo under ``("look", bidder,
    bid_type)`` with the attributes it was made for (an auction's, often the auctions' before too)."""
    plan = cfg.memo.get(("response", bidder, bid_type)) or response_plan(cfg, bidder, bid_type)
    look = None if plan.quick is None else _glance_of(cfg, plan.quick, attrs)
    memo = cfg.memo
    if len(memo) >= MEMO_SIZE:
        memo.clear()
    memo["look", bidder, bid_type] = (attrs, look)
    return look


def _checked(cfg: Config, bidder: str, attrs: BlockingAttributes, bids: list[TypedBid]) -> Result:
    """Each bid through the full checks (a glance first where one can decide)."""
    result: Result = HookResult(mutations=[], warnings=[], debug_messages=[])  # its analytics tags set at the end
    outcomes: list[dict[str, Any]] = []  # the activity's results
    kept: list[TypedBid] = []
    bid_type: Any = _UNSET
    plan = _NO_PLAN
    quick: Glance | None = None
    for typed in bids:
        bid = typed.bid
        imp_id = bid.get("impid")
        if not isinstance(imp_id, str):
            imp_id = ""
        if typed.bid_type != bid_type:  # bids mostly share their type
            bid_type = typed.bid_type
            plan = cfg.memo.get(("response", bidder, bid_type)) or response_plan(cfg, bidder, bid_type)
            quick = None if plan.quick is None else _glance_of(cfg, plan.quick, attrs)
        failed = None
        if quick is None or not _passes(quick, bid):
            try:
                failed = _failed_checks(plan.steps, attrs, bid, imp_id, result)
            except _CheckError as exc:
                result.analytics_tags = _tags(outcomes, "error")
                raise BlockingFailure(str(exc), result) from None
        if failed is None:
            outcomes.append(analytics.allowed(bidder, imp_id))
            kept.append(typed)
            continue
        names = [check for check in analytics.CHECKS if check in failed]
        outcomes.append(analytics.blocked(bidder, imp_id, names, failed))
        result.debug_messages.append(
            f"Bid {_text(bid.get('id'))} from bidder {bidder} has been rejected, failed checks: {', '.join(names)}"
        )
    result.analytics_tags = _tags(outcomes, "success")
    if len(kept) != len(bids):
        result.mutations.append(Mutation("update", ("bids",), _keep(kept)))
    return result


def _tags(outcomes: list[dict[str, Any]], status: str) -> dict[str, Any]:
    """PBS-Go's analytics tags of the hook: its one activity, with a result per bid looked at."""
    activity: dict[str, Any] = {"name": analytics.ACTIVITY, "status": status}
    if outcomes:
        activity["results"] = outcomes
    return {"activities": [activity]}


class Glance(NamedTuple):
    """A QuickCheck against one bidder's blocked values, by the bid keys that can fail a bid (a bid has
    few of them: only those it has are looked at)."""

    keys: frozenset[str]  # the bid keys looked at
    required: frozenset[str]  # the list keys whose absence fails a bid (block_unknown)
    checks: dict[str, tuple[int, Any, bool]]  # bid key -> (kind, its blocked values, block_unknown)
    battr: Mapping[str, tuple[Any, ...]]  # battr's blocked values by imp id (the attributes')
    # the plain list checks of ``checks`` (blocked values as a set, a bid without values passing): key -> set
    lists: dict[str, frozenset[Any]]
    # when no key is required: each (key, its blocked values) of ``lists``, by which a bid with none of
    # ``others`` is checked at once (else None)
    plain: tuple[tuple[str, frozenset[Any]], ...] | None
    others: frozenset[str]  # the keys looked at that are not in ``lists``


if Glance._fields[5:7] != ("plain", "others"):  # all_pass reads them by index (by name is a cold generic lookup)
    raise ImportError("Glance's fields moved: all_pass reads plain and others by index")

# a check's kind: a list of values (blocked: a set, or None for battr's by imp), the deal id, the app
# bundle (blocked: a set), the category taxonomy (blocked: the one allowed)
_LIST, _DEAL, _BUNDLE, _CATTAX = range(4)
_new_glance = tuple.__new__  # a Glance from its values, without its __new__'s keyword handling


def glance(quick: QuickCheck, attrs: BlockingAttributes) -> Glance | None:
    """``quick`` over ``attrs`` as sets, a list check that cannot fail left out (None: values that
    cannot be in a set, or an app blocked by the empty name, left to the full checks). battr's by imp
    are looked at as they are (a bid rarely has ``attr``): only its ``battr`` depends on ``attrs.battr``."""
    checks: dict[str, tuple[int, Any, bool]] = {"dealid": (_DEAL, None, False)}
    required = []
    try:
        for slot, key, block_unknown in quick.lists:
            if block_unknown:
                required.append(key)
            if slot == BATTR_SLOT:
                checks[key] = (_LIST, None, block_unknown)
            elif attrs[slot] or block_unknown:
                checks[key] = (_LIST, frozenset(attrs[slot]), block_unknown)
        if quick.bapp and attrs.bapp:
            if "" in attrs.bapp:  # a bid without a bundle is blocked
                return None
            checks["bundle"] = (_BUNDLE, frozenset(attrs.bapp), False)
    except TypeError:
        return None
    if quick.cattax:
        checks["cattax"] = (_CATTAX, attrs.cattax or _CATTAX_IAB_CONTENT_10, False)
    lists = {key: blocked for key, (kind, blocked, unknown) in checks.items()
             if kind == _LIST and blocked is not None and not unknown}  # fmt: skip
    keys = frozenset(checks)
    return Glance(keys, frozenset(required), checks, attrs.battr, lists,
                  None if required else tuple(lists.items()), keys.difference(lists))  # fmt: skip


def _glance_of(cfg: Config, quick: QuickCheck, attrs: BlockingAttributes) -> Glance | None:
    """:func:`glance`, the last one kept: an auction's bidders share their attributes on the static plan,
    and its auctions their lists but battr's (the glance is then the last one's with theirs)."""
    last = cfg.memo.get("glance")
    if last is not None and last[0] is attrs and last[1] is quick:
        return last[2]
    base = cfg.memo.get("glance base")
    if (base is None or base[0] is not quick or base[1] is not attrs.badv or base[2] is not attrs.bapp
            or base[3] is not attrs.bcat or base[4] != attrs.cattax):  # fmt: skip
        base = cfg.memo["glance base"] = (quick, attrs.badv, attrs.bapp, attrs.bcat, attrs.cattax, glance(quick, attrs))
    found: Glance | None = base[5]
    if found is not None and found.battr is not attrs.battr:
        keys, required, checks, _, lists, plain, others = found
        found = _new_glance(Glance, (keys, required, checks, attrs.battr, lists, plain, others))
    cfg.memo["glance"] = (attrs, quick, found)
    return found


def _passes(look: Glance, bid: dict[str, Any]) -> bool:
    """Whether a bid surely passes every check, at a glance (the checks are quiet, so nothing is
    missed): False for a bid with a deal or one that may fail, which :func:`_failed_checks` decides."""
    present = bid.keys() & look.keys  # a set of the few looked-at keys (the dict's side iterates the fewer)
    if look.required and not look.required <= present:
        return False  # a value blocked as unknown
    lists = look.lists
    try:
        for key in present:
            value = bid[key]
            blocked = lists.get(key)
            if blocked is not None:  # the common check, at once
                if value and isinstance(value, list) and not blocked.isdisjoint(value):
                    return False
                continue
            kind, blocked, block_unknown = look.checks[key]
            if kind == _LIST:
                if not value or not isinstance(value, list):
                    if block_unknown:
                        return False
                    continue
                if blocked is None:  # battr's, by the bid's imp
                    blocked = look.battr.get(_text(bid.get("impid")))
                    if blocked and not frozenset(blocked).isdisjoint(value):
                        return False
                elif blocked and not blocked.isdisjoint(value):
                    return False
            elif kind == _DEAL:
                if value and isinstance(value, str):
                    return False
            elif kind == _BUNDLE:
                if isinstance(value, str) and value in blocked:
                    return False
            elif value and value != blocked:  # the category taxonomy: blocked is the one allowed
                return False
    except TypeError:  # a value that cannot be in a set
        return False
    return True


def _failed_checks(
    steps: tuple[CheckStep | None, ...], attrs: BlockingAttributes, bid: dict[str, Any], imp_id: str, result: Result
) -> dict[str, Any] | None:
    """The checks the bid fails, each with the values that failed it (None: none failed)."""
    badv, bcat, bapp, battr = steps
    failed: dict[str, Any] = {}
    deal_id = bid.get("dealid")
    if not isinstance(deal_id, str):
        deal_id = ""
    if badv is not None and (badv.quiet or _enforced(badv, result)):
        _check(badv, bid.get("adomain"), attrs.badv, deal_id, failed)
    if bcat is not None and (bcat.quiet or _enforced(bcat, result)):
        _check(bcat, bid.get("cat"), attrs.bcat, deal_id, failed)
        cattax = bid.get("cattax") or 0
        if cattax != 0 and cattax != (attrs.cattax or _CATTAX_IAB_CONTENT_10):
            failed["cattax"] = [cattax]
    if bapp is not None and (bapp.quiet or _enforced(bapp, result)):
        _check(bapp, [_text(bid.get("bundle"))], attrs.bapp, deal_id, failed)
    if battr is not None and (battr.quiet or _enforced(battr, result)):
        blocked = attrs.battr.get(imp_id, _NO_BLOCKED) if attrs.battr else _NO_BLOCKED
        _check(battr, bid.get("attr"), blocked, deal_id, failed)
    return failed or None


def _enforced(step: CheckStep, result: Result) -> bool:
    """Adds the step's warnings; whether it is enforced (_CheckError where it fails)."""
    if step.warnings:
        result.warnings = [*result.warnings, *step.warnings]  # its own list (a default one is shared)
    if step.error:
        raise _CheckError(step.error)
    return step.enforced


def _check(step: CheckStep, values: Any, blocked: Sequence[Any], deal_id: str, failed: dict[str, Any]) -> None:
    """One enforced check of a bid's ``values`` (a list, else none) into ``failed``."""
    exceptions = _deal_exceptions(step, deal_id) if deal_id else _NO_BLOCKED  # looked at (and failing) first
    if not isinstance(values, list) or not values:
        if step.block_unknown:
            failed[step.check.attribute] = None
        return
    if not blocked:
        return
    for value in values:  # a quick look first: most bids have no blocked value
        if value in blocked:
            break
    else:
        return
    should_block, blocked_values = block_attribute(values, blocked, exceptions, step.block_unknown)
    if should_block:
        failed[step.check.attribute] = blocked_values


def _deal_exceptions(step: CheckStep, deal_id: str) -> tuple[Any, ...]:
    if not step.deal_actions:
        return step.deal_default
    try:
        return deal_exceptions(deal_id, step.check.getter, step.deal_actions, step.deal_default)
    except OverrideError as exc:
        raise _CheckError(
            f"failed to process {step.check.attribute} block checking: "
            f"failed to get override for {step.check.deals}: {exc}"
        ) from None


def block_attribute(
    values: Sequence[Any], blocked: Sequence[Any], exceptions: Sequence[Any], block_unknown: bool
) -> tuple[bool, list[Any] | None]:
    """PBS-Go's ``blockAttribute``: a bid without values is blocked only as unknown (no values then);
    otherwise the values found in ``blocked`` (once per listing) and not excepted."""
    if not values:
        return block_unknown, None
    if not blocked:
        return False, None
    found = [value for value in values for listed in blocked if value == listed and value not in exceptions]
    if not found:
        return False, None
    return True, found


def _keep(kept: list[TypedBid]) -> Callable[[RawBidderResponsePayload], RawBidderResponsePayload]:
    def apply(payload: RawBidderResponsePayload) -> RawBidderResponsePayload:
        response = payload.response
        return RawBidderResponsePayload(
            BidderResponse(list(kept), response.currency, response.fledge_auction_configs), payload.bidder
        )

    return apply


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
