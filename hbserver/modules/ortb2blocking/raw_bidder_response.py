"""The raw_bidder_response hook (PBS-Go's ``hook_raw_bidder_response.go``): drops a bidder's bids
whose advertiser domains, categories, category taxonomy, app bundle or creative attributes are
blocked, for the attributes whose ``enforce_blocks`` is on (deals may be excepted).

Whether a check is enforced for a bidder and media type, and what it warns, comes from ``plans``;
a bid's own values and its deal's exceptions are looked at here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hbserver.adapters.base import BidderResponse, TypedBid
from hbserver.hooks.api import HookResult, Mutation, RawBidderResponsePayload
from hbserver.modules.ortb2blocking import analytics
from hbserver.modules.ortb2blocking.analytics import ALLOWED
from hbserver.modules.ortb2blocking.attributes import NONE_BLOCKED, BlockingAttributes
from hbserver.modules.ortb2blocking.config import Config
from hbserver.modules.ortb2blocking.errors import BlockingFailure, OverrideError
from hbserver.modules.ortb2blocking.overrides import deal_exceptions
from hbserver.modules.ortb2blocking.plans import (
    BATTR_SLOT,
    CheckStep,
    QuickCheck,
    ResponsePlan,
    response_plan,
)

Result = HookResult[RawBidderResponsePayload]
_CATTAX_IAB_CONTENT_10 = 1  # the taxonomy allowed when the request named none
_NO_BLOCKED: tuple[Any, ...] = ()
_NO_PLAN = ResponsePlan((None, None, None, None), ())
_UNSET: Any = object()


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
    result: Result = HookResult(analytics_tags=analytics.new_tags())
    outcomes: list[dict[str, Any]] = []  # the activity's results, set on it once there is one
    kept: list[TypedBid] = []
    bids = payload.response.bids
    enforces = cfg.enforces  # False: no bid can be checked
    bid_type: Any = _UNSET
    plan = _NO_PLAN
    for typed in bids:
        bid = typed.bid
        imp_id = bid.get("impid")
        if not isinstance(imp_id, str):
            imp_id = ""
        failed = None
        if enforces:
            if typed.bid_type != bid_type:  # bids mostly share their type
                bid_type = typed.bid_type
                plan = cfg.memo.get(("response", bidder, bid_type)) or response_plan(cfg, bidder, bid_type)
            if plan.quick is None or not _passes(plan.quick, attrs, bid, imp_id):
                try:
                    failed = _failed_checks(plan.steps, attrs, bid, imp_id, result)
                except _CheckError as exc:
                    _set_outcomes(result, outcomes)
                    analytics.mark_failed(result.analytics_tags)
                    raise BlockingFailure(str(exc), result) from None
        if failed is None:
            applied = {"bidder": bidder, "impids": [imp_id]} if bidder else {"impids": [imp_id]}
            outcomes.append({"status": ALLOWED, "appliedto": applied})  # analytics.allowed, inlined
            kept.append(typed)
            continue
        names = [check for check in analytics.CHECKS if check in failed]
        outcomes.append(analytics.blocked(bidder, imp_id, names, failed))
        result.debug_messages.append(
            f"Bid {_text(bid.get('id'))} from bidder {bidder} has been rejected, failed checks: {', '.join(names)}"
        )
    _set_outcomes(result, outcomes)
    if len(kept) != len(bids):
        result.mutations.append(Mutation("update", ("bids",), _keep(kept)))
    return result


def _set_outcomes(result: Result, outcomes: list[dict[str, Any]]) -> None:
    if outcomes:
        result.analytics_tags["activities"][0]["results"] = outcomes


def _passes(quick: QuickCheck, attrs: BlockingAttributes, bid: dict[str, Any], imp_id: str) -> bool:
    """Whether a bid surely passes every check, at a glance (the checks are quiet, so nothing is
    missed): False for a bid with a deal or one that may fail, which :func:`_failed_checks` decides."""
    deal_id = bid.get("dealid")
    if deal_id and isinstance(deal_id, str):
        return False
    if quick.bapp and attrs.bapp:
        bundle = bid.get("bundle")  # "" when none
        if (bundle if isinstance(bundle, str) else "") in attrs.bapp:
            return False
    if quick.cattax:
        cattax = bid.get("cattax")
        if cattax and cattax != (attrs.cattax or _CATTAX_IAB_CONTENT_10):
            return False
    for slot, key, block_unknown in quick.lists:
        value = bid.get(key)
        if not value or not isinstance(value, list):
            if block_unknown:
                return False
            continue
        blocked = attrs.battr.get(imp_id, _NO_BLOCKED) if slot == BATTR_SLOT else attrs[slot]
        if blocked:
            for listed in value:
                if listed in blocked:
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
        result.warnings.extend(step.warnings)
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
