"""Every endpoint answers below 500 whatever the client sends (bodies, queries, headers) and
whatever a bidder answers. The real application runs in-process on a real socket (tests/fuzz/harness.py),
with generic bidders on a mock that answers what the example says."""

from __future__ import annotations

import gzip

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import AUCTION, below_500, encode
from tests.fuzz.strategies import JSON, ODD_TEXT, json_values, mutated, queries


def _header_safe(text: str) -> bool:
    """What an HTTP client will put in a header: visible ASCII, space, tab-free Latin-1 letters."""
    return all(32 <= ord(ch) < 127 or 160 <= ord(ch) < 256 for ch in text)


HEADER_TEXT = st.one_of(ODD_TEXT, st.text(max_size=40)).filter(_header_safe)
HEADERS = st.fixed_dictionaries({}, optional={
    "User-Agent": HEADER_TEXT, "Referer": HEADER_TEXT, "X-Forwarded-For": HEADER_TEXT, "Origin": HEADER_TEXT,
    "Cookie": HEADER_TEXT.map(lambda v: f"uids={v}"), "X-Request-Id": HEADER_TEXT,
    "Content-Type": st.sampled_from(["text/plain", "application/json", "application/x-www-form-urlencoded"]),
})


BODY = st.one_of(JSON.map(encode), st.binary(max_size=200), mutated(AUCTION).map(encode))
GZIP = st.sampled_from(["none", "header", "query", "header-not-gzip"])


def _apply_gzip(mode: str, body: bytes, headers: dict[str, str], params: dict[str, str]) -> bytes:
    if mode == "header":
        headers["Content-Encoding"] = "gzip"
        return gzip.compress(body)
    if mode == "query":
        params["gzip"] = "1"
        return gzip.compress(body)
    if mode == "header-not-gzip":
        headers["Content-Encoding"] = "gzip"
    return body


BIDDER_ANSWERS = st.one_of(
    st.tuples(st.sampled_from([200, 204, 400, 500]), JSON.map(encode)),
    st.tuples(st.just(200), st.builds(
        lambda bids: encode({"id": AUCTION["id"], "seatbid": [{"bid": bids}], "cur": "USD"}),
        st.lists(mutated({"id": "b1", "impid": "div-top", "price": 1.2, "adm": "<div/>", "crid": "c", "w": 300,
                          "h": 250, "mtype": 1, "ext": {}}), max_size=3))),
)


@given(mutated(AUCTION), BIDDER_ANSWERS, HEADERS, GZIP)
def test_auction(harness, request_body, answer, headers, mode):
    harness.bidder.status, harness.bidder.body = answer
    params: dict[str, str] = {}
    body = _apply_gzip(mode, encode(request_body), headers, params)
    below_500(*harness.request("POST", "/openrtb2/auction", params=params, body=body, headers=headers))


@given(BODY, HEADERS, GZIP, st.sampled_from(["/openrtb2/auction", "/cookie_sync", "/vtrack", "/cache", "/optout"]),
       queries(["a", "int", "gzip", "account"]))
def test_post_bodies(harness, body, headers, mode, path, params):
    body = _apply_gzip(mode, body, headers, params)
    below_500(*harness.request("POST", path, params=params, body=body, headers=headers))


AMP_NAMES = ["w", "h", "ow", "oh", "ms", "curl", "slot", "timeout", "targeting", "consent_string", "gdpr_consent",
             "consent_type", "gdpr_applies", "addtl_consent", "account", "debug", "__amp_source_origin", "gpp_sid"]


@given(queries(AMP_NAMES), st.sampled_from(["amp-1", "missing", "../x", "a" * 300]), BIDDER_ANSWERS, HEADERS)
def test_amp(harness, params, tag_id, answer, headers):
    harness.bidder.status, harness.bidder.body = answer
    params = {k: v for k, v in params.items() if _header_safe(v) or v.isprintable()}
    below_500(*harness.request("GET", "/openrtb2/amp", params={**params, "tag_id": tag_id}, headers=headers))


GET_ENDPOINTS = {
    "/event": ["t", "b", "a", "ts", "bidder", "f", "x", "int", "aid", "vtype"],
    "/setuid": ["bidder", "uid", "gdpr", "gdpr_consent", "gpp", "gpp_sid", "f", "account"],
    "/cache": ["uuid", "ch"],
    "/getuids": [],
    "/optout": [],
    "/status": [],
    "/status/ready": [],
    "/static/load-cookie.html": ["endpoint", "bidders"],
}


@given(st.sampled_from(sorted(GET_ENDPOINTS)).flatmap(lambda path: st.tuples(st.just(path), queries(
    GET_ENDPOINTS[path] or ["x"]))), HEADERS)
def test_get_endpoints(harness, path_and_query, headers):
    path, params = path_and_query
    params = {k: v for k, v in params.items() if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in v)}
    below_500(*harness.request("GET", path, params=params, headers=headers))


@given(json_values(max_leaves=8), HEADERS)
def test_cookie_sync_shapes(harness, fields, headers):
    base = {"bidders": ["alpha", "appnexus"], "gdpr": 1, "gdpr_consent": "x", "limit": 2}
    body = encode({**base, **fields} if isinstance(fields, dict) else fields)
    below_500(*harness.request("POST", "/cookie_sync", body=body, headers=headers))
