"""Call plans: a prepared AMP request's bidder calls worked out once, spliced per auction.

For a prepared AMP request (:mod:`hbserver.auction.request.prepared`) everything from floors resolution to
the bytes each adapter sends — privacy, the per-bidder split, first-party data, 2.5 conversion,
the adapters' ``make_requests`` — depends on the stored request, the account and a handful of
per-auction values: the user agent, the IP address, the buyeruids from the cookie, the bidders'
``tmax``, a ``{{UUID}}`` request id and generated transaction ids. A :class:`CallPlan` records that
work once with placeholders in those values' places and, per auction, splices the real values in.

Whether splicing is right is checked, not assumed: the plan is built twice with two different sets
of placeholders, and kept only when the second run's every body, header, URI and request dict is
exactly the first's with the placeholders swapped (:func:`build_plan`). Anything that transforms a
value (an IP masked by privacy, a gzip body, a URL-encoded user agent, a random id an adapter makes)
shows up as a difference and the request keeps the full path. What a value could make code branch
on differently without showing in two runs — empty or not, IPv4 or IPv6, a buyeruid present or
not, DNT, Sec-GPC — is part of the plan's key (:func:`variant_key`), and a value JSON would escape
or a ``tmax`` below 1 takes the full path for that auction (:func:`spliceable`).

The requests a plan's auctions get (for ``make_bids``, metrics, seat-non-bids) are copies only along
the placeholders' paths and share the rest with the plan: like ``split_request``'s copies, they
are read-only. A plan also keeps its first run's auction set-up (:mod:`hbserver.auction.request.setup`; the
second run's must decide the same) and floors enforcement's reading of the floors-resolved request
(:class:`~hbserver.floors.enforce.FloorEnforcement`, whose fields hold no placeholder), so a planned
auction works out neither.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from hbserver.adapters.base import Adapter, BidderError, RequestData
from hbserver.auction.exchange.privacy import AuctionPrivacy, BidderPrivacy
from hbserver.auction.exchange.split import BidderRequest
from hbserver.auction.request.setup import AuctionSetup
from hbserver.floors.enforce import FloorEnforcement
from hbserver.stores.lru import SeenBefore
from hbserver.web.urls import url_host

PLAN_VARIANTS_MAX = 32  # plans kept per prepared request (one per variant_key); more: the oldest goes
PLANS_MAX = 8192  # plans kept per worker, in all its prepared requests (a plan is some 10-30 KB)
PLAN_BUILDS_PER_MINUTE = 16  # per prepared request: a build runs the pipeline twice

# Slot numbers of the per-auction values; buyeruids and transaction ids follow in the order the plan
# lists them.
SLOT_UA, SLOT_IP, SLOT_ID, SLOT_TMAX, SLOT_PAGE, SLOT_DOMAIN = 0, 1, 2, 3, 4, 5
FIXED_SLOTS = 6

# Two sets of placeholders, each value of the class the real one is of (an IPv4 address for an IPv4
# address...) and differing from the other set in every part a transformation could keep.
PLACEHOLDER_UA = ("hbPlanUserAgentQx7A", "hbPlanUserAgentWk2B")
PLACEHOLDER_IPV4 = ("198.51.100.71", "203.0.113.93")
PLACEHOLDER_IPV6 = ("2001:db8:a1a1:b2b2:c3c3:d4d4:e5e5:f6f6", "2400:cb00:1a2b:3c4d:5e6f:7a8b:9cad:bef1")
PLACEHOLDER_TMAX = (918273, 827364)
PLACEHOLDER_UID = ("hbPlanUid{}QzA", "hbPlanUid{}JvB")
# An AMP page (curl) and its host, the page's scheme that of the real one (page_kind)
PLACEHOLDER_HOST = ("hbplanpageqx7a.example", "hbplanpagewk2b.example")
PLACEHOLDER_PATH = ("/amp/hbPlanPageQx7A.html", "/amp/hbPlanPageWk2B.html")
PAGE_SCHEMES = {1: "https://", 2: "http://"}  # by AmpPage.kind

_JSON_UNSAFE = frozenset('"\\<>&')


def spliceable(text: str) -> bool:
    """Whether ``text`` reads the same in a JSON string, a header value and the placeholder's place:
    printable ASCII without the characters a JSON encoder escapes (some also escape ``<>&``)."""
    return text.isascii() and text.isprintable() and _JSON_UNSAFE.isdisjoint(text)


class AmpPage(NamedTuple):
    """An AMP page (``curl``): ``site.page``, its host (``site.domain``; "" when it has none) and its kind
    for a call plan: 1 or 2, an https or http page that reads the same spliced; -1, one that does not."""

    url: str
    host: str
    kind: int


# scheme://host, then nothing or /, ? or # and the rest: the host in the characters a URL parser leaves as
# they are, the whole in printable ASCII less what a JSON encoder escapes (spliceable(), in one C pass)
_PLAIN_PAGE = re.compile(r'(https?)://([a-z0-9][a-z0-9.-]*)(?:[/?#][\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x5b\x5d-\x7e]*)?')
_new_page = tuple.__new__  # AmpPage(...) runs a Python-level __new__; this is the same tuple, in C


def amp_page(curl: str) -> AmpPage | None:
    """The page ``curl`` names, None without one. A plain page (no port, user info, upper case or
    character JSON would escape) takes its host from the match, as ``url_host`` would find it."""
    if not curl:
        return None
    match = _PLAIN_PAGE.fullmatch(curl)
    if match is not None:
        return _new_page(AmpPage, (curl, match.group(2), 1 if match.group(1) == "https" else 2))
    return _new_page(AmpPage, (curl, url_host(curl), -1))


def placeholder_page(kind: int, which: int) -> tuple[str, str]:
    """Placeholder set ``which``'s page of ``kind`` (an :class:`AmpPage` kind) and its host."""
    host = PLACEHOLDER_HOST[which]
    return f"{PAGE_SCHEMES[kind]}{host}{PLACEHOLDER_PATH[which]}", host


