"""The bidder_request hook (PBS-Go's ``hook_bidderrequest.go``): sets the account's blocking lists
on a bidder's request where the request has none: ``badv``, ``bapp``, ``bcat`` and ``cattax`` at
the top, ``btype``/``battr`` on each imp's banner and ``battr`` on its video and audio.

What each field takes for a bidder and media types comes from ``plans`` (computed once per
config); only what depends on this request (the fields it already has, its imps) is done here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

from hbserver.hooks.api import NO_ITEMS, BidderRequestPayload, ChangedBatch, HookResult, InvocationContext, Mutation
from hbserver.modules.ortb2blocking.attributes import BlockingAttributes
from hbserver.modules.ortb2blocking.config import Config
from hbserver.modules.ortb2blocking.errors import BlockingFailure
from hbserver.modules.ortb2blocking.overrides import request_media_types
from hbserver.modules.ortb2blocking.plans import (
    IMP_FIELDS,
    IMP_KEYS,
    ImpStep,
    RequestPlan,
    StaticRequest,
    TopStep,
    imp_plan,
    request_plan,
    static_keys,
    top_plan,
)

Result = HookResult[BidderRequestPayload]
Imps = list[dict[str, Any]]
ByImp = dict[str, tuple[int, ...]]
_NO_VALUES: tuple[str, ...] = ()
ImpChange = tuple[str, list[tuple[str, tuple[int, ...]]]]  # a media object's (field, values) to set
_NOTHING: dict[str, Any] = {}
_NOTHING_RESULT: Result = HookResult()  # every default: shared, as results are read, never changed
_OWN_FIELDS = frozenset(("badv", "bapp", "bcat", "cattax"))  # a request with none of them: the static plan's
_new_attributes = tuple.__new__  # BlockingAttributes from its six values, without its __new__'s keyword handling
_new_result = object.__new__  # a HookResult of defaults, without its constructor's call
_new_tuple = tuple.__new__  # a named tuple from its values, without its __new__'s keyword handling


def handle_bidder_request(cfg: Config, payload: BidderRequestPayload, context: dict[str, Any] | None = None) -> Result:
    """The hook; ``context``: the auction's module context (None: nothing kept for its other bidders).
    A plan without overrides answers a request without its own badv, bapp or bcat here (the common
    case): one mutation (the trace still lists each key), an auction's other bidders taking the first
    one's answer when their imps are the same."""
    request = payload.request
    if not isinstance(request, dict):
        raise BlockingFailure("payload contains a nil bid request", HookResult())
    plan: RequestPlan = cfg.memo.get("request") or request_plan(cfg)
    seen = _answer_for(plan.static, request, context)
    if seen is None:
        return _general_request(cfg, plan, request, payload.bidder)
    result: Result = _new_result(HookResult)  # every default (HookResult): the two fields set below
    result.module_context = {payload.bidder: seen.attributes}
    result.mutations = seen.mutations if seen.own else _own_mutations(plan.static, seen)  # type: ignore[arg-type]
    return result


