"""The raw_bidder_response hook (PBS-Go's ``hook_raw_bidder_response.go``): drops a bidder's bids
whose advertiser domains, categories, category taxonomy, app bundle or creative attributes are
blocked, for the attributes whose ``enforce_blocks`` is on (deals may be excepted)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hbserver.adapters.base import TypedBid
from hbserver.hooks.api import HookResult, Mutation, RawBidderResponsePayload
from hbserver.modules.ortb2blocking import analytics
from hbserver.modules.ortb2blocking.attributes import NONE_BLOCKED, BlockingAttributes
from hbserver.modules.ortb2blocking.config import Config, Override
from hbserver.modules.ortb2blocking.errors import BlockingFailure, OverrideError
from hbserver.modules.ortb2blocking.overrides import (
    deal_exceptions,
    first_or_default,
    get_ids,
    get_is_active,
    get_names,
)

Result = HookResult[RawBidderResponsePayload]
_CATTAX_IAB_CONTENT_10 = 1  # the taxonomy allowed when the request named none


@dataclass(frozen=True, slots=True)
class _Check:
    attribute: str  # badv | bcat | bapp | battr
    enforce: str  # config fields
    unknown: str | None  # None: a bid without values passes
    deals: str
    getter: Callable[[Override], tuple[Any, ...]]


_BADV = _Check("badv", "badv.enforce_blocks", "badv.block_unknown_adomain", "badv.allowed_adomain_for_deals", get_names)
_BCAT = _Check("bcat", "bcat.enforce_blocks", "bcat.block_unknown_adv_cat", "bcat.allowed_adv_cat_for_deals", get_names)
_BAPP = _Check("bapp", "bapp.enforce_blocks", None, "bapp.allowed_app_for_deals", get_names)
# PBS-Go excepts the banner attributes for deals whatever the bid's type
_BATTR = _Check("battr", "battr.enforce_blocks", None, "battr.allowed_banner_attr_for_deals", get_ids)


class _CheckError(Exception):
    pass


def handle_raw_bidder_response(
    cfg: Config, payload: RawBidderResponsePayload, module_context: Mapping[str, Any] | None
) -> Result:
    bidder = payload.bidder
    attrs = (module_context or {}).get(bidder, NONE_BLOCKED)
    if not isinstance(attrs, BlockingAttributes):
        raise BlockingFailure(
            f"could not cast blocking attributes for bidder `{bidder}`, module context has incorrect data",
            HookResult(),
        )
    result: Result = HookResult(analytics_tags=analytics.new_tags())
    kept: list[TypedBid] = []
    bids = payload.response.bids
    for typed in bids:
        bid = typed.bid
        imp_id = _text(bid.get("impid"))
        if not cfg.enforces:
            analytics.add_allowed(result.analytics_tags, bidder, imp_id)
            kept.append(typed)
            continue
        try:
            failed = _failed_checks(cfg, attrs, typed, imp_id, bidder, result.warnings)
        except _CheckError as exc:
            analytics.mark_failed(result.analytics_tags)
            raise BlockingFailure(str(exc), result) from None
        if not failed:
            analytics.add_allowed(result.analytics_tags, bidder, imp_id)
            kept.append(typed)
            continue
        names = [check for check in analytics.CHECKS if check in failed]
        analytics.add_blocked(result.analytics_tags, bidder, imp_id, names, failed)
        result.debug_messages.append(
            f"Bid {_text(bid.get('id'))} from bidder {bidder} has been rejected, failed checks: {', '.join(names)}"
        )
    if len(kept) != len(bids):
        result.mutations.append(Mutation("update", ("bids",), _keep(kept)))
    return result


def _failed_checks(
    cfg: Config, attrs: BlockingAttributes, typed: TypedBid, imp_id: str, bidder: str, warnings: list[str]
) -> dict[str, Any]:
    """The checks the bid fails, each with the values that failed it."""
    bid = typed.bid
    media = frozenset((typed.bid_type,))
    deal_id = _text(bid.get("dealid"))
    failed: dict[str, Any] = {}
    args = (cfg, bidder, media, deal_id, warnings)
    _check(_BADV, *args, _list(bid.get("adomain")), attrs.badv, failed)
    if _check(_BCAT, *args, _list(bid.get("cat")), attrs.bcat, failed):
        cattax = bid.get("cattax") or 0
        if cattax != 0 and cattax != (attrs.cattax or _CATTAX_IAB_CONTENT_10):
            failed["cattax"] = [cattax]
    _check(_BAPP, *args, [_text(bid.get("bundle"))], attrs.bapp, failed)
    blocked_attr = attrs.battr.get(imp_id, ()) if attrs.battr else ()
    _check(_BATTR, *args, _list(bid.get("attr")), blocked_attr, failed)
    return failed


def _check(
    check: _Check,
    cfg: Config,
    bidder: str,
    media: frozenset[str],
    deal_id: str,
    warnings: list[str],
    values: Sequence[Any],
    blocked: Sequence[Any],
    failed: dict[str, Any],
) -> bool:
    """Runs one attribute's check into ``failed``; whether that attribute is enforced."""
    field = check.enforce
    actions = cfg.overrides[field]
    if not actions and not cfg.values[field]:
        return False
    try:
        enforce, message = first_or_default(bidder, media, get_is_active, actions, cfg.values[field])
        if message:
            warnings.append(message)
        if not enforce:
            return False
        block_unknown = False
        if check.unknown is not None:
            field = check.unknown
            block_unknown, message = first_or_default(
                bidder, media, get_is_active, cfg.overrides_of(field), cfg.value(field)
            )
            if message:
                warnings.append(message)
        exceptions: tuple[Any, ...] = ()
        if deal_id:
            field = check.deals
            exceptions = deal_exceptions(deal_id, check.getter, cfg.overrides_of(field), cfg.value(field))
    except OverrideError as exc:
        raise _CheckError(
            f"failed to process {check.attribute} block checking: failed to get override for {field}: {exc}"
        ) from None
    should_block, blocked_values = block_attribute(values, blocked, exceptions, block_unknown)
    if should_block:
        failed[check.attribute] = blocked_values
    return True


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
        return replace(payload, response=replace(payload.response, bids=list(kept)))

    return apply


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
