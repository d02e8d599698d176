"""Call plans (hbserver.auction.exchange.callplan): a prepared AMP request's bidder calls built once and spliced per
auction must send every bidder exactly what the full path sends — body and headers — for every kind of
visitor, and a request whose calls are not a pure splice of the per-auction values must not be planned."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from hbserver.adapters.base import RequestData
from hbserver.auction import core
from hbserver.auction.exchange.callplan import (
    PLAN_BUILDS_PER_MINUTE,
    PLAN_VARIANTS_MAX,
    PLANS_MAX,
    AmpPage,
    PlanTable,
    amp_page,
    build_plan,
    dict_template,
    spliceable,
    template_of,
    variant_key,
)
from hbserver.auction.exchange.privacy import NOTHING_DONE
from hbserver.auction.request.amp import without_page
from hbserver.stores.lru import SeenBefore
from hbserver.web.urls import url_host
from tests.auction.helpers import bid, bidder_config
from tests.auction.test_amp_prepared import (
    QUERY,
    _answer_without_cache_ids,
    _cookie,
    _store,
    amp_visits,
    stored_request,
)


@pytest.mark.parametrize(
    ("text", "values", "fill", "expected"),
    [
        ("no slots", ["UA"], ["x"], "no slots"),
        ('{"ua":"UA","ip":"IP"}', ["UA", "IP"], ["Mozilla/5.0 (X)", "1.2.3.4"],
         '{"ua":"Mozilla/5.0 (X)","ip":"1.2.3.4"}'),
        ("UA-UA", ["UA"], ["x"], "x-x"),  # every occurrence
        ("UAB UA", ["UA", "UAB"], ["1", "2"], "2 1"),  # the longer value where they overlap
        ("a.b", ["a.b", None, ""], ["v", "w", "z"], "v"),  # regex characters are text; unused slots ignored
    ],
)
def test_template_splices_every_occurrence(text, values, fill, expected):
    assert template_of(text, values).render(fill) == expected
    raw = template_of(text.encode(), [v.encode() if v else v for v in values])
    assert raw.render([v.encode() for v in fill]) == expected.encode()


def test_dict_template_copies_only_the_containers_on_its_paths():
    shared = {"w": 300}
    doc = {"id": "ID", "device": {"ua": "UA", "w": 1}, "imp": [{"ext": {"tid": "T"}, "banner": shared}], "tmax": 9}
    template = dict_template(doc, ["UA", None, "ID", 9, "T"])
    assert template is not None
    out = template.render(["ua-1", None, "id-1", 120, "tid-1"])
    assert out == {"id": "id-1", "device": {"ua": "ua-1", "w": 1}, "imp": [{"ext": {"tid": "tid-1"}, "banner": shared}],
                   "tmax": 120}
    assert out["imp"][0]["banner"] is shared  # untouched subtrees are shared
    assert doc["device"]["ua"] == "UA" and doc["imp"][0]["ext"]["tid"] == "T"  # the template is left alone
    assert dict_template({"device": {"ua": "UA masked"}}, ["UA"]) is None  # a value transformed, not carried
    assert dict_template({"n": 9.0, "b": True}, [None, None, None, 9]).steps == ()  # ints only where ints were


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1", True),
        ("uid-123_ABC=", True),
        ('say "hi"', False),
        ("back\\slash", False),
        ("a<b", False),
        ("a&b", False),
        ("tab\there", False),
        ("naïve", False),
    ],
)
def test_spliceable(text, ok):
    assert spliceable(text) is ok


def test_variant_key_tells_apart_what_code_could_branch_on():
    base = dict(ua="u", ip="1.2.3.4", dnt="", gpc="", uids={"a": "x"}, uid_keys=("a", "b"), budget_ms=900)
    key = variant_key(**base)
    assert variant_key(**{**base, "ua": "other", "ip": "5.6.7.8", "uids": {"a": "y"}}) == key
    assert variant_key(**{**base, "dnt": "junk"}) == variant_key(**{**base, "dnt": ""})
    for change in ({"ua": ""}, {"ip": "::1"}, {"ip": ""}, {"dnt": "1"}, {"gpc": "1"}, {"uids": {}},
                   {"uids": {"a": "x", "b": "y"}}, {"budget_ms": 800}):
        assert variant_key(**{**base, **change}) != key, change


def test_plan_table_bounds_its_variants_and_its_builds():
    table, account, rates = PlanTable(), object(), object()
    assert table.get(("k",), account, rates) == (False, None)
    table.put(("k",), account, rates, None)
    assert table.get(("k",), account, rates) == (True, None)
    assert table.get(("k",), object(), rates) == (False, None)  # another account object: rebuilt
    live = PlanTable.live
    for index in range(PLAN_VARIANTS_MAX):
        table.put((index,), account, rates, None)
    assert table.get(("k",), account, rates) == (False, None)  # full: the oldest went
    assert table.get((0,), account, rates) == (True, None)
    assert PlanTable.live == live + PLAN_VARIANTS_MAX - 1
    assert [table.may_build(100.0) for _ in range(PLAN_BUILDS_PER_MINUTE + 1)][-2:] == [True, False]
    assert table.may_build(159.0) is False and table.may_build(160.0) is True
    del table
    assert PlanTable.live == live - 1  # a table gone gives its plans back


def test_no_build_beyond_the_worker_bound(monkeypatch):
    monkeypatch.setattr(PlanTable, "live", PLANS_MAX)
    assert PlanTable().may_build(0.0) is False
    monkeypatch.setattr(PlanTable, "live", PLANS_MAX - 1)
    assert PlanTable().may_build(0.0) is True


def _run(values, body, headers=None, uri="https://bidder.example/x", setup=None):
    from hbserver.auction.exchange.callplan import PlanRun

    call = RequestData("POST", uri, body, headers or {"Content-Type": "application/json"})
    bidder = core.BidderRequest("alpha", None, {"tmax": values[3]}, NOTHING_DONE)  # type: ignore[arg-type]
    return PlanRun(values, {}, setup or _SETUP, None, [], _PRIVACY, {}, {}, [(bidder, None, False, [call], [])])


class _Regs:
    warnings: tuple[Any, ...] = ()


class _Privacy:
    regs = _Regs()
    gdpr_enforced = ccpa = ccpa_provided = lmt = coppa = False


_PRIVACY: Any = _Privacy()


class _Setup:
    warnings: tuple[Any, ...] = ()
    imp_ids = frozenset({"imp-1"})
    currency, floors_on, debug, caching, return_all, targeting = "USD", False, False, False, False, None


_SETUP: Any = _Setup()


class _SetupWarned(_Setup):
    warnings = (("general", ("a warning naming uaB",)),)
A = ["uaA", "198.51.100.71", None, 918273]
B = ["uaB", "203.0.113.93", None, 827364]


@pytest.mark.parametrize(
    ("first", "second", "planned"),
    [
        (_run(A, b'{"ua":"uaA","ip":"198.51.100.71","tmax":918273}'),
         _run(B, b'{"ua":"uaB","ip":"203.0.113.93","tmax":827364}'), True),
        (_run(A, b'{"ip":"198.51.100.0"}'), _run(B, b'{"ip":"203.0.113.0"}'), False),  # masked
        (_run(A, b'{"tmax":918223}'), _run(B, b'{"tmax":827314}'), False),  # tmax - 50
        (_run(A, b'{"r":"1"}'), _run(B, b'{"r":"2"}'), False),  # something random
        (_run(A, b"{}", {"User-Agent": "uaA"}), _run(B, b"{}", {"User-Agent": "uaB"}), True),
        (_run(A, b"{}", {"User-Agent": "uaA"}), _run(B, b"{}", {"User-Agent": "x"}), False),
        (_run(A, b"{}", uri="https://b.example/?ua=uaA"), _run(B, b"{}", uri="https://b.example/?ua=uaB"), False),
        (_run(A, None), _run(B, b"{}"), False),
        (_run(A, b"{}"), _run(B, b"{}", setup=_SetupWarned()), False),  # the set-up moved with a placeholder
    ],
)
def test_build_plan_keeps_only_a_pure_splice(first, second, planned):
    plan = build_plan(first, second, 0)
    assert (plan is not None) is planned
    if plan is not None:
        call = plan.bidders[0].calls[0].render(["Mozilla/5.0", "1.2.3.4", "", "250"],
                                               [b"Mozilla/5.0", b"1.2.3.4", b"", b"250"])
        assert b"uaA" not in (call.body or b"") and "uaA" not in call.headers.get("User-Agent", "")


@pytest.mark.parametrize(
    ("headers", "fixed"),
    [({"Content-Type": "application/json"}, True), ({"Content-Type": "application/json", "User-Agent": "uaA"}, False)],
)
def test_headers_without_a_slot_are_one_dict_for_every_auction(headers, fixed):
    second = {name: value.replace("uaA", "uaB") for name, value in headers.items()}
    plan = build_plan(_run(A, b"{}", headers), _run(B, b"{}", second), 0)
    assert plan is not None
    template = plan.bidders[0].calls[0]
    one, two = (template.render([ua, "1.2.3.4", "", "250"], [ua.encode(), b"1.2.3.4", b"", b"250"])
                for ua in ("Mozilla/5.0", "curl/8.0"))
    assert (one.headers is two.headers) is fixed
    assert one.headers == {name: value.replace("uaA", "Mozilla/5.0") for name, value in headers.items()}
    assert two.headers == {name: value.replace("uaA", "curl/8.0") for name, value in headers.items()}


# --- end to end: the app with mock bidders, plans on against plans off -----------------------------------

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TMAX = re.compile(r'"tmax": \d+')

VISITS = [
    {"User-Agent": "Mozilla/5.0 (Linux; Android 14) Chrome/120.0", "X-Forwarded-For": "203.0.113.1",
     "Cookie": _cookie("uid-1")},
    {"X-Forwarded-For": "2a00:1450::7", "DNT": "1", "Sec-GPC": "1"},  # no user agent, IPv6 (public)
    {"User-Agent": 'quote " and & amp', "X-Forwarded-For": "203.0.113.3"},  # not spliceable: full path
    {"User-Agent": "Mozilla/5.0 (iPhone) Safari", "X-Forwarded-For": "198.51.100.4", "Cookie": _cookie("uid-4")},
]
FLOORS = {"enabled": True, "floormin": 0.1, "data": {"currency": "USD", "modelgroups": [
    {"schema": {"fields": ["mediaType"]}, "values": {"banner": 0.5}, "default": 0.2}]}}  # fmt: skip


@pytest.mark.parametrize(
    ("stored", "query", "planned"),
    [
        (stored_request(), QUERY, True),
        (stored_request(id="{{UUID}}"), QUERY, True),
        (stored_request(device={"ua": "stored-ua", "w": 320}), QUERY, True),
        (stored_request(ext={"prebid": {"floors": FLOORS}}), QUERY, True),
        (stored_request(regs={"ext": {"us_privacy": "1YNN"}}), QUERY, True),
        (stored_request(device={"lmt": 1}), QUERY, False),  # the IP masked for every bidder: not a splice
        (stored_request(ext={"prebid": {"floors": {**FLOORS, "skiprate": 100}}}), QUERY, False),  # a draw
        (stored_request(), QUERY + "&consent_type=3&consent_string=bad", True),
    ],
)
async def test_planned_auctions_send_what_the_full_path_sends(
    make_client, bidders, data_dir, monkeypatch, stored, query, planned
):
    bidders.bids["alpha"] = [bid("slot-1", 1.5, "a1")]
    bidders.bids["beta"] = [bid("slot-1", 0.7, "b1")]
    _store(data_dir, "t1", stored)
    started: list[int] = []
    original = core.start_planned

    def counted(*args: Any, **kwargs: Any) -> Any:
        started.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(core, "start_planned", counted)
    runs, raw = {}, {}
    for plans_on in (True, False):
        if not plans_on:
            monkeypatch.setattr(core.AuctionService, "_plan_for", lambda *args: (None, []))
        # twice: a request is prepared on its second visit, and a plan built on its variant's second
        answers = [(status, _answer_without_cache_ids(json.loads(text)))
                   for status, text in await amp_visits(make_client, bidders, query, VISITS * 2)]
        sent = {
            name: [
                (TMAX.sub('"tmax": 0', UUID.sub("<uuid>", json.dumps(body, sort_keys=True))),
                 {k: v for k, v in headers.items() if k not in ("Content-Length", "Host", "Date")})
                for body, headers in zip(bidders.received[name], bidders.headers[name], strict=True)
            ]
            for name in sorted(bidders.received)
        }
        runs[plans_on] = (answers, sent)
        raw[plans_on] = list(bidders.received["alpha"])
    assert runs[True] == runs[False]
    assert bool(started) is planned
    if planned:  # every visit of the second round but the one whose user agent JSON would escape
        assert len(started) == len(VISITS) - 1
        sent = raw[True][len(VISITS):]
        assert sent[0]["device"]["ua"] == VISITS[0]["User-Agent"] or "ua" in stored.get("device", {})
        assert sent[1]["device"]["ipv6"] == "2a00:1450::7" and sent[1]["device"]["dnt"] == 1
        assert [s.get("user", {}).get("buyeruid") for s in sent] == ["uid-1", None, None, "uid-4"]
        assert len({s["source"]["tid"] for s in sent}) == len(VISITS)  # each auction its own tid
        if stored["id"] == "{{UUID}}":
            assert len({s["id"] for s in sent}) == len(VISITS)


# --- the page (curl): one prepared request and plan for every page of a slot, the page spliced in ----------

PAGE_QUERY = QUERY.replace("curl=https%3A%2F%2Fpub.example%2Fpage", "curl={curl}")
DOMAIN_FLOORS = {"enabled": True, "data": {"currency": "USD", "modelgroups": [
    {"schema": {"fields": ["domain"]}, "values": {"a.example": 0.5}, "default": 0.1}]}}  # fmt: skip
DEVICE_FLOORS = {"enabled": True, "data": {"currency": "USD", "modelgroups": [
    {"schema": {"fields": ["deviceType"]}, "values": {"phone": 0.5}, "default": 0.1}]}}  # fmt: skip


@pytest.mark.parametrize(
    ("stored", "pages", "planned"),
    [
        (stored_request(), [f"https://a{n}.example/amp/{n}.html" for n in range(6)], 4),
        (stored_request(), [f"http://a{n}.example/{n}?x=1" for n in range(6)], 4),  # http, a query
        (stored_request(), ["https://a.example:8443/p"] * 6, 0),  # a port: the host is not what follows ://
        (stored_request(), ["not a url"] * 6, 0),  # a page without a host: not spliced
        (stored_request(site={"page": "https://s.example/", "domain": "s.example"}), ["not a url"] * 6, 0),
        (stored_request(), [f"https://a.example/{n}?a=1&b=2" for n in range(6)], 0),  # & : JSON-unsafe
        (stored_request(ext={"prebid": {"floors": DOMAIN_FLOORS}}), [f"https://a{n}.example/" for n in range(6)], 0),
        (stored_request(ext={"prebid": {"floors": DEVICE_FLOORS}}), [f"https://a{n}.example/" for n in range(6)], 0),
        (stored_request(ext={"prebid": {"floors": FLOORS}}), [f"https://a{n}.example/" for n in range(6)], 4),
    ],
)
async def test_every_page_of_a_slot_shares_one_plan(make_client, bidders, data_dir, monkeypatch, stored, pages,
                                                    planned):
    from urllib.parse import quote

    bidders.bids["alpha"] = [bid("slot-1", 1.5, "a1")]
    _store(data_dir, "t1", stored)
    started: list[int] = []
    original = core.start_planned
    monkeypatch.setattr(core, "start_planned", lambda *a, **k: started.append(1) or original(*a, **k))
    visitor = {"User-Agent": "Mozilla/5.0 (Linux; Android 14) Chrome/120.0", "X-Forwarded-For": "203.0.113.1"}
    runs = {}
    for plans_on in (True, False):
        if not plans_on:
            monkeypatch.setattr(core.AuctionService, "_plan_for", lambda *args: (None, []))
        bidders.received.clear()
        bidders.headers.clear()
        client = await make_client(bidder_config(bidders, "alpha", "beta"))
        answers = []
        for page in pages:
            response = await client.get(f"/openrtb2/amp?{PAGE_QUERY.format(curl=quote(page, safe=''))}",
                                        headers=visitor)
            answers.append((response.status, _answer_without_cache_ids(await response.json())))
        await client.close()
        sent = [(TMAX.sub('"tmax": 0', UUID.sub("<uuid>", json.dumps(body, sort_keys=True))),
                 {k: v for k, v in headers.items() if k not in ("Content-Length", "Host", "Date")})
                for body, headers in zip(bidders.received["alpha"], bidders.headers["alpha"], strict=True)]
        runs[plans_on] = (answers, sent, [body["site"] for body in bidders.received["alpha"]])
    assert runs[True] == runs[False]
    assert len(started) == planned  # visits 3 to 6: prepared on the 2nd, the plan built on the 3rd
    for site, page in zip(runs[True][2], pages, strict=True):
        assert site["page"] == page
        assert site.get("domain") == (url_host(page) or stored["site"].get("domain"))


@pytest.mark.parametrize(
    ("curl", "host", "kind"),
    [
        ("https://a.example/x.html", "a.example", 1),
        ("https://a.example", "a.example", 1),
        ("https://a.example?x", "a.example", 1),
        ("http://a-b.example/#f", "a-b.example", 2),
        ("https://1.2.3.4/", "1.2.3.4", 1),
        ("https://a.example:8443/", "a.example", -1),  # a port
        ("https://user@a.example/", "a.example", -1),  # user info
        ("https://A.example/", "a.example", -1),  # the host url_host gives is lower-cased
        ("https://a.example/\"x", "a.example", -1),  # JSON would escape it
        ("https://a.example/&x", "a.example", -1),
        ("https://a.example\\evil/", "a.example\\evil", -1),
        ("https://[::1]/", "::1", -1),
        ("ftp://a.example/", "a.example", -1),
        ("not a url", "", -1),
    ],
)
def test_amp_page_takes_the_host_url_host_finds(curl, host, kind):
    page = amp_page(curl)
    assert page == AmpPage(curl, host, kind)
    assert page.host == url_host(curl)  # the fast path's host is the parser's


def test_no_curl_no_page():
    assert amp_page("") is None


@pytest.mark.parametrize(
    ("query", "rest"),
    [
        ("a=1&curl=x&b=2", "a=1&b=2"),
        ("curl=x&b=2", "b=2"),
        ("a=1&curl=x", "a=1"),
        ("curl=x", ""),
        ("a=1&xcurl=x", None),  # not the curl parameter
        ("a=1", None),
        ("curl=1&curl=2", None),  # two: the whole query is the key
    ],
)
def test_without_page(query, rest):
    assert without_page(query) == rest


def test_seen_before_remembers_a_bounded_number_of_keys():
    seen = SeenBefore(3)
    assert [seen.check(k) for k in ("a", "b", "a", "c", "d")] == [False, False, True, False, False]
    assert len(seen) == 3
    assert seen.check("a") is False  # the oldest went first
    assert len(seen) == 3


def test_plan_table_builds_a_variant_on_its_second_visit_only():
    table = PlanTable()
    key = variant_key("ua", "1.2.3.4", "", "", {}, (), 400, 1)
    assert table.seen_before(key) is False
    assert table.seen_before(key) is True
    others = [variant_key("ua", "1.2.3.4", "", "", {}, (), budget, 1) for budget in range(PLAN_VARIANTS_MAX + 1)]
    for other in others:
        table.seen_before(other)
    assert table.seen_before(key) is False  # forgotten: at most PLAN_VARIANTS_MAX remembered


def _amp_endpoint(app: Any) -> Any:
    """The AmpEndpoint behind the app's wrapped /openrtb2/amp route."""
    from hbserver.endpoints.amp import AmpEndpoint

    for route in app.router.routes():
        for cell in route.handler.__closure__ or ():
            handler = cell.cell_contents
            if isinstance(getattr(handler, "__self__", None), AmpEndpoint):
                return handler.__self__
    raise AssertionError("no AMP route")