def with_page(request: dict[str, Any], page: str, host: str) -> dict[str, Any]:
    """``request`` (its top level and ``site`` copied) with the AMP page as ``site.page`` and its host,
    when it has one, as ``site.domain``: what :func:`hbserver.auction.request.amp.amp_request` sets from ``curl``."""
    site = request.get("site")
    out = dict(request)
    out["site"] = new_site = {**(site if isinstance(site, dict) else {}), "page": page}
    if host:
        new_site["domain"] = host
    return out


def ip_kind(ip: str) -> int:
    """0: no address, 4 or 6: the field :func:`hbserver.auction.core` puts it in."""
    if not ip:
        return 0
    return 6 if ":" in ip else 4


T = TypeVar("T", bytes, str)


@dataclass(frozen=True, slots=True)
class Template(Generic[T]):
    """Text with value slots: ``segments[0] + values[slots[0]] + segments[1] + ...``."""

    segments: tuple[T, ...]
    slots: tuple[int, ...]
    # (slot, the segment after it) in order: what render walks
    parts: tuple[tuple[int, T], ...] = ()

    @classmethod
    def of(cls, segments: tuple[T, ...], slots: tuple[int, ...]) -> Template[T]:
        return cls(segments, slots, tuple(zip(slots, segments[1:], strict=True)))

    def render(self, values: Sequence[T]) -> T:
        first = self.segments[0]
        if not self.parts:
            return first
        out = [first]
        for slot, segment in self.parts:
            out += (values[slot], segment)
        return first[:0].join(out)


def template_of(text: T, values: Sequence[T | None]) -> Template[T]:
    """``text`` cut at every occurrence of the non-empty ``values`` (the longest first where they overlap)."""
    wanted = {value: slot for slot, value in enumerate(values) if value}
    if not wanted:
        return Template.of((text,), ())
    ordered = sorted(wanted, key=len, reverse=True)
    bar: Any = "|" if isinstance(text, str) else b"|"
    pattern = re.compile(bar.join(re.escape(value) for value in ordered))  # built once per plan, not per auction
    segments: list[T] = []
    slots: list[int] = []
    at = 0
    for match in pattern.finditer(text):
        segments.append(text[at : match.start()])
        slots.append(wanted[match.group()])
        at = match.end()
    segments.append(text[at:])
    return Template.of(tuple(segments), tuple(slots))


Path = tuple[Any, ...]


_COPY_DICT, _COPY_LIST = -1, -2


