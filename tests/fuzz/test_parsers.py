"""The pure parsers raise only their own documented errors, whatever they are given.

Each test names the exceptions its parser documents; anything else (ValueError from int(),
OverflowError, RecursionError, TypeError on a wrong JSON type, orjson errors) is a finding.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hbserver.auction.bids.currency import ConversionError, build_rates, validate_request_rates
from hbserver.auction.common.mergepatch import merge_patch
from hbserver.auction.request.amp import AmpError, parse_amp_query
from hbserver.auction.response.pricegranularity import GranularityError, parse_granularity, price_bucket
from hbserver.events import EventRequestError, parse_event_query
from hbserver.privacy.ccpa import parse_us_privacy
from hbserver.privacy.gpp import GPPError, parse_gpp, parse_gpp_sid
from hbserver.privacy.tcf2 import ConsentError, parse_tcf2
from hbserver.usersync.cookie import decode_cookie
from hbserver.vast import insert_impression
from tests.fuzz.strategies import JSON, TEXT, queries

BASE64ISH = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=.~", max_size=400)
CONSENT = st.one_of(TEXT, BASE64ISH, st.just("CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"))


@given(st.one_of(TEXT, BASE64ISH))
def test_uids_cookie_reads_anything_as_a_cookie(value):
    decode_cookie(value)  # documented: never raises; unreadable is empty


@given(CONSENT)
def test_tcf2(value):
    try:
        parse_tcf2(value)
    except ConsentError:
        pass


@given(st.one_of(CONSENT, st.builds(lambda a, b: f"DBABMA~{a}~{b}", BASE64ISH, BASE64ISH)))
def test_gpp(value):
    try:
        parse_gpp(value)
    except GPPError:
        pass


@given(TEXT)
def test_gpp_sid(value):
    try:
        parse_gpp_sid(value)
    except ValueError as exc:  # documented: ValueError with Go's strconv wording
        assert type(exc) is ValueError


@given(TEXT)
def test_us_privacy(value):
    try:
        parse_us_privacy(value)
    except ValueError as exc:  # documented: ValueError with PBS-Go's wording
        assert type(exc) is ValueError


VAST_PARTS = st.sampled_from([
    "<VAST>", "</VAST>", "<InLine>", "</InLine>", "<Wrapper>", "</Wrapper>", "<Impression>", "</Impression>",
    "<![CDATA[", "]]>", "<!--", "-->", "<Ad>", "<", ">", "x", " ", "\n", "<inline foo='>'>",
])


@given(st.lists(VAST_PARTS, max_size=40).map("".join), TEXT)
def test_vast_impression_insertion(xml, url):
    out = insert_impression(xml, url)
    assert out is None or len(out) >= len(xml)


@given(JSON, st.floats(min_value=-1e6, max_value=1e12, allow_nan=False))
def test_price_granularity(value, cpm):
    try:
        granularity = parse_granularity(value)
    except GranularityError:
        return
    assert isinstance(price_bucket(cpm, granularity), str)


@given(JSON, JSON)
def test_merge_patch(target, patch):
    merge_patch(target, patch)


AMP_NAMES = ["tag_id", "w", "h", "ow", "oh", "ms", "curl", "slot", "timeout", "targeting", "consent_string",
             "gdpr_consent", "consent_type", "gdpr_applies", "addtl_consent", "account", "debug",
             "__amp_source_origin", "gpp_sid"]


@given(queries(AMP_NAMES))
def test_amp_query(query):
    try:
        parse_amp_query(query)
    except AmpError:
        pass


EVENT_NAMES = ["t", "b", "a", "ts", "bidder", "f", "x", "int", "aid", "vtype"]


@given(st.one_of(queries(EVENT_NAMES), queries(EVENT_NAMES).map(lambda q: {"t": "win", "b": "1", "a": "a", **q})))
def test_event_query(query):
    try:
        parse_event_query(query)
    except EventRequestError:
        pass


@given(JSON)
def test_request_currency_rates(rates: Any):
    problem = validate_request_rates(rates)
    if problem is None and isinstance(rates, dict):
        converter = build_rates(rates, None, None)
        for source in list(rates)[:3]:
            for target in ("USD", "EUR"):
                try:
                    converter.get_rate(source, target)
                except ConversionError:
                    pass


