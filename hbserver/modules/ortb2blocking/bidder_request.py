"""The bidder_request hook (PBS-Go's ``hook_bidderrequest.go``): sets the account's blocking lists
on a bidder's request where the request has none: ``badv``, ``bapp``, ``bcat`` and ``cattax`` at
the top, ``btype``/``battr`` on each imp's banner and ``battr`` on its video and audio."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hbserver.hooks.api import BidderRequestPayload, HookResult, Mutation
from hbserver.modules.ortb2blocking.attributes import BlockingAttributes
from hbserver.modules.ortb2blocking.config import Config
from hbserver.modules.ortb2blocking.errors import BlockingFailure, OverrideError
from hbserver.modules.ortb2blocking.overrides import (
    first_or_default,
    get_ids,
    get_names,
    imp_media_types,
    request_media_types,
)

Result = HookResult[BidderRequestPayload]
Imps = list[dict[str, Any]]
ByImp = dict[str, tuple[int, ...]]

_NO_MEDIA: frozenset[str] = frozenset()
# request field, config field, in PBS-Go's order
_TOP_FIELDS = (("badv", "badv.blocked_adomain"), ("bapp", "bapp.blocked_app"), ("bcat", "bcat.blocked_adv_cat"))
# imp media object, config field
_BATTR_FIELDS = (
    ("banner", "battr.blocked_banner_attr"),
    ("video", "battr.blocked_video_attr"),
    ("audio", "battr.blocked_audio_attr"),
)


def handle_bidder_request(cfg: Config, payload: BidderRequestPayload) -> Result:
    request = payload.request
    if not isinstance(request, dict):
        raise BlockingFailure("payload contains a nil bid request", HookResult())
    raw_imps = request.get("imp")
    imps: Imps = [imp for imp in raw_imps if isinstance(imp, dict)] if isinstance(raw_imps, list) else []
    result: Result = HookResult()
    top = _top_fields(cfg, payload, imps, result)
    btype = _btype(cfg, payload.bidder, imps, result)
    battr = _battr(cfg, payload.bidder, imps, result)
    cattax = _cattax(cfg, request, result)
    result.module_context = {
        payload.bidder: BlockingAttributes(
            badv=top["badv"], bapp=top["bapp"], bcat=top["bcat"], btype=btype, battr=battr, cattax=cattax
        )
    }
    return result


def _top_fields(cfg: Config, payload: BidderRequestPayload, imps: Imps, result: Result) -> dict[str, tuple[str, ...]]:
    media_types: frozenset[str] | None = None  # only conditions look at them
    found: dict[str, tuple[str, ...]] = {}
    for key, name in _TOP_FIELDS:
        found[key] = ()
        if payload.request.get(key):
            continue
        actions = cfg.overrides[name]
        if actions and media_types is None:
            media_types = request_media_types(imps)
        try:
            values, message = first_or_default(
                payload.bidder, media_types or _NO_MEDIA, get_names, actions, cfg.values[name]
            )
        except OverrideError as exc:
            raise BlockingFailure(
                f"failed to update {key} field: failed to get override for {name}: {exc}", result
            ) from None
        if message:
            result.warnings.append(message)
        if values:
            found[key] = values
            result.mutations.append(Mutation("update", ("bidrequest", key), _set_top(key, list(values))))
    return found


def _btype(cfg: Config, bidder: str, imps: Imps, result: Result) -> ByImp:
    name = "btype.blocked_banner_type"
    try:
        found = _imp_overrides(cfg, name, bidder, imps, "banner", "btype", result.warnings)
    except OverrideError as exc:
        raise BlockingFailure(
            f"failed to update btype field: failed to get override for imp.*.banner.btype: {exc}", result
        ) from None
    _add_imp_mutation(result, found, imps, "banner", "btype")
    return found


def _battr(cfg: Config, bidder: str, imps: Imps, result: Result) -> ByImp:
    merged: ByImp = {}
    messages: list[str] = []  # PBS-Go adds them to the warnings only when all three succeed
    for media, name in _BATTR_FIELDS:
        try:
            found = _imp_overrides(cfg, name, bidder, imps, media, "battr", messages)
        except OverrideError as exc:
            raise BlockingFailure(
                f"failed to update battr field: failed to get override for imp.*.{media}.battr: {exc}", result
            ) from None
        _add_imp_mutation(result, found, imps, media, "battr")
        merged.update(found)
    result.warnings.extend(messages)
    return merged


def _imp_overrides(
    cfg: Config, name: str, bidder: str, imps: Imps, media: str, field: str, messages: list[str]
) -> ByImp:
    """The values for each imp that has no ``imp.<media>.<field>`` yet (by imp id; PBS-Go's
    ``findImpressionOverrides``: imps without that media type are looked at too)."""
    actions = cfg.overrides[name]
    default = cfg.values[name]
    found: ByImp = {}
    if not actions and not default:
        return found
    for imp in imps:
        media_object = imp.get(media)
        if isinstance(media_object, dict) and media_object.get(field):
            continue
        media_types = imp_media_types(imp) if actions else _NO_MEDIA  # only conditions look at them
        values, message = first_or_default(bidder, media_types, get_ids, actions, default)
        if message:
            messages.append(message)
        if values:
            found[_imp_id(imp)] = values
    return found


def _add_imp_mutation(result: Result, found: ByImp, imps: Imps, media: str, field: str) -> None:
    """A mutation for the imps of ``found`` that offer ``media`` (no media object is ever created)."""
    if not found:
        return
    targets = {
        _imp_id(imp): found[_imp_id(imp)] for imp in imps if imp.get(media) is not None and _imp_id(imp) in found
    }
    if targets:
        result.mutations.append(
            Mutation("update", ("bidrequest", "imp", media, field), _set_on_imps(targets, media, field))
        )


def _cattax(cfg: Config, request: dict[str, Any], result: Result) -> int:
    present = request.get("cattax")
    if isinstance(present, int) and present > 0:
        return 0
    cattax: int = cfg.value("bcat.category_taxonomy")
    result.mutations.append(Mutation("update", ("bidrequest", "cattax"), _set_cattax(cattax)))
    return cattax


def _set_top(key: str, values: list[Any]) -> Callable[[BidderRequestPayload], BidderRequestPayload]:
    def apply(payload: BidderRequestPayload) -> BidderRequestPayload:
        return replace(payload, request={**payload.request, key: list(values)})

    return apply


def _set_cattax(cattax: int) -> Callable[[BidderRequestPayload], BidderRequestPayload]:
    """PBS-Go sets ``cattax`` even to 0, which its JSON then leaves out: 0 removes the key here."""

    def apply(payload: BidderRequestPayload) -> BidderRequestPayload:
        if cattax:
            return replace(payload, request={**payload.request, "cattax": cattax})
        if "cattax" not in payload.request:
            return payload
        request = dict(payload.request)
        del request["cattax"]
        return replace(payload, request=request)

    return apply


def _set_on_imps(by_imp: ByImp, media: str, field: str) -> Callable[[BidderRequestPayload], BidderRequestPayload]:
    def apply(payload: BidderRequestPayload) -> BidderRequestPayload:
        imps = payload.request.get("imp")
        if not isinstance(imps, list):
            return payload
        updated = list(imps)
        for index, imp in enumerate(imps):
            if not isinstance(imp, dict):
                continue
            values = by_imp.get(_imp_id(imp))
            media_object = imp.get(media)
            if values and isinstance(media_object, dict):
                updated[index] = {**imp, media: {**media_object, field: list(values)}}
        return replace(payload, request={**payload.request, "imp": updated})

    return apply


def _imp_id(imp: dict[str, Any]) -> str:
    found = imp.get("id")
    return found if isinstance(found, str) else ""