async def test_prepared_requests_and_seen_keys_are_bounded(make_client, bidders, data_dir, monkeypatch):
    from hbserver.endpoints import amp as amp_endpoint

    monkeypatch.setattr(amp_endpoint, "PREPARED_AMP_ENTRIES", 2)
    monkeypatch.setattr(amp_endpoint, "PREPARED_AMP_SEEN", 3)
    bidders.bids["alpha"] = [bid("slot-1", 1.5, "a1")]
    _store(data_dir, "t1", stored_request())
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    endpoint = _amp_endpoint(client.server.app)
    for slot in range(6):  # six slots (queries differing in more than the page), each visited twice
        for _ in range(2):
            response = await client.get(f"/openrtb2/amp?{QUERY}&slot=%2F1%2Fs{slot}")
            assert response.status == 200
    assert len(endpoint.prepared) == 2  # each prepared on its second visit, the oldest evicted
    assert len(endpoint.seen) == 3
    await client.close()


@pytest.mark.parametrize("code", range(0x180))
def test_a_plain_page_reads_the_same_spliced_exactly_when_spliceable_says_so(code):
    """The page match checks in one pass what spliceable() checks: each character after the host."""
    url = f"https://a.example/p{chr(code)}q"
    assert (amp_page(url).kind == 1) is spliceable(url)


@pytest.mark.parametrize(
    ("debug", "changed"),
    [("", {"tmax": 700}), ("", {"test": 1}), ("&debug=1", {"tmax": 700})],  # test/debug: the full path
)
async def test_a_changed_stored_request_is_built_with_this_visits_page(make_client, bidders, data_dir, debug, changed):
    from urllib.parse import quote

    from hbserver.appkeys import STORED

    bidders.bids["alpha"] = [bid("slot-1", 1.5, "a1")]
    _store(data_dir, "t1", stored_request())
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    for page in ("https://a.example/1", "https://a.example/2"):  # prepared on the second visit
        await client.get(f"/openrtb2/amp?{PAGE_QUERY.format(curl=quote(page, safe=''))}{debug}")
    _store(data_dir, "t1", stored_request(**changed))
    client.app[STORED].invalidate("requests", ["t1"])
    response = await client.get(f"/openrtb2/amp?{PAGE_QUERY.format(curl=quote('https://b.example/3', safe=''))}{debug}")
    assert response.status == 200
    assert bidders.received["alpha"][-1]["site"]["page"] == "https://b.example/3"
    assert bidders.received["alpha"][-1]["site"]["domain"] == "b.example"
    await client.close()