def handle_bidder_request_batch(
    module: Any, ctx: InvocationContext, payloads: list[BidderRequestPayload]
) -> list[Result | Exception] | ChangedBatch:
    """The hook over an auction's bidders at once (the module's ``handle_bidder_request_batch``; ``module``
    its :class:`~.module.Ortb2BlockingModule`). Without account config, nothing. The common auction is one
    :class:`ChangedBatch`: each request without its own badv, bapp, bcat or cattax, its imps of the
    signature of the answer kept from an auction before (whose decisions are theirs); this auction's
    changed media objects made once and set, with the top fields, on each request by one apply (requests
    and imps are the bidders' own, media objects shared: hooks API). Others: :func:`_each_request`.

    One function, its named tuples read by index: it runs once an auction with its code and data cold,
    and each further function or field read by name (a generic lookup) costs cache lines (bench/PROFILE.md)."""
    raw = ctx.account_config
    if raw is None:
        return [_NOTHING_RESULT] * len(payloads)
    last = module._last
    cfg = last[1] if last[0] is raw else module._config(raw)
    context = ctx.module_context
    plan: RequestPlan = cfg.memo.get("request") or request_plan(cfg)
    static = plan[-1]  # RequestPlan.static
    if static is None or context is None:
        return _each_request(cfg, static, payloads, context)
    seen = static[9][0]  # (fields by index: an unpacking would also touch each field it does not need)
    cattax = static[5]
    if seen is None or not seen[4] or seen[1] != cattax:  # no answer kept, none with a mutation, or another cattax
        return _each_request(cfg, static, payloads, context)
    imp_values, seen_sig, attributes = static[8], seen[2], seen[3]
    bidders: dict[str, Any] = {}  # the module context the batch adds
    first: Any = None  # the first request's imp signature, equal to the kept answer's (compared once, deep);
    for payload in payloads:  # the others' compared with it (the auction's bidders share its objects: at once)
        request = payload.request  # (``in`` and a loop below: C code the auction runs anyway, hot)
        if (type(request) is not dict or "badv" in request or "bapp" in request or "bcat" in request
                or "cattax" in request or type(imps := request.get("imp")) is not list):  # fmt: skip
            return _each_request(cfg, static, payloads, context)
        sig: Any = []
        try:
            for imp in imps:
                sig.append(imp_values(imp))  # (id, each media object): raises where one is missing
        except (KeyError, TypeError, IndexError):  # an imp without a media object, or not an object
            sig = imp_signature(imps, static)
        if first is None:
            if sig is None or sig != seen_sig:
                return _each_request(cfg, static, payloads, context)
            first = sig
        elif sig != first:
            return _each_request(cfg, static, payloads, context)
        bidders[payload.bidder] = attributes
    imps = payloads[0].request["imp"]
    steps = []  # a loop, not a comprehension: no function made per auction
    for at, media, fields in seen[6]:  # places
        media_object = dict(imps[at][media])  # a changed copy: the media object is shared
        for field, values in fields:
            media_object[field] = list(values)
        steps.append((at, media, media_object))
    top = dict(zip(static[1], map(list, static[2])))  # noqa: B905 (equal lengths; strict= parses keywords: cold C code)
    if cattax:
        top["cattax"] = cattax
    return _new_tuple(ChangedBatch, (partial(_changed_result, static, seen, steps), partial(_set_all, top, steps),
                                     bidders))  # fmt: skip


def _each_request(
    cfg: Config, static: StaticRequest | None, payloads: list[BidderRequestPayload], context: dict[str, Any] | None
) -> list[Result | Exception]:
    """Each bidder's answer where the auction is not one changed batch: the bidders the static plan
    answers alike share one result, the module context of them all and one mutation that sets the
    answer without looking at the imps again (the executor applies it at once, to the requests looked
    at here); the others get the hook's own answer (or its exception)."""
    results: list[Result | Exception] = []
    last: StaticAnswer | None = None
    shared: Any = None
    last_sig: Any = None  # last's signature and attributes, and whether its cattax is the plan's (locals: a
    last_attributes: Any = None  # named tuple's field is a generic attribute lookup each time)
    plain_cattax = False
    for payload in payloads:
        request = payload.request
        if (plain_cattax and type(request) is dict and request.keys().isdisjoint(_OWN_FIELDS)
                and imp_signature(request.get("imp"), static) == last_sig):  # type: ignore[arg-type]  # fmt: skip
            shared.module_context[payload.bidder] = last_attributes  # the common case: the bidders before's imps
            results.append(shared)
            continue
        seen = _answer_for(static, request, context) if type(request) is dict and context is not None else None
        if seen is None or seen.steps is None:
            try:
                results.append(handle_bidder_request(cfg, payload, context))
            except Exception as exc:  # this bidder's failure alone
                results.append(exc)
            continue
        if seen is not last:
            last, shared = seen, _new_result(HookResult)
            last_sig, last_attributes, plain_cattax = seen.sig, seen.attributes, seen.cattax == static.cattax  # type: ignore[union-attr]
            shared.module_context = {}
            if seen.mutations:
                done = seen.mutations[0]
                apply = _set_known(static, seen.steps, seen.cattax)  # type: ignore[arg-type]
                shared.mutations = [_new_tuple(Mutation, (done.kind, done.key, apply, done.also))]
        shared.module_context[payload.bidder] = seen.attributes
        results.append(shared)
    return results


