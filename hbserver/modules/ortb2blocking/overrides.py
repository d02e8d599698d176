"""Choosing a field's value among its ``action_overrides`` (PBS-Go's ``firstOrDefaultOverride`` and
``findDealExceptionsOverridesOrDefault``) and the media types the conditions are matched against."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from hbserver.modules.ortb2blocking.config import ActionOverride, Override
from hbserver.modules.ortb2blocking.errors import OverrideError

T = TypeVar("T")

MEDIA_TYPES = ("audio", "banner", "native", "video")  # PBS-Go's order in its messages


def imp_media_types(imp: Mapping[str, Any]) -> frozenset[str]:
    """The media types an imp offers (its non-null ``audio``/``banner``/``native``/``video``)."""
    return frozenset(media for media in MEDIA_TYPES if imp.get(media) is not None)


def request_media_types(imps: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    found: set[str] = set()
    for imp in imps:
        found.update(imp_media_types(imp))
        if len(found) == len(MEDIA_TYPES):
            break
    return frozenset(found)


def media_types_text(media_types: frozenset[str]) -> str:
    """PBS-Go's ``mediaTypes.String()``, quirk included: a ", " goes before every type but audio,
    so ``{banner, video}`` reads ", banner, video"."""
    parts = []
    for index, media in enumerate(MEDIA_TYPES):
        if media in media_types:
            parts.append(", " + media if index > 0 else media)
    return "".join(parts)


def intersects(media_types: frozenset[str], wanted: Iterable[str]) -> bool:
    return any(media.lower() in media_types for media in wanted)


def get_names(override: Override) -> tuple[str, ...]:
    if not override.names:
        raise OverrideError("empty override field")
    return override.names


def get_ids(override: Override) -> tuple[int, ...]:
    if not override.ids:
        raise OverrideError("empty override field")
    return override.ids


def get_is_active(override: Override) -> bool:
    return override.is_active


_UNSET: Any = object()


def first_or_default(
    bidder: str,
    media_types: frozenset[str],
    getter: Callable[[Override], T],
    actions: tuple[ActionOverride, ...],
    default: T,
) -> tuple[T, str]:
    """The first override matching ``bidder`` and ``media_types`` (one naming the bidder before one
    for every bidder), else ``default``; with PBS-Go's warning when more than one matched."""
    if not actions:
        return default, ""
    specific: Any = _UNSET
    for_all: Any = _UNSET
    matched = 0
    bidder_folded = bidder.lower()
    for action in actions:
        conditions = action.conditions
        if conditions.bidders is None and conditions.media_types is None:
            raise OverrideError(
                "bidders and media_types absent from conditions, at least one of the fields must be present"
            )
        match_all = conditions.bidders is None
        if not match_all and bidder_folded not in conditions.bidders:  # type: ignore[operator]
            continue
        if conditions.media_types is not None and not intersects(media_types, conditions.media_types):
            continue
        value = getter(action.override)
        matched += 1
        if match_all and for_all is _UNSET:
            for_all = value
        elif not match_all and specific is _UNSET:
            specific = value
    message = ""
    if matched > 1:
        message = (
            f"More than one condition matches request. Bidder: {bidder}, "
            f"request media types: {media_types_text(media_types)}"
        )
    if specific is not _UNSET:
        return specific, message
    if for_all is not _UNSET:
        return for_all, message
    return default, message


def deal_exceptions(
    deal_id: str,
    getter: Callable[[Override], tuple[T, ...]],
    actions: tuple[ActionOverride, ...],
    default: tuple[T, ...],
) -> tuple[T, ...]:
    """The values allowed for a deal: every override naming ``deal_id``, then ``default``."""
    found: list[T] = []
    for action in actions:
        deal_ids = action.conditions.deal_ids
        if deal_ids is None:
            raise OverrideError("conditions field in account configuration must contain deal_ids")
        for listed in deal_ids:
            if listed == deal_id:
                found.extend(getter(action.override))
    if not found:
        return default
    found.extend(default)
    return tuple(found)
