"""The bidder chooser: order (TV12), evaluation rules and limits (TV13)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from hbserver.bidders.registry import IFRAME, REDIRECT, build_registry
from hbserver.config import load_config
from hbserver.usersync import chooser
from hbserver.usersync.chooser import (
    BidderFilter,
    Candidates,
    Status,
    SyncFilters,
    bidder_order,
    choose,
)
from hbserver.usersync.cookie import UidEntry, UidsCookie

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def reverse(items: list[str]) -> None:
    items.reverse()


@pytest.mark.parametrize(
    ("requested", "coop", "groups", "only", "expected"),
    [
        ([], False, [], False, ["a2", "a1"]),
        (["r1", "r2"], False, [], False, ["r2", "r1"]),
        (["r1", "r2"], True, [["pr1A", "pr1B"], ["pr2A", "pr2B"]], False,
         ["r2", "r1", "pr1B", "pr1A", "pr2B", "pr2A", "a2", "a1"]),
        (["r1", "r2"], True, [["pr1A", "pr1B"]], True, ["r2", "r1", "pr1B", "pr1A"]),
    ],
)
def test_bidder_order(requested, coop, groups, only, expected):
    assert bidder_order(requested, ["a1", "a2"], coop, groups, only, reverse) == expected


def make_registry():
    sync = {"redirect": {"url": "https://s.test/{{.RedirectURL}}", "user_macro": "$U"}}
    iframe_only = {"iframe": {"url": "https://s.test/i/{{.RedirectURL}}", "user_macro": "$U"}}
    return build_registry(load_config(environ={}, overrides={"adapters": {
        "a": {"alias_of": "generic", "usersync": {"key": "keyA", **iframe_only}},
        "b": {"alias_of": "generic", "usersync": {"key": "keyB", **iframe_only}},
        "c": {"alias_of": "generic", "usersync": {"key": "keyC", **sync}},  # no iframe
        "d": {"alias_of": "generic", "usersync": {"key": "shared", **iframe_only}},
        "e": {"alias_of": "generic", "usersync": {"key": "shared", **iframe_only}},
        "off": {"alias_of": "generic", "usersync": {"key": "keyOff", "enabled": False, **iframe_only}},
        "nosync": {"alias_of": "generic"},
        "gone": {"alias_of": "generic", "disabled": True, "usersync": {"key": "keyGone", **iframe_only}},
    }}))


IFRAME_ONLY = SyncFilters(iframe=BidderFilter(), redirect=BidderFilter(include=False))


def run(order, limit=0, cookie=None, filters=IFRAME_ONLY, tcf=None, **kw):
    candidates = Candidates(make_registry(), filters, **kw)
    chosen, evaluations = choose(order, limit, candidates, cookie or UidsCookie(), NOW, tcf)
    return [c.bidder for c in chosen], [(e.bidder, e.status) for e in evaluations]


def test_rejected_bidders_do_not_use_the_limit():
    chosen, evaluations = run(["c", "a", "b"], limit=1)
    assert chosen == ["a"]
    assert evaluations == [("c", Status.REJECTED_BY_FILTER), ("a", Status.OK)]  # b is never looked at


@pytest.mark.parametrize(
    ("order", "evaluations"),
    [
        (["d", "e"], [("d", Status.OK), ("e", Status.DUPLICATE)]),
        (["e", "d"], [("e", Status.OK), ("d", Status.DUPLICATE)]),
        (["a", "a"], [("a", Status.OK)]),
        (["A", "a"], [("A", Status.OK), ("a", Status.DUPLICATE)]),
        (["zzz"], [("zzz", Status.UNKNOWN_BIDDER)]),
        (["nosync"], [("nosync", Status.UNCONFIGURED_BIDDER)]),
        (["gone"], [("gone", Status.DISABLED_BIDDER)]),
        (["off"], [("off", Status.DISABLED_USERSYNC)]),
        # the key is used even when the bidder then fails: a later bidder sharing it is a duplicate
        (["c", "c"], [("c", Status.REJECTED_BY_FILTER)]),
    ],
)
def test_evaluations(order, evaluations):
    assert run(order)[1] == evaluations


def test_already_synced_needs_a_live_uid():
    live = UidsCookie({"keyA": UidEntry("1", NOW + timedelta(days=1)), "keyB": UidEntry("2", NOW - timedelta(days=1))})
    assert run(["a", "b"], cookie=live)[1] == [("a", Status.ALREADY_SYNCED), ("b", Status.OK)]


def test_privacy_decides_after_filter_and_cookie():
    def not_b(name, vendor_id=0):
        return name != "b"

    expected = [("a", Status.OK), ("b", Status.BLOCKED_BY_PRIVACY), ("c", Status.REJECTED_BY_FILTER)]
    assert run(["a", "b", "c"], tcf=not_b)[1] == expected
    assert run(["a", "b", "c"], activity_allows=not_b)[1] == expected
    live = UidsCookie({"keyB": UidEntry("1", NOW + timedelta(days=1))})
    assert run(["b"], cookie=live, tcf=not_b, activity_allows=not_b)[1] == [("b", Status.ALREADY_SYNCED)]


@pytest.mark.parametrize(
    ("activity", "tcf", "ccpa", "expected"),
    [
        # PBS-Go's order: activity controls, then TCF, then US Privacy
        (False, True, True, Status.BLOCKED_BY_PRIVACY),
        (True, False, True, Status.BLOCKED_BY_PRIVACY),
        (True, True, True, Status.BLOCKED_BY_CCPA),
        (True, True, False, Status.OK),
    ],
)
def test_privacy_order(activity, tcf, ccpa, expected):
    seen = []

    def tcf_check(name, vendor_id):
        seen.append((name, vendor_id))
        return tcf

    _, evaluations = run(["a"], tcf=tcf_check, activity_allows=lambda name: activity, ccpa_blocks=ccpa)
    assert evaluations == [("a", expected)]
    assert seen == ([] if not activity else [("a", 0)])  # TCF is asked only when the activity allows


def test_ccpa_blocks_come_before_usersync_disabled():
    assert run(["off"], ccpa_blocks=True)[1] == [("off", Status.BLOCKED_BY_CCPA)]


def test_candidates_are_made_once_and_bounded(monkeypatch):
    monkeypatch.setattr(chooser, "CANDIDATES_LIMIT", 3)
    candidates = Candidates(make_registry(), IFRAME_ONLY)
    names = [f"unknown{n}" for n in range(10)]
    _, evaluations = choose(names, 0, candidates, UidsCookie(), NOW)
    assert [(e.bidder, e.status) for e in evaluations] == [(n, Status.UNKNOWN_BIDDER) for n in names]
    assert len(candidates) <= 3
    _, again = choose(names[-1:], 0, candidates, UidsCookie(), NOW)
    assert again[0] is evaluations[-1]  # the same value, made once


def test_sync_type_prefers_the_default_type():
    everything = SyncFilters()
    registry = make_registry()
    chosen, _ = choose(["a", "c"], 0, Candidates(registry, everything), UidsCookie(), NOW)
    assert [(c.bidder, c.sync_type) for c in chosen] == [("a", IFRAME), ("c", REDIRECT)]
    pixel_only = SyncFilters(iframe=BidderFilter(include=False))
    chosen, _evaluations = choose(["a", "c"], 0, Candidates(registry, pixel_only), UidsCookie(), NOW)
    assert [(c.bidder, c.sync_type) for c in chosen] == [("c", REDIRECT)]


@pytest.mark.parametrize(
    ("flt", "bidder", "allowed"),
    [
        (BidderFilter(), "x", True),
        (BidderFilter(include=False), "x", False),
        (BidderFilter(include=True, every=False, bidders=frozenset({"x"})), "X", True),
        (BidderFilter(include=True, every=False, bidders=frozenset({"x"})), "y", False),
        (BidderFilter(include=False, every=False, bidders=frozenset({"x"})), "x", False),
        (BidderFilter(include=False, every=False, bidders=frozenset({"x"})), "y", True),
    ],
)
def test_filters(flt, bidder, allowed):
    assert flt.allows(bidder) is allowed


def test_regulation_scope():
    reg = build_registry(load_config(environ={}, overrides={}), definitions={
        "gdprskip": {"code": "gdprskip", "usersync": {"key": "g", "skipwhen": {"gdpr": True},
                                                      "redirect": {"url": "https://g.test/{{.RedirectURL}}"}}},
        "gppskip": {"code": "gppskip", "usersync": {"key": "p", "skipwhen": {"gpp_sid": ["2", "3"]},
                                                     "redirect": {"url": "https://p.test/{{.RedirectURL}}"}}},
    })

    def statuses(signal, sid):
        candidates = Candidates(reg, SyncFilters(), gdpr_signal=signal, gpp_sid=sid)
        _, evaluations = choose(["gdprskip", "gppskip"], 0, candidates, UidsCookie(), NOW)
        return [e.status for e in evaluations]

    assert statuses(1, "2") == [Status.REGULATION_SCOPE, Status.REGULATION_SCOPE]
    assert statuses(0, "2,6") == [Status.OK, Status.OK]  # whole-string match only (PBS-Go quirk)
    assert statuses(None, "") == [Status.OK, Status.OK]


def test_every_order_of_a_few_bidders_is_kept_and_picked_uniformly(monkeypatch):
    orders = chooser.permutations_of(["a", "b", "c"])
    assert sorted(orders) == sorted(itertools.permutations(["a", "b", "c"]))
    assert chooser.permutations_of(["a"] * (chooser.PERMUTED_MAX + 1)) is None  # bounded: 4! orders at most
    draws = iter([n / 6 + 0.01 for n in range(6)])
    monkeypatch.setattr(chooser, "_random", lambda: next(draws))
    assert [tuple(chooser.pick_order(orders)) for _ in range(6)] == list(orders)


@pytest.mark.parametrize(
    ("order", "limit"),
    [(["a", "b", "c"], 0), (["c", "b", "a"], 1), (["b", "a", "d", "off", "zzz", "nosync", "gone"], 2)],
)
def test_distinct_orders_read_alike_either_way(order, limit):
    candidates = Candidates(make_registry(), IFRAME_ONLY)
    assert candidates.distinct(order)
    expected = choose(order, limit, candidates, UidsCookie(), NOW)
    assert choose(order, limit, candidates, UidsCookie(), NOW, distinct=True) == expected


@pytest.mark.parametrize("order", [["a", "a"], ["A", "a"], ["d", "e"]])
def test_orders_with_a_name_or_key_twice_are_not_distinct(order):
    assert not Candidates(make_registry(), IFRAME_ONLY).distinct(order)