def _set_all(fields: dict[str, Any], steps: list[tuple[int, str, dict[str, Any]]],
             payloads: Sequence[BidderRequestPayload]) -> None:  # fmt: skip
    """A changed batch's apply (and a known answer's, for one request): ``fields`` on each request, each
    step's media object on its imp."""
    for payload in payloads:
        request = payload.request
        request.update(fields)
        if steps:
            imps = request["imp"]
            for position, name, media_object in steps:
                imps[position][name] = media_object


def _changed_result(
    static: StaticRequest, seen: StaticAnswer, steps: list[tuple[int, str, dict[str, Any]]],
    payload: BidderRequestPayload,
) -> Result:  # fmt: skip
    """A changed batch's result for one payload (made only when the outcomes are read): the answer's
    mutation, applying what the batch applied, and the bidder's attributes."""
    done = seen.mutations[0]
    result: Result = _new_result(HookResult)
    result.module_context = {payload.bidder: seen.attributes}
    apply = _set_known(static, steps, static.cattax)
    result.mutations = [_new_tuple(Mutation, (done.kind, done.key, apply, done.also))]
    return result


def _answer_for(static: StaticRequest | None, request: dict[str, Any], context: Any) -> StaticAnswer | None:
    """The static plan's answer for a request (None: no static plan, or the request has its own badv,
    bapp or bcat): the one kept when its imps are the last request's of the auction, else made."""
    if static is None or request.get("badv") or request.get("bapp") or request.get("bcat"):
        return None
    raw_imps = request.get("imp")
    if not isinstance(raw_imps, list):
        raw_imps = []
    present = request.get("cattax")
    cattax = None if isinstance(present, int) and present > 0 else static.cattax  # None: the request's own
    sig = imp_signature(raw_imps, static)
    seen: StaticAnswer | None = static.seen[0]
    if seen is None or seen.context is not context or context is None or seen.cattax != cattax or seen.sig != sig:
        seen = _seen_answer(static, seen, raw_imps, cattax, sig, context)
    return seen


def _seen_answer(
    plan: StaticRequest, seen: StaticAnswer | None, imps: list[Any], cattax: int | None, sig: list[Any] | None,
    context: dict[str, Any] | None,
) -> StaticAnswer:  # fmt: skip
    """The answer for an auction's imps other than the one kept: another auction's of equal imps
    takes its decisions, otherwise one is made (and kept, for imps of a signature in an auction)."""
    if (seen is not None and seen.context is not context and context is not None and sig is not None
            and seen.cattax == cattax and seen.sig == sig):  # fmt: skip
        seen = plan.seen[0] = _auction_answer(plan, seen, imps, sig, context)
        return seen
    seen = _static_answer(plan, imps, cattax, sig, context)
    if context is not None and sig is not None:
        plan.seen[0] = seen
    return seen


