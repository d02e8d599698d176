"""What the hooks decide from the account's config alone, for one bidder and one set of media types:
which values each field takes (``action_overrides`` or the plain value), the warnings that choice
gives and the failure it raises. A plan is computed once and remembered on the parsed
:class:`Config` (its ``memo``): the keys are bidder codes and media-type sets, never per-visitor
values, so warm traffic always hits; the memo is bounded (cleared when full) and, living on the
parsed config, goes with it when the account's config changes.

Only deal exceptions (which depend on the bid's deal id) are left to the hooks."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from operator import itemgetter
from typing import Any, NamedTuple, TypeVar

from hbserver.hooks.api import BidderRequestPayload, Mutation
from hbserver.modules.ortb2blocking.config import ActionOverride, Config, Override
from hbserver.modules.ortb2blocking.errors import OverrideError
from hbserver.modules.ortb2blocking.overrides import (
    first_or_default,
    get_ids,
    get_is_active,
    get_names,
    imp_media_types,
)

T = TypeVar("T")

MEMO_SIZE = 1024
NO_MEDIA: frozenset[str] = frozenset()


def remembered(cfg: Config, key: Hashable, compute: Callable[..., T], *args: Any) -> T:
    """``cfg``'s memo entry ``key``, ``compute(*args)`` on a miss (the memo is emptied when it holds
    :data:`MEMO_SIZE` entries)."""
    found: T | None = cfg.memo.get(key)
    if found is None:
        found = compute(*args)
        if len(cfg.memo) >= MEMO_SIZE:
            cfg.memo.clear()
        cfg.memo[key] = found
    return found


# ---- bidder_request


class TopStep(NamedTuple):
    """One request-level field (badv, bapp, bcat, in PBS-Go's order)."""

    key: str
    values: tuple[str, ...]
    message: str  # PBS-Go's warning when several overrides matched ("" none)
    error: str  # the hook's failure ("" none)
    mutation: Mutation[BidderRequestPayload] | None  # sets ``values`` (None when there are none)


class ImpStep(NamedTuple):
    """One imp-level field for an imp of some media types."""

    values: tuple[int, ...]
    message: str
    error: str


class StaticRequest(NamedTuple):
    """The bidder_request hook when no override applies (nothing depends on the bidder or the media
    types, nothing warns or fails): what a request with none of badv, bapp and bcat gets."""

    top_values: tuple[tuple[str, ...], ...]  # badv, bapp, bcat
    # the keys and values of those with values
    top_names: tuple[str, ...]
    top_lists: tuple[tuple[str, ...], ...]
    top_keys: tuple[tuple[str, ...], ...]  # their mutation keys
    # the imp fields with values by media object, in IMP_FIELDS order: (media, ((index, field, values), ...))
    imp_groups: tuple[tuple[str, tuple[tuple[int, str, tuple[int, ...]], ...]], ...]
    cattax: int
    keys: dict[tuple[int, bool], MutationKeys]  # static_keys, remembered
    media: tuple[str, ...]  # the media objects of imp_groups, in their order
    # an imp's (id, each media object of ``media``): raises where one is missing (bidder_request.imp_signature)
    imp_values: Callable[[Any], Any]
    # the last request's answer (one entry: the bidders of an auction share their imps' media objects, so
    # all but the first get it as it is; see bidder_request.StaticAnswer)
    seen: list[Any]


# the static mutation's first key ((): no mutation) and its further (key, kind) changes
MutationKeys = tuple[tuple[str, ...], tuple[tuple[tuple[str, ...], str], ...]]
CATTAX_KEY = ("bidrequest", "cattax")


def static_keys(plan: StaticRequest, imp_fields: int, cattax: bool) -> MutationKeys:
    """The keys the static mutation changes, in PBS-Go's order, for the IMP_FIELDS set on some imp
    (a bit per index) and whether cattax is set: remembered on the plan (at most 32 of them)."""
    keys = [*plan.top_keys, *(IMP_KEYS[index] for index in range(len(IMP_KEYS)) if imp_fields >> index & 1)]
    if cattax:
        keys.append(CATTAX_KEY)
    found: MutationKeys = (keys[0], tuple((key, "update") for key in keys[1:])) if keys else ((), ())
    plan.keys[(imp_fields, cattax)] = found
    return found


class RequestPlan(NamedTuple):
    """The config-level part of the bidder_request hook."""

    top_static: tuple[TopStep, ...] | None  # the top fields, when no override makes them depend on bidder or media
    # with top_static: the mutations and the (badv, bapp, bcat) of a request that has none of the three
    top_mutations: tuple[Mutation[BidderRequestPayload], ...]
    top_values: tuple[tuple[str, ...], ...]
    imp_fields: tuple[int, ...]  # the indices in IMP_FIELDS of the fields that can set anything
    # when no imp field has overrides: (index, field, media, values) of those fields (never a warning nor failure)
    imp_static: tuple[tuple[int, str, str, tuple[int, ...]], ...] | None
    cattax: int
    cattax_mutation: Mutation[BidderRequestPayload]
    static: StaticRequest | None  # when neither the top nor the imp fields have overrides


# request field, config field, in PBS-Go's order
TOP_FIELDS = (("badv", "badv.blocked_adomain"), ("bapp", "bapp.blocked_app"), ("bcat", "bcat.blocked_adv_cat"))
# imp field, media object, config field, in PBS-Go's order
IMP_FIELDS = (
    ("btype", "banner", "btype.blocked_banner_type"),
    ("battr", "banner", "battr.blocked_banner_attr"),
    ("battr", "video", "battr.blocked_video_attr"),
    ("battr", "audio", "battr.blocked_audio_attr"),
)
IMP_KEYS = tuple(("bidrequest", "imp", media, field) for field, media, _ in IMP_FIELDS)


def request_plan(cfg: Config) -> RequestPlan:
    """Remembered under the key ``"request"``."""
    return remembered(cfg, "request", _request_plan, cfg)


def _request_plan(cfg: Config) -> RequestPlan:
    cattax: int = cfg.values["bcat.category_taxonomy"]
    top_actions = any(cfg.overrides[name] for _, name in TOP_FIELDS)
    imp_actions = any(cfg.overrides[name] for _, _, name in IMP_FIELDS)
    imp_fields = tuple(
        index for index, (_, _, name) in enumerate(IMP_FIELDS) if cfg.overrides[name] or cfg.values[name]
    )
    imp_static = None
    if not imp_actions:
        imp_static = tuple(
            (index, field, media, cfg.values[name])
            for index, (field, media, name) in enumerate(IMP_FIELDS)
            if index in imp_fields
        )
    top_static = None if top_actions else _top_plan(cfg, "", NO_MEDIA)
    return RequestPlan(
        top_static=top_static,
        top_mutations=tuple(step.mutation for step in top_static or () if step.mutation is not None),
        top_values=tuple(step.values for step in top_static or ()),
        imp_fields=imp_fields,
        imp_static=imp_static,
        cattax=cattax,
        cattax_mutation=Mutation("update", ("bidrequest", "cattax"), _set_cattax(cattax)),
        static=_static_request(top_static, imp_static, cattax),
    )


def _static_request(
    top: tuple[TopStep, ...] | None, imps: tuple[tuple[int, str, str, tuple[int, ...]], ...] | None, cattax: int
) -> StaticRequest | None:
    if top is None or imps is None or any(step.error or step.message for step in top):
        return None
    with_values = [step for step in top if step.values]
    media = tuple(dict.fromkeys(media for _, _, media, _ in imps))
    return StaticRequest(
        top_values=tuple(step.values for step in top),
        top_names=tuple(step.key for step in with_values),
        top_lists=tuple(step.values for step in with_values),
        top_keys=tuple(("bidrequest", step.key) for step in with_values),
        imp_groups=tuple(
            (media, tuple((index, field, values) for index, field, in_media, values in imps if in_media == media))
            for media in dict.fromkeys(media for _, _, media, _ in imps)
        ),
        cattax=cattax,
        keys={},
        media=media,
        imp_values=itemgetter("id", *media),
        seen=[None],
    )


def top_plan(cfg: Config, bidder: str, media_types: frozenset[str]) -> tuple[TopStep, ...]:
    """The top fields for ``bidder`` and the request's ``media_types``, remembered under
    ``("top", bidder, media_types)``."""
    return remembered(cfg, ("top", bidder, media_types), _top_plan, cfg, bidder, media_types)


def _top_plan(cfg: Config, bidder: str, media_types: frozenset[str]) -> tuple[TopStep, ...]:
    return tuple(_top_step(cfg, bidder, media_types, field) for field in TOP_FIELDS)


def _top_step(cfg: Config, bidder: str, media_types: frozenset[str], field: tuple[str, str]) -> TopStep:
    key, name = field
    try:
        values, message = first_or_default(bidder, media_types, get_names, cfg.overrides[name], cfg.values[name])
    except OverrideError as exc:
        return TopStep(key, (), "", f"failed to update {key} field: failed to get override for {name}: {exc}", None)
    mutation = Mutation("update", ("bidrequest", key), _set_top(key, values)) if values else None
    return TopStep(key, values, message, "", mutation)


def imp_plan(cfg: Config, bidder: str, imp: Mapping[str, Any]) -> tuple[ImpStep, ...]:
    """Every imp field (in :data:`IMP_FIELDS` order) for ``bidder`` and an imp like ``imp``, remembered
    under ``("imp", bidder, <whether it offers audio, banner, native, video>)`` (its media types)."""
    offers = (
        imp.get("audio") is not None,
        imp.get("banner") is not None,
        imp.get("native") is not None,
        imp.get("video") is not None,
    )
    found: tuple[ImpStep, ...] | None = cfg.memo.get(("imp", bidder, offers))
    if found is None:
        found = remembered(cfg, ("imp", bidder, offers), _imp_plan, cfg, bidder, imp_media_types(imp))
    return found


def _imp_plan(cfg: Config, bidder: str, media_types: frozenset[str]) -> tuple[ImpStep, ...]:
    return tuple(_imp_step(cfg, bidder, media_types, field) for field in IMP_FIELDS)


def _imp_step(cfg: Config, bidder: str, media_types: frozenset[str], field: tuple[str, str, str]) -> ImpStep:
    key, media, name = field
    try:
        values, message = first_or_default(bidder, media_types, get_ids, cfg.overrides[name], cfg.values[name])
    except OverrideError as exc:
        return ImpStep((), "", f"failed to update {key} field: failed to get override for imp.*.{media}.{key}: {exc}")
    return ImpStep(values, message, "")


def _set_top(key: str, values: tuple[str, ...]) -> Callable[[BidderRequestPayload], BidderRequestPayload]:
    """Sets a top-level field in place: the bidder's request is its own at this stage (hooks API)."""

    def apply(payload: BidderRequestPayload) -> BidderRequestPayload:
        payload.request[key] = list(values)
        return payload

    return apply


def _set_cattax(cattax: int) -> Callable[[BidderRequestPayload], BidderRequestPayload]:
    """PBS-Go sets ``cattax`` even to 0, which its JSON then leaves out: 0 removes the key here."""

    def apply(payload: BidderRequestPayload) -> BidderRequestPayload:
        if cattax:
            payload.request["cattax"] = cattax
        else:
            payload.request.pop("cattax", None)
        return payload

    return apply


# ---- raw_bidder_response


class Check(NamedTuple):
    """One attribute's check: its config fields."""

    attribute: str  # badv | bcat | bapp | battr
    enforce: str
    unknown: str | None  # None: a bid without values passes
    deals: str
    getter: Callable[[Override], tuple[Any, ...]]


CHECKS = (
    Check("badv", "badv.enforce_blocks", "badv.block_unknown_adomain", "badv.allowed_adomain_for_deals", get_names),
    Check("bcat", "bcat.enforce_blocks", "bcat.block_unknown_adv_cat", "bcat.allowed_adv_cat_for_deals", get_names),
    Check("bapp", "bapp.enforce_blocks", None, "bapp.allowed_app_for_deals", get_names),
    # PBS-Go excepts the banner attributes for deals whatever the bid's type
    Check("battr", "battr.enforce_blocks", None, "battr.allowed_banner_attr_for_deals", get_ids),
)


class CheckStep(NamedTuple):
    """A check for a bid of one bidder and media type, up to its deal exceptions."""

    check: Check
    quiet: bool  # enforced, with no warning nor failure (the common case)
    warnings: tuple[str, ...]  # added for each bid, before anything else of the check
    error: str  # the failure of every bid that gets this far ("" none)
    enforced: bool
    block_unknown: bool
    deal_actions: tuple[ActionOverride, ...]  # () : a deal's exceptions are deal_default
    deal_default: tuple[Any, ...]


# where a check's blocked values are in BlockingAttributes (a named tuple), and the bid's key
_SLOTS = {"badv": (0, "adomain"), "bcat": (2, "cat"), "bapp": (1, "bundle"), "battr": (4, "attr")}
BATTR_SLOT = 4  # where battr is in BlockingAttributes


class ResponsePlan(NamedTuple):
    """The checks of a bid of one bidder and media type."""

    steps: tuple[CheckStep | None, ...]  # in CHECKS order; None for one not enforced that says nothing
    quick: QuickCheck | None  # when every check is quiet: a glance at a bid without a deal


class QuickCheck(NamedTuple):
    """The enforced checks, when all are quiet: (attributes slot, bid key, block_unknown) of each
    list-valued one (badv, bcat, battr), and whether bapp's and bcat's cattax check are on."""

    lists: tuple[tuple[int, str, bool], ...]
    bapp: bool
    cattax: bool


_QUICK_CHECKS: dict[QuickCheck, QuickCheck] = {}


def response_plan(cfg: Config, bidder: str, bid_type: str) -> ResponsePlan:
    """Remembered under ``("response", bidder, bid_type)``."""
    return remembered(cfg, ("response", bidder, bid_type), _response_plan, cfg, bidder, bid_type)


def _response_plan(cfg: Config, bidder: str, bid_type: str) -> ResponsePlan:
    steps = tuple(_check_step(cfg, check, bidder, frozenset((bid_type,))) for check in CHECKS)
    enforced = [step for step in steps if step is not None]
    if any(not step.quiet for step in enforced):
        return ResponsePlan(steps, None)
    names = {step.check.attribute for step in enforced}
    lists = tuple(
        (*_SLOTS[step.check.attribute], step.block_unknown) for step in enforced if step.check.attribute != "bapp"
    )
    quick = QuickCheck(lists, "bapp" in names, "bcat" in names)
    # one object for equal checks (raw_bidder_response keeps its last glance of one, and the bidders of an
    # auction mostly have the same); a few dozen can exist at most
    return ResponsePlan(steps, _QUICK_CHECKS.setdefault(quick, quick))


def _check_step(cfg: Config, check: Check, bidder: str, media: frozenset[str]) -> CheckStep | None:
    field = check.enforce
    actions = cfg.overrides[field]
    if not actions and not cfg.values[field]:
        return None
    warnings: list[str] = []
    enforce = block_unknown = False
    error = ""
    try:
        enforce, message = first_or_default(bidder, media, get_is_active, actions, cfg.values[field])
        if message:
            warnings.append(message)
        if enforce and check.unknown is not None:
            field = check.unknown
            block_unknown, message = first_or_default(
                bidder, media, get_is_active, cfg.overrides[field], cfg.values[field]
            )
            if message:
                warnings.append(message)
    except OverrideError as exc:
        error = f"failed to process {check.attribute} block checking: failed to get override for {field}: {exc}"
    if not (enforce or warnings or error):
        return None
    deals = check.deals
    quiet = enforce and not warnings and not error
    return CheckStep(
        check, quiet, tuple(warnings), error, enforce, block_unknown, cfg.overrides[deals], cfg.values[deals]
    )