@dataclass(frozen=True, slots=True)
class DictTemplate:
    """A request dict with value slots at ``paths``: :meth:`render` copies only the containers on them."""

    doc: dict[str, Any]
    # the slots' paths as steps over containers numbered as they are copied (0: the top level):
    # (container, key, slot >= 0) sets a value; (container, key, _COPY_*) copies the child at key
    steps: tuple[tuple[int, Any, int], ...]

    @classmethod
    def of(cls, doc: dict[str, Any], paths: list[tuple[Path, int]]) -> DictTemplate:
        numbered: dict[Path, int] = {(): 0}
        steps: list[tuple[int, Any, int]] = []
        for path, slot in paths:
            node: Any = doc
            for depth in range(len(path) - 1):
                key = path[depth]
                node = node[key]
                prefix = path[: depth + 1]
                if prefix not in numbered:
                    numbered[prefix] = len(numbered)
                    steps.append((numbered[path[:depth]], key, _COPY_DICT if isinstance(node, dict) else _COPY_LIST))
            steps.append((numbered[path[:-1]], path[-1], slot))
        return cls(doc, tuple(steps))

    def render(self, values: Sequence[Any]) -> dict[str, Any]:
        nodes: list[Any] = [dict(self.doc)]
        for container, key, slot in self.steps:
            parent = nodes[container]
            if slot >= 0:
                parent[key] = values[slot]
            else:
                child = dict(parent[key]) if slot == _COPY_DICT else list(parent[key])
                parent[key] = child
                nodes.append(child)
        return nodes[0]


def dict_template(doc: dict[str, Any], values: Sequence[Any]) -> DictTemplate | None:
    """``doc`` with the places holding one of ``values`` (exactly) as slots; None when a string holds
    a placeholder inside other text (a value transformed, not carried)."""
    wanted: dict[Any, int] = {}
    texts: list[str] = []
    for slot, value in enumerate(values):
        if value is None or value == "":
            continue
        wanted[(type(value), value)] = slot
        if isinstance(value, str):
            texts.append(value)
    paths: list[tuple[Path, int]] = []

    def walk(node: Any, path: Path) -> bool:
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            slot = wanted.get((type(node), node))
            if slot is not None:
                paths.append((path, slot))
                return True
            return not (isinstance(node, str) and any(text in node for text in texts))
        return all(walk(child, (*path, key)) for key, child in items)

    if not walk(doc, ()):
        return None
    return DictTemplate.of(doc, paths)


@dataclass(frozen=True, slots=True)
class CallTemplate:
    """One adapter call with slots in its body and header values (its URI and method are fixed)."""

    method: str
    uri: str
    body: Template[bytes] | None
    headers: tuple[tuple[str, Template[str]], ...]
    imp_ids: list[str]
    # the headers when none has a slot: one dict for every auction (read-only, as a call's headers are)
    fixed_headers: dict[str, str] | None = None

    def render(self, texts: Sequence[str], raw: Sequence[bytes]) -> RequestData:
        body = self.body.render(raw) if self.body is not None else None
        headers = self.fixed_headers
        if headers is None:
            headers = {name: value.render(texts) for name, value in self.headers}
        return RequestData(self.method, self.uri, body, headers, self.imp_ids)


@dataclass(frozen=True, slots=True)
class BidderPlan:
    """One bidder's part of a plan: its request (for ``make_bids``, metrics) and its calls."""

    name: str
    resolved: Any  # ResolvedBidder
    request: DictTemplate
    privacy: BidderPrivacy
    buyeruid_scrubbed: bool
    adapter: Adapter
    compress: bool
    calls: tuple[CallTemplate, ...]
    errors: tuple[BidderError, ...]

    def bidder_request(self, values: Sequence[Any]) -> BidderRequest:
        own = self.request.render(values)
        return BidderRequest(self.name, self.resolved, own, self.privacy, self.buyeruid_scrubbed)


@dataclass(frozen=True, slots=True)
class PlanRun:
    """What one run of the pipeline made (:func:`build_plan` compares two)."""

    values: list[Any]  # by slot: the placeholders this run used (None: the slot is unused)
    request: dict[str, Any]  # floors resolved
    setup: AuctionSetup
    floor_enforcement: FloorEnforcement | None  # None: floors off
    floor_errors: list[str]
    privacy: AuctionPrivacy
    blocked: dict[str, BidderPrivacy]
    notices: dict[str, list[str]]
    bidders: list[tuple[BidderRequest, Adapter, bool, list[RequestData], list[BidderError]]]