def _general_request(cfg: Config, plan: RequestPlan, request: dict[str, Any], bidder: str) -> Result:
    """What the hook answers where the static plan cannot: overrides, or a request's own top fields."""
    raw_imps = request.get("imp")
    imps: Imps = [imp for imp in raw_imps if isinstance(imp, dict)] if isinstance(raw_imps, list) else []
    result: Result = HookResult(mutations=[], warnings=[])
    if plan.top_static is not None and not (request.get("badv") or request.get("bapp") or request.get("bcat")):
        result.mutations.extend(plan.top_mutations)  # the common case: nothing to look at
        badv, bapp, bcat = plan.top_values
    else:  # only conditions look at the bidder and media types
        top = plan.top_static or top_plan(cfg, bidder, request_media_types(imps))
        badv, bapp, bcat = _top_fields(top, request, result)
    btype: ByImp = {}
    battr: ByImp = {}
    if plan.imp_fields:
        _imp_fields(cfg, plan, bidder, imps, result, btype, battr)
    cattax = 0
    present = request.get("cattax")
    if not (isinstance(present, int) and present > 0):
        cattax = plan.cattax
        result.mutations.append(plan.cattax_mutation)
    result.module_context = {bidder: _new_attributes(BlockingAttributes, (badv, bapp, bcat, btype, battr, cattax))}
    return result


class StaticAnswer(NamedTuple):
    """What the static plan answers for one auction's imps (kept on the plan for the auction's other
    bidders: their requests share the imps' ids and media objects, ``sig``). A later auction whose
    imps are equal takes its decisions (``attributes``, ``changes``, the mutation's keys) and makes
    its own changed media objects (equal values may differ in type: 1 and 1.0)."""

    context: dict[str, Any]  # the module context of the auction it was made for
    cattax: int | None
    sig: list[Any]  # imp_signature of the imps
    attributes: BlockingAttributes  # the same for every bidder (immutable)
    mutations: list[Mutation[BidderRequestPayload]]  # its one mutation, or none (shared by its results)
    changes: dict[str, list[ImpChange]]  # the imps' fields set, by imp id
    places: list[tuple[int, str, list[tuple[str, tuple[int, ...]]]]]  # each (position, media, fields) changed
    # with a mutation and imps of a signature: each (position, media, its changed copy) set on imps of ``sig``
    steps: list[tuple[int, str, dict[str, Any]]] | None
    # whether ``mutations`` is this answer's own; False: an earlier auction's, its keys right but its apply
    # not (_auction_answer leaves the mutation to be made where a per-call hook needs it: _own_mutations)
    own: bool = True


# the fields handle_bidder_request_batch reads by index (a read by name is a generic attribute lookup: cold
# cache lines on a path run once an auction), checked against their names once, here
_BY_INDEX = ((RequestPlan, {-1: "static"}),
             (StaticRequest, {1: "top_names", 2: "top_lists", 5: "cattax", 8: "imp_values", 9: "seen"}),
             (StaticAnswer, {1: "cattax", 2: "sig", 3: "attributes", 4: "mutations", 6: "places"}))  # fmt: skip
for _type, _names in _BY_INDEX:
    if any(_type._fields[index] != name for index, name in _names.items()):
        raise ImportError(f"{_type.__name__}'s fields moved: handle_bidder_request_batch reads them by index")


def imp_signature(imps: Any, plan: StaticRequest) -> list[Any] | None:
    """What the plan's answer for ``imps`` depends on: each imp's (id, media objects of ``plan.media``)
    where every imp is an object with all of them (the common case, in one C-level pass), else the
    imps' ids, then their media objects of each name (None where absent); None when an imp is not
    an object or the imps not a list."""
    if type(imps) is not list:
        return None
    try:
        return list(map(plan.imp_values, imps))
    except (KeyError, TypeError, IndexError):  # an imp without one of them, or not an object
        pass
    media = plan.media
    sig: list[Any] = []
    add = sig.append
    for imp in imps:
        if type(imp) is not dict:
            return None
        add(imp.get("id"))
    for name in media:
        for imp in imps:
            add(imp.get(name))
    return sig


