"""Privacy Sandbox signals: Sec-Browsing-Topics into user.data, Sec-Cookie-Deprecation into
device.ext.cdep, and the receive-cookie-deprecation cookie, each rule a row naming its PBS-Go source."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hbserver.config import CookieDeprecation
from hbserver.privacy.sandbox import (
    Topic,
    apply_topics,
    fill_cdep,
    merge_topics,
    parse_topics,
    receive_cookie_deprecation,
)

TOPICS_GO = "privacysandbox/topics.go"
AUCTION_GO = "endpoints/openrtb2/auction.go"
SYNC_GO = "endpoints/cookie_sync.go"


def bad(field: str) -> str:
    return f"Invalid field in Sec-Browsing-Topics header: {field}"


PARSE = [
    # (id, source, header, topics, warnings)
    ("one-field", TOPICS_GO, "(1);v=chrome.1:1:2", [Topic(600, "2", (1,))], []),
    ("several-ids-and-spaces", TOPICS_GO, " ( 1  2 3 ) ;v=chrome.1:1:2 ", [Topic(600, "2", (1, 2, 3))], []),
    ("taxonomy-10-is-segtax-609", TOPICS_GO, "(7);v=chrome.1:10:5", [Topic(609, "5", (7,))], []),
    ("padding-skipped", TOPICS_GO, "(1);v=chrome.1:1:2, ();p=P0000000000000000000000000000000",
     [Topic(600, "2", (1,))], []),
    ("empty-fields-skipped", TOPICS_GO, ",, (1);v=chrome.1:2:3,", [Topic(601, "3", (1,))], []),
    ("blank-id-list-is-a-topic", TOPICS_GO, "( );v=chrome.1:1:2", [Topic(600, "2", ())], []),
    ("bare-parentheses-too-short", TOPICS_GO, "();v=chrome.1:1:2", [], [bad("();v=chrome.1:1:2")]),
    ("taxonomy-0", TOPICS_GO, "(1);v=chrome.1:0:2", [], [bad("(1);v=chrome.1:0:2")]),
    ("taxonomy-11", TOPICS_GO, "(1);v=chrome.1:11:2", [], [bad("(1);v=chrome.1:11:2")]),
    ("taxonomy-not-a-number", TOPICS_GO, "(1);v=chrome.1:a:2", [], [bad("(1);v=chrome.1:a:2")]),
    ("taxonomy-with-sign-is-atoi", TOPICS_GO, "(1);v=chrome.1:+2:2", [Topic(601, "2", (1,))], []),
    ("no-segclass", TOPICS_GO, "(1);v=chrome.1:1:", [], [bad("(1);v=chrome.1:1:")]),
    ("two-colons-only", TOPICS_GO, "(1);v=chrome.1:1", [], [bad("(1);v=chrome.1:1")]),
    ("no-parentheses", TOPICS_GO, "1;v=chrome.1:1:2", [], [bad("1;v=chrome.1:1:2")]),
    ("three-parts", TOPICS_GO, "(1);v=chrome.1:1:2;x", [], [bad("(1);v=chrome.1:1:2;x")]),
    ("zero-id-spoils-the-field", TOPICS_GO, "(1 0);v=chrome.1:1:2", [], [bad("(1 0);v=chrome.1:1:2")]),
    ("negative-id", TOPICS_GO, "(-3);v=chrome.1:1:2", [], [bad("(-3);v=chrome.1:1:2")]),
    ("non-ascii-digit-id", TOPICS_GO, "(\u0663);v=chrome.1:1:2", [], [bad("(\u0663);v=chrome.1:1:2")]),
    ("id-beyond-int64", TOPICS_GO, "(9223372036854775808);v=chrome.1:1:2", [],
     [bad("(9223372036854775808);v=chrome.1:1:2")]),
    # issue 38: more digits than int() converts (it raised, failing the auction with a 500)
    ("id-of-5000-digits", TOPICS_GO, f"({'9' * 5000});v=chrome.1:1:2", [], [bad(f"({'9' * 5000});v=chrome.1:1:2")]),
    ("taxonomy-of-5000-digits", TOPICS_GO, f"(1);v=chrome.1:{'9' * 5000}:2", [],
     [bad(f"(1);v=chrome.1:{'9' * 5000}:2")]),
    ("superscript-id", TOPICS_GO, "(\u00b2);v=chrome.1:1:2", [], [bad("(\u00b2);v=chrome.1:1:2")]),
    ("bad-field-beside-good", TOPICS_GO, "(1);v=chrome.1:1:2, bad",
     [Topic(600, "2", (1,))], [bad("bad")]),
]


@pytest.mark.parametrize(("source", "header", "topics", "warnings"), [r[1:] for r in PARSE], ids=[r[0] for r in PARSE])
def test_parse_topics(source, header, topics, warnings):
    assert parse_topics(header) == (topics, warnings), source


def test_parse_topics_keeps_ten_and_warns_for_the_rest():  # privacysandbox/topics.go ParseTopicsFromHeader
    fields = [f"({n});v=chrome.1:1:{n}" for n in range(1, 13)]
    topics, warnings = parse_topics(", ".join([*fields, "bad"]))
    assert [t.segclass for t in topics] == [str(n) for n in range(1, 11)]
    assert warnings == [bad(f"{f} discarded due to limit reached.") for f in (*fields[10:], "bad")]


def data(name: str, segtax: Any, segclass: Any, *ids: str, **ext: Any) -> dict[str, Any]:
    return {"name": name, "segment": [{"id": i} for i in ids], "ext": {"segtax": segtax, "segclass": segclass, **ext}}


T600 = Topic(600, "2", (1, 2))
MERGE = [
    # (id, source, user.data, topics, expected)
    ("new-entry", TOPICS_GO, [], [T600], [data("ads.example", 600, "2", "1", "2")]),
    ("same-taxonomy-merged-without-repeats", TOPICS_GO, [data("ads.example", 600, "2", "2", "9")], [T600],
     [data("ads.example", 600, "2", "2", "9", "1")]),
    ("all-ids-known-entry-unchanged-no-new-entry", TOPICS_GO, [data("ads.example", 600, "2", "1", "2")], [T600],
     [data("ads.example", 600, "2", "1", "2")]),
    ("other-name-left-alone", TOPICS_GO, [data("other.example", 600, "2", "5")], [T600],
     [data("other.example", 600, "2", "5"), data("ads.example", 600, "2", "1", "2")]),
    ("other-segclass-gets-new-entry", TOPICS_GO, [data("ads.example", 600, "3", "5")], [T600],
     [data("ads.example", 600, "3", "5"), data("ads.example", 600, "2", "1", "2")]),
    ("same-taxonomy-in-two-fields-one-entry", TOPICS_GO, [], [T600, Topic(600, "2", (2, 3))],
     [data("ads.example", 600, "2", "1", "2", "3")]),
    ("string-segtax-does-not-unmarshal", TOPICS_GO, [data("ads.example", "600", "2")], [T600],
     [data("ads.example", "600", "2"), data("ads.example", 600, "2", "1", "2")]),
    ("float-segtax-does-not-unmarshal", TOPICS_GO, [data("ads.example", 600.0, "2")], [T600],
     [data("ads.example", 600.0, "2"), data("ads.example", 600, "2", "1", "2")]),
    ("bad-segids-does-not-unmarshal", TOPICS_GO, [data("ads.example", 600, "2", segids="x")], [T600],
     [data("ads.example", 600, "2", segids="x"), data("ads.example", 600, "2", "1", "2")]),
    ("keys-match-case-insensitively", TOPICS_GO, [{"name": "ads.example", "ext": {"SegTax": 600, "SEGCLASS": "2"}}],
     [T600], [{"name": "ads.example", "ext": {"SegTax": 600, "SEGCLASS": "2"}, "segment": [{"id": "1"}, {"id": "2"}]}]),
    ("entry-without-ext-skipped", TOPICS_GO, [{"name": "ads.example", "segment": [{"id": "1"}]}], [T600],
     [{"name": "ads.example", "segment": [{"id": "1"}]}, data("ads.example", 600, "2", "1", "2")]),
    ("topic-without-ids-adds-nothing", TOPICS_GO, [], [Topic(600, "2", ())], []),
]


@pytest.mark.parametrize(("source", "user_data", "topics", "expected"), [r[1:] for r in MERGE],
                         ids=[r[0] for r in MERGE])
def test_merge_topics(source, user_data, topics, expected):
    before = copy.deepcopy(user_data)
    assert merge_topics(user_data, topics, "ads.example") == expected, source
    assert user_data == before  # the request's own list and entries are never changed in place


def test_apply_topics_builds_a_user_and_returns_warnings():
    """endpoints/openrtb2/auction.go setSecBrowsingTopicsImplicitly."""
    request: dict[str, Any] = {"id": "r"}
    warnings = apply_topics(request, "(4);v=chrome.1:1:2, nonsense", "ads.example")
    assert request["user"] == {"data": [data("ads.example", 600, "2", "4")]}
    assert [(w.code, w.message) for w in warnings] == [(10012, bad("nonsense"))]
    untouched: dict[str, Any] = {"user": {"id": "u"}}
    assert apply_topics(untouched, "nonsense", "ads.example") and untouched == {"user": {"id": "u"}}


LONG = "x" * 101
CDEP = [
    # (id, source, request, header, expected request, warning code)
    ("filled", AUCTION_GO, {"device": {"ua": "a"}}, "label_only_1",
     {"device": {"ua": "a", "ext": {"cdep": "label_only_1"}}}, None),
    ("device-made", AUCTION_GO, {}, "label", {"device": {"ext": {"cdep": "label"}}}, None),
    ("request-value-kept", AUCTION_GO, {"device": {"ext": {"cdep": "mine"}}}, "label",
     {"device": {"ext": {"cdep": "mine"}}}, None),
    ("empty-request-value-replaced", AUCTION_GO, {"device": {"ext": {"cdep": "", "x": 1}}}, "label",
     {"device": {"ext": {"cdep": "label", "x": 1}}}, None),
    ("100-bytes-fit", AUCTION_GO, {}, "x" * 100, {"device": {"ext": {"cdep": "x" * 100}}}, None),
    ("over-100-bytes-warned", AUCTION_GO, {}, LONG, {}, 10011),
    ("multibyte-counted-in-bytes", AUCTION_GO, {}, "\u00e9" * 51, {}, 10011),
]


@pytest.mark.parametrize(("source", "request_", "header", "expected", "code"), [r[1:] for r in CDEP],
                         ids=[r[0] for r in CDEP])
def test_fill_cdep(source, request_, header, expected, code):
    own = copy.deepcopy(request_)
    warning = fill_cdep(own, header)
    assert own == expected, source
    assert (warning.code if warning else None) == code
    if warning is not None:
        assert warning.message == "request.device.ext.cdep must not exceed 100 characters"


COOKIE = [
    # (id, source, has cookie, settings, Set-Cookie value or None)
    ("set-when-enabled", SYNC_GO, False, CookieDeprecation(enabled=True, ttl_sec=86400),
     "receive-cookie-deprecation=1; Path=/; Expires=Fri, 02 Jan 2026 00:00:00 GMT; HttpOnly; Secure; "
     "SameSite=None; Partitioned;"),
    ("account-json-ttlsec-wins", SYNC_GO, False, CookieDeprecation(enabled=True, ttl_sec=86400, ttlsec=60),
     "receive-cookie-deprecation=1; Path=/; Expires=Thu, 01 Jan 2026 00:01:00 GMT; HttpOnly; Secure; "
     "SameSite=None; Partitioned;"),
    ("not-when-disabled", SYNC_GO, False, CookieDeprecation(enabled=False), None),
    ("not-when-the-browser-has-it", SYNC_GO, True, CookieDeprecation(enabled=True), None),
]


@pytest.mark.parametrize(("source", "has_cookie", "settings", "expected"), [r[1:] for r in COOKIE],
                         ids=[r[0] for r in COOKIE])
def test_receive_cookie_deprecation(source, has_cookie, settings, expected):
    assert receive_cookie_deprecation(has_cookie, settings, now=1767225600.0) == expected, source