@dataclass(frozen=True, slots=True)
class CallPlan:
    """The checked result of two :class:`PlanRun`: templates for every per-auction value."""

    request: DictTemplate
    setup: AuctionSetup  # the first run's: it reads no placeholder
    floor_enforcement: FloorEnforcement | None  # the first run's, as setup
    floor_errors: tuple[str, ...]
    privacy: AuctionPrivacy
    blocked: Mapping[str, BidderPrivacy]
    notices: Mapping[str, tuple[str, ...]]
    bidders: tuple[BidderPlan, ...]
    tids: int  # transaction ids generated per auction (slots after the uids)


def build_plan(first: PlanRun, second: PlanRun, tids: int) -> CallPlan | None:
    """The plan when ``second`` is ``first`` with its placeholders swapped for the second set; else None."""
    a, b = first.values, second.values
    texts_a = [_text(value) for value in a]
    texts_b = [_text(value) for value in b]
    raw_a = [value.encode() if value is not None else None for value in texts_a]
    raw_b = [value.encode() if value is not None else None for value in texts_b]
    if (
        first.floor_errors != second.floor_errors
        or first.blocked != second.blocked
        or first.notices != second.notices
        or _privacy_view(first.privacy) != _privacy_view(second.privacy)
        or _setup_view(first.setup) != _setup_view(second.setup)
        or len(first.bidders) != len(second.bidders)
    ):
        return None
    request = _checked_dict(first.request, second.request, a, b)
    if request is None:
        return None
    bidders: list[BidderPlan] = []
    for one, two in zip(first.bidders, second.bidders, strict=True):
        bidder_a, adapter, compress, calls_a, errors_a = one
        bidder_b, _, _, calls_b, errors_b = two
        if (
            bidder_a.name != bidder_b.name
            or bidder_a.privacy != bidder_b.privacy
            or bidder_a.buyeruid_scrubbed != bidder_b.buyeruid_scrubbed
            or [str(e) for e in errors_a] != [str(e) for e in errors_b]
            or len(calls_a) != len(calls_b)
        ):
            return None
        own = _checked_dict(bidder_a.request, bidder_b.request, a, b)
        if own is None:
            return None
        templates: list[CallTemplate] = []
        for call_a, call_b in zip(calls_a, calls_b, strict=True):
            template = _checked_call(call_a, call_b, texts_a, texts_b, raw_a, raw_b)
            if template is None:
                return None
            templates.append(template)
        bidders.append(BidderPlan(
            bidder_a.name, bidder_a.resolved, own, bidder_a.privacy, bidder_a.buyeruid_scrubbed,
            adapter, compress, tuple(templates), tuple(errors_a),
        ))  # fmt: skip
    return CallPlan(
        request,
        first.setup,
        first.floor_enforcement,
        tuple(first.floor_errors),
        first.privacy,
        dict(first.blocked),
        {name: tuple(texts) for name, texts in first.notices.items()},
        tuple(bidders),
        tids,
    )


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _privacy_view(privacy: AuctionPrivacy) -> tuple[Any, ...]:
    """What a plan keeps of the privacy it read: its warnings and what the metrics count."""
    return (
        privacy.regs.warnings, privacy.gdpr_enforced, privacy.ccpa, privacy.ccpa_provided, privacy.lmt, privacy.coppa
    )


def _setup_view(setup: AuctionSetup) -> tuple[Any, ...]:
    """What a set-up decides that placeholders could move (none should): its warnings and switches."""
    return (
        setup.warnings, setup.imp_ids, setup.currency, setup.floors_on, setup.debug, setup.caching,
        setup.return_all, setup.targeting,
    )


def _checked_dict(first: dict[str, Any], second: dict[str, Any], a: list[Any], b: list[Any]) -> DictTemplate | None:
    template = dict_template(first, a)
    if template is None or template.render(b) != second:
        return None
    return template