def _static_answer(
    plan: StaticRequest, imps: list[Any], cattax: int | None, sig: list[Any] | None, context: Any
) -> StaticAnswer:
    btype: ByImp = {}
    battr: ByImp = {}
    changes: dict[str, list[ImpChange]] = {}  # by imp id
    changed = 0  # a bit per IMP_FIELDS index set on some imp
    places: list[tuple[int, str, list[tuple[str, tuple[int, ...]]]]] = []  # where _set_imps changes (unique ids)
    ids: list[str] = []
    for position, imp in enumerate(imps):
        if not isinstance(imp, dict):
            continue
        imp_id = imp.get("id")
        if not isinstance(imp_id, str):
            imp_id = ""
        ids.append(imp_id)
        for media, fields in plan.imp_groups:
            media_object = imp.get(media)
            if media_object is None:  # its values are the imp's all the same, but no media object is created
                for index, _, values in fields:
                    (battr if index else btype)[imp_id] = values
                continue
            own = media_object if isinstance(media_object, dict) else _NOTHING
            todo = None
            for index, field, values in fields:
                if own.get(field):
                    continue
                (battr if index else btype)[imp_id] = values
                changed |= 1 << index
                if todo is None:
                    todo = []
                todo.append((field, values))
            if todo is not None:
                changes.setdefault(imp_id, []).append((media, todo))
                if own is media_object:
                    places.append((position, media, todo))
    keys = plan.keys.get((changed, cattax is not None)) or static_keys(plan, changed, cattax is not None)
    mutations: list[Mutation[BidderRequestPayload]] = NO_ITEMS
    steps = None
    if keys[0]:
        if sig is not None and len(set(ids)) != len(ids):  # an id shared: each imp of it gets every change of it
            places = _imp_places(imps, changes)
        steps = (
            None if sig is None else [(at, media, _changed(imps[at][media], fields)) for at, media, fields in places]
        )
        apply = _set_static(changes, cattax, (plan, sig, steps))
        mutations = [Mutation("update", keys[0], apply, keys[1])]
    badv, bapp, bcat = plan.top_values
    attributes = _new_attributes(BlockingAttributes, (badv, bapp, bcat, btype, battr, cattax or 0))
    return StaticAnswer(context, cattax, sig or [], attributes, mutations, changes, places, steps)


def _auction_answer(
    plan: StaticRequest, seen: StaticAnswer, imps: list[Any], sig: list[Any], context: Any
) -> StaticAnswer:
    """``seen``'s decisions for another auction whose imps are equal to its (``sig``): the same
    attributes and keys, and this auction's own changed media objects. Its mutation is made only
    where a per-call hook asks (:func:`_own_mutations`): the batch makes its own from the steps."""
    mutations = seen.mutations
    steps = None
    if mutations:
        steps = [(at, media, _changed(imps[at][media], fields)) for at, media, fields in seen.places]
    values = (context, seen.cattax, sig, seen.attributes, mutations, seen.changes, seen.places, steps, not mutations)
    return _new_tuple(StaticAnswer, values)  # type: ignore[no-any-return]


def _own_mutations(plan: StaticRequest, seen: StaticAnswer) -> list[Mutation[BidderRequestPayload]]:
    """The mutation of an answer :func:`_auction_answer` made without one (the keys of the one it took,
    an apply of its own steps); the answer kept on the plan then has it."""
    done = seen.mutations[0]
    apply = _set_static(seen.changes, seen.cattax, (plan, seen.sig, seen.steps))
    mutations = [_new_tuple(Mutation, (done.kind, done.key, apply, done.also))]
    if plan.seen[0] is seen:
        plan.seen[0] = seen._replace(mutations=mutations, own=True)
    return mutations


def _imp_places(
    imps: list[dict[str, Any]], changes: dict[str, list[ImpChange]]
) -> list[tuple[int, str, list[tuple[str, tuple[int, ...]]]]]:
    """Where :func:`_set_imps` changes ``imps``: (position, media, the fields it sets there)."""
    places = []
    if changes:
        for position, imp in enumerate(imps):
            imp_id = imp.get("id")
            for media, fields in changes.get(imp_id if isinstance(imp_id, str) else "") or ():
                if isinstance(imp.get(media), dict):
                    places.append((position, media, fields))
    return places


def _changed(media_object: dict[str, Any], fields: list[tuple[str, tuple[int, ...]]]) -> dict[str, Any]:
    """A copy of a (shared) media object with ``fields`` set."""
    media_object = dict(media_object)
    for field, values in fields:
        media_object[field] = list(values)
    return media_object


def _set_static(
    changes: dict[str, list[ImpChange]],
    cattax: int | None,
    ahead: tuple[StaticRequest, list[Any] | None, list[tuple[int, str, Any]] | None],
) -> Callable[[BidderRequestPayload], BidderRequestPayload]:
    """Sets the plan's top fields, the imps' fields (by imp id, on their media objects, each replaced by a
    changed copy: it is shared) and ``cattax`` (None: left alone; 0: removed, as PBS-Go's JSON leaves
    a zero out) in place: the bidder's request and imps are its own at this stage (hooks API).
    ``ahead``: the plan, the imp_signature the hook saw and the imps' changed media objects made
    then, set as they are on imps of that signature (the auction's bidders share them)."""
    plan, sig, steps = ahead

    def apply(payload: BidderRequestPayload) -> BidderRequestPayload:
        request = payload.request
        request.update(_known_fields(plan, cattax))
        if changes:
            imps = request.get("imp")
            if steps is not None and sig is not None and imp_signature(imps, plan) == sig:
                for position, name, media_object in steps:  # type: ignore[union-attr]
                    imps[position][name] = media_object
            elif isinstance(imps, list):
                _set_imps(imps, changes)
        if cattax == 0:
            request.pop("cattax", None)
        return payload

    return apply


def _set_known(
    plan: StaticRequest, steps: list[tuple[int, str, dict[str, Any]]], cattax: int | None
) -> Callable[[BidderRequestPayload], BidderRequestPayload]:
    """:func:`_set_static` for requests whose imps are known to be of the answer's signature (the batch
    looked at each just before the executor applies it): :func:`_set_all` for one request, and its
    ``cattax`` removed where the answer's is 0."""
    fields = _known_fields(plan, cattax)
    drop_cattax = cattax == 0

    def apply(payload: BidderRequestPayload) -> BidderRequestPayload:
        _set_all(fields, steps, (payload,))
        if drop_cattax:
            payload.request.pop("cattax", None)
        return payload

    return apply


def _known_fields(plan: StaticRequest, cattax: int | None) -> dict[str, Any]:
    """The top fields a known answer sets: their lists made once for an auction's bidders (shared below
    their requests' top level, as their other objects are: hooks API), and ``cattax`` where it is set."""
    fields = dict(zip(plan.top_names, map(list, plan.top_lists), strict=True))
    if cattax:
        fields["cattax"] = cattax
    return fields


def _set_imps(imps: list[Any], changes: dict[str, list[ImpChange]]) -> None:
    for imp in imps:
        if not isinstance(imp, dict):
            continue
        imp_id = imp.get("id")
        for media, fields in changes.get(imp_id if isinstance(imp_id, str) else "") or ():
            media_object = imp.get(media)
            if isinstance(media_object, dict):
                imp[media] = _changed(media_object, fields)


def _top_fields(steps: tuple[TopStep, ...], request: dict[str, Any], result: Result) -> list[tuple[str, ...]]:
    """badv, bapp and bcat as set (``()`` where the request had its own)."""
    found = [_NO_VALUES, _NO_VALUES, _NO_VALUES]
    index = 0
    for step in steps:
        if not request.get(step.key):
            if step.error:
                raise BlockingFailure(step.error, result)
            if step.message:
                result.warnings.append(step.message)
            if step.mutation is not None:
                found[index] = step.values
                result.mutations.append(step.mutation)
        index += 1
    return found