def _checked_call(
    first: RequestData,
    second: RequestData,
    texts_a: list[str | None],
    texts_b: list[str | None],
    raw_a: list[bytes | None],
    raw_b: list[bytes | None],
) -> CallTemplate | None:
    if first.method != second.method or first.uri != second.uri or list(first.imp_ids) != list(second.imp_ids):
        return None
    if any(text and text in first.uri for text in texts_a):  # a URI would need the value percent-encoded
        return None
    if list(first.headers) != list(second.headers):
        return None
    fill_texts = [value or "" for value in texts_b]
    fill_raw = [value or b"" for value in raw_b]
    headers: list[tuple[str, Template[str]]] = []
    for name, value in first.headers.items():
        template = template_of(value, texts_a)
        if template.render(fill_texts) != second.headers[name]:
            return None
        headers.append((name, template))
    body = None
    if first.body is not None:
        if second.body is None:
            return None
        body = template_of(first.body, raw_a)
        if body.render(fill_raw) != second.body:
            return None
    elif second.body is not None:
        return None
    fixed = None if any(template.slots for _, template in headers) else dict(first.headers)
    return CallTemplate(first.method, first.uri, body, tuple(headers), list(first.imp_ids), fixed)


def variant_key(
    ua: str,
    ip: str,
    dnt: str,
    gpc: str,
    uids: Mapping[str, str],
    uid_keys: Sequence[str],
    budget_ms: int,
    page: int = 0,
    geo: tuple[tuple[str, str], ...] = (),
) -> tuple[Any, ...]:
    """What must be equal for two auctions of one prepared request to share a plan (besides the
    account and the server's rates, which :class:`PlanTable` holds); ``page``: the :class:`AmpPage` kind;
    ``geo``: what the geo lookup found for the visitor's address (floors, privacy and activities read
    ``device.geo``, so each place has plans of its own)."""
    return (
        bool(ua),
        ip_kind(ip),
        dnt if dnt in ("0", "1") else "",
        gpc == "1",
        tuple(bool(uids.get(key)) for key in uid_keys),
        budget_ms,
        page,
        geo,
    )


class PlanTable:
    """A prepared request's plans by :func:`variant_key`; a None plan: that variant cannot be planned.

    A plan is built the second time its variant comes (:meth:`seen_before`). Each plan holds the
    account and rates objects it was built with and serves only while the auction has the same ones.
    A table keeps :data:`PLAN_VARIANTS_MAX` plans (the oldest goes first) and a worker :data:`PLANS_MAX`
    in all its tables (a table gone with its prepared request gives its share back); builds are bounded
    (:data:`PLAN_BUILDS_PER_MINUTE`), so inputs that never settle (an account store without a cache
    hands out a new account every time) cost two runs only now and then.
    """

    __slots__ = ("_builds", "_plans", "_seen", "_window")
    live = 0  # plans held by every table of this worker

    def __init__(self) -> None:
        self._plans: dict[tuple[Any, ...], tuple[Any, Any, CallPlan | None]] = {}
        self._seen = SeenBefore(PLAN_VARIANTS_MAX)  # variants met once, no plan yet
        self._window = 0.0  # monotonic time the current minute of builds started
        self._builds = 0

    def __del__(self) -> None:
        PlanTable.live -= len(self._plans)

    def get(self, key: tuple[Any, ...], account: Any, rates: Any) -> tuple[bool, CallPlan | None]:
        """(known, plan)."""
        entry = self._plans.get(key)
        if entry is None or entry[0] is not account or entry[1] is not rates:
            return False, None
        return True, entry[2]

    def seen_before(self, key: tuple[Any, ...]) -> bool:
        """Whether variant ``key`` came before (planned, refused or met once); else it is marked now.

        A plan is built only for a variant met before: a build runs the pipeline twice, so a variant
        that never comes back would make its one auction dearer than no plan at all."""
        return key in self._plans or self._seen.check(key)

    def may_build(self, now: float) -> bool:
        """Whether a build is allowed at monotonic time ``now`` (and counts it)."""
        if PlanTable.live >= PLANS_MAX:
            return False
        if now - self._window >= 60.0:
            self._window, self._builds = now, 0
        if self._builds >= PLAN_BUILDS_PER_MINUTE:
            return False
        self._builds += 1
        return True

    def put(self, key: tuple[Any, ...], account: Any, rates: Any, plan: CallPlan | None) -> None:
        plans = self._plans
        if key in plans:
            del plans[key]
            PlanTable.live -= 1
        elif len(plans) >= PLAN_VARIANTS_MAX:
            del plans[next(iter(plans))]
            PlanTable.live -= 1
        plans[key] = (account, rates, plan)
        PlanTable.live += 1


def recording(generate: Callable[[], str], into: list[str]) -> Callable[[], str]:
    """``generate`` that also appends what it made to ``into`` (the transaction ids of a plan run)."""

    def generated() -> str:
        value = generate()
        into.append(value)
        return value

    return generated