def _imp_fields(
    cfg: Config, plan: RequestPlan, bidder: str, imps: Imps, result: Result, btype: ByImp, battr: ByImp
) -> None:
    """btype and battr by imp id, for every imp without its own (PBS-Go's ``findImpressionOverrides``:
    imps without the media type are looked at too; banner's, video's and audio's battr share a map)."""
    if plan.imp_static is not None:  # the same values for every imp, never a warning nor failure
        for index, field, media, values in plan.imp_static:
            found: ByImp = {}
            with_media: list[str] = []
            for imp in imps:
                imp_id = imp.get("id")
                if not isinstance(imp_id, str):
                    imp_id = ""
                media_object = imp.get(media)
                if media_object is not None:
                    with_media.append(imp_id)
                    if isinstance(media_object, dict) and media_object.get(field):
                        continue
                found[imp_id] = values
            (btype if index == 0 else battr).update(found)
            _add_mutation(result, index, found, with_media, len(imps))
        return
    steps = [imp_plan(cfg, bidder, imp) for imp in imps]
    messages: list[str] = []  # battr's: PBS-Go adds them to the warnings only when all three succeed
    for index in plan.imp_fields:
        if index == 0:
            btype.update(_imp_field(index, imps, steps, result, result.warnings))
        else:
            battr.update(_imp_field(index, imps, steps, result, messages))
    result.warnings.extend(messages)


def _imp_field(index: int, imps: Imps, steps: list[tuple[ImpStep, ...]], result: Result, messages: list[str]) -> ByImp:
    """One imp field's values by imp id, each imp's from its own plan, with the field's mutation."""
    field, media, _ = IMP_FIELDS[index]
    found: ByImp = {}
    with_media: list[str] = []
    for imp, imp_steps in zip(imps, steps, strict=True):
        imp_id = _imp_id(imp)
        media_object = imp.get(media)
        if media_object is not None:
            with_media.append(imp_id)
            if isinstance(media_object, dict) and media_object.get(field):
                continue
        step = imp_steps[index]
        if step.error:
            raise BlockingFailure(step.error, result)
        if step.message:
            messages.append(step.message)
        if step.values:
            found[imp_id] = step.values
    _add_mutation(result, index, found, with_media, len(imps))
    return found


def _add_mutation(result: Result, index: int, found: ByImp, with_media: list[str], imp_count: int) -> None:
    """The mutation of IMP_FIELDS[index] for the imps of ``found`` that offer its media type (no
    media object is ever created)."""
    if not found:
        return
    if len(with_media) == imp_count:  # every imp offers it
        targets = found
    else:
        targets = {imp_id: found[imp_id] for imp_id in with_media if imp_id in found}
        if not targets:
            return
    field, media, _ = IMP_FIELDS[index]
    result.mutations.append(Mutation("update", IMP_KEYS[index], _set_on_imps(targets, media, field)))


def _set_on_imps(by_imp: ByImp, media: str, field: str) -> Callable[[BidderRequestPayload], BidderRequestPayload]:
    """Sets ``imp.<media>.<field>`` on the imps in place: at bidder_request each imp object is the
    bidder's own (hooks API); its media object is shared, so it is replaced by a changed copy."""

    def apply(payload: BidderRequestPayload) -> BidderRequestPayload:
        imps = payload.request.get("imp")
        if not isinstance(imps, list):
            return payload
        for imp in imps:
            if isinstance(imp, dict):
                media_object = imp.get(media)
                if isinstance(media_object, dict):
                    imp_id = imp.get("id")
                    values = by_imp.get(imp_id if isinstance(imp_id, str) else "")
                    if values:
                        imp[media] = {**media_object, field: list(values)}
        return payload

    return apply


def _imp_id(imp: dict[str, Any]) -> str:
    found = imp.get("id")
    return found if isinstance(found, str) else ""
