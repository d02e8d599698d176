"""Issue 15 part B: nothing stored through /cache or /vtrack runs script on this server's own domain,
the uids cookie is HttpOnly, and the opt-out page cannot be framed nor its form forged.

The browser-level proof (the script really does not run in Chromium, the opt-out form still works with a
click) is in tests/e2e/browser/test_stored_content.py.
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta

import pytest

from hbserver.usersync.cookie import UidEntry, UidsCookie, decode_cookie, encode_cookie
from hbserver.vast import DOCTYPE, NOT_VAST, vast_root_refusal

XHTML = (
    '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head>'
    "<body><script>document.title = 'pwned'</script></body></html>"
)
VAST = '<VAST version="4.0"><Ad><InLine><Impression>x</Impression></InLine></Ad></VAST>'
CACHE_CSP = "default-src 'none'; sandbox; frame-ancestors 'none'"
TOKEN_RE = re.compile(r'name="token" value="([A-Za-z0-9_-]{43})"')


# --- GET /cache: served so that no browser renders it as a document -----------------------------


@pytest.mark.parametrize(
    ("put", "content_type", "filename"),
    [
        ({"type": "xml", "value": XHTML}, "application/xml", "cache.xml"),
        ({"type": "json", "value": {"adm": "<script>alert(1)</script>"}}, "application/json", "cache.json"),
    ],
)
async def test_cache_get_is_never_rendered(make_client, put, content_type, filename):
    client = await make_client({})
    [entry] = (await (await client.post("/cache", data=json.dumps({"puts": [put]}))).json())["responses"]
    response = await client.get("/cache", params={"uuid": entry["uuid"]})
    assert response.status == 200
    assert response.headers["Content-Type"] == content_type
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Content-Security-Policy"] == CACHE_CSP
    assert response.headers["Content-Disposition"] == f'attachment; filename="{filename}"'
    # An XHR/fetch consumer (prebid-universal-creative, video players) still gets the value, CORS included.
    cors = await client.get("/cache", params={"uuid": entry["uuid"]}, headers={"Origin": "https://page.test"})
    assert cors.headers["Access-Control-Allow-Origin"] == "https://page.test"
    assert await cors.read() == await response.read()


async def test_vtrack_stored_vast_is_served_the_same_way(make_client):
    client = await make_client({})
    body = {"puts": [{"type": "xml", "value": VAST, "bidid": "b", "bidder": "x"}]}
    [entry] = (await (await client.post("/vtrack?a=acc", data=json.dumps(body))).json())["responses"]
    response = await client.get("/cache", params={"uuid": entry["uuid"]})
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Content-Security-Policy"] == CACHE_CSP
    assert response.headers["Content-Disposition"] == 'attachment; filename="cache.xml"'


# --- /vtrack: the root element must be VAST -------------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        VAST,
        "<vast/>",
        "<Vast\n version='2.0'></Vast>",
        '<?xml version="1.0" encoding="UTF-8"?>\r\n<VAST version="2.0"></VAST>',
        "\ufeff<?xml version='1.0'?><!-- served by x --><?pi data?>\n\t <VAST>",
        "<VAST><<<not xml at all & </Wrapper",  # malformed after the root: stored as given
        "<vast",
    ],
)
def test_vast_root_is_accepted(document):
    assert vast_root_refusal(document) is None


@pytest.mark.parametrize(
    ("document", "refusal"),
    [
        ("", NOT_VAST),
        ("   ", NOT_VAST),
        ("invalidValue", NOT_VAST),
        ("x<VAST></VAST>", NOT_VAST),
        ("<!-- <VAST> --><html xmlns='http://www.w3.org/1999/xhtml'><script>alert(1)</script></html>", NOT_VAST),
        ("<html xmlns='http://www.w3.org/1999/xhtml'><!--<vast--><script>alert(1)</script></html>", NOT_VAST),
        ("<svg xmlns='http://www.w3.org/2000/svg'><vast/><script>alert(1)</script></svg>", NOT_VAST),
        ("<vastly></vastly>", NOT_VAST),
        ("<vast:VAST xmlns:vast='urn:x'></vast:VAST>", NOT_VAST),
        ("< VAST></VAST>", NOT_VAST),
        ("<!-- unterminated <VAST>", NOT_VAST),
        ("<?xml version='1.0' <VAST>", NOT_VAST),
        ("<![CDATA[x]]><VAST/>", NOT_VAST),
        ("\u00a0<VAST/>", NOT_VAST),
        ('<!DOCTYPE VAST><VAST></VAST>', DOCTYPE),
        ('<?xml version="1.0"?>\n<!doctype x [<!ENTITY e SYSTEM "file:///etc/passwd">]><VAST>&e;</VAST>', DOCTYPE),
    ],
)
def test_other_roots_are_refused(document, refusal):
    assert vast_root_refusal(document) == refusal


@pytest.mark.parametrize(
    "document",
    [
        "<!--" * 200_000,
        "<?" * 200_000,
        "<!-- -->" * 100_000 + "<x/>",
        " " * 1_000_000 + "<x/>",
        "<?a?>" * 100_000 + "<VAST>",
    ],
)
def test_the_prolog_scan_is_linear(document):
    started = time.perf_counter()
    vast_root_refusal(document)
    assert time.perf_counter() - started < 0.2


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("<!-- <vast> --><html xmlns='http://www.w3.org/1999/xhtml'><script>alert(1)</script></html>",
         "vtrack content must be vast"),
        ("<Wrapper><vast/></Wrapper>", "vtrack content must be vast"),
        ('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><VAST>&e;</VAST>',
         "vtrack content must be vast: document type declarations are not accepted"),
    ],
)
async def test_vtrack_refuses_documents_whose_root_is_not_vast(make_client, value, text):
    client = await make_client({})
    body = {"puts": [{"type": "xml", "value": value, "bidid": "b", "bidder": "x"}]}
    response = await client.post("/vtrack?a=acc", data=json.dumps(body))
    assert (response.status, await response.text()) == (400, text)


# --- the uids cookie is HttpOnly ----------------------------------------------------------------


def attributes(header: str) -> list[str]:
    return [part.strip() for part in header.split(";")[1:]]


async def test_setuid_cookie_is_http_only(make_client):
    client = await make_client({})
    response = await client.get("/setuid?bidder=appnexus&uid=123")
    assert response.status == 200
    parts = attributes(response.headers["Set-Cookie"])
    assert parts.count("HttpOnly") == 1
    assert {"Path=/", "SameSite=None", "Secure", "Max-Age=7776000"} <= set(parts)


async def test_optout_cookie_is_http_only(make_client):
    client = await make_client({})
    token, headers = await optout_token(client)
    response = await client.post(
        "/optout", data={"optout": "1", "token": token}, headers=headers, allow_redirects=False
    )
    assert response.status == 303
    header = next(h for h in response.headers.getall("Set-Cookie") if h.startswith("uids="))
    assert attributes(header).count("HttpOnly") == 1 and "Secure" in attributes(header)


# --- /getuids -----------------------------------------------------------------------------------


async def test_getuids_is_nosniff_json(make_client):
    client = await make_client({})
    cookie = UidsCookie({"adnxs": UidEntry("<script>", datetime.now(UTC) + timedelta(days=1))})
    response = await client.get("/getuids", headers={"Cookie": f"uids={encode_cookie(cookie)}"})
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "no-store"


# --- the opt-out page: no framing, and a per-visit token ----------------------------------------


async def optout_token(client, path: str = "/static/optout.html") -> tuple[str, dict[str, str]]:
    """GET the opt-out page; (token in the form, a Cookie header carrying the token cookie)."""
    page = await client.get(path)
    assert page.status == 200
    [token] = set(TOKEN_RE.findall(await page.text()))
    [set_cookie] = [h for h in page.headers.getall("Set-Cookie") if h.startswith("hbs_optout_token=")]
    assert set_cookie.split(";")[0] == f"hbs_optout_token={token}"
    return token, {"Cookie": f"hbs_optout_token={token}"}


@pytest.mark.parametrize("path", ["/optout", "/static/optout.html"])
async def test_optout_page_cannot_be_framed_and_carries_a_token(make_client, path):
    client = await make_client({})
    page = await client.get(path, allow_redirects=False)
    assert page.status == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert page.headers["X-Frame-Options"] == "DENY"
    csp = page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp and "form-action 'self'" in csp
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    html = await page.text()
    tokens = TOKEN_RE.findall(html)
    assert len(tokens) == 2 and tokens[0] == tokens[1] and "{{" not in html
    [set_cookie] = page.headers.getall("Set-Cookie")
    assert attributes(set_cookie) == ["Path=/optout", "Max-Age=3600", "HttpOnly", "Secure", "SameSite=Strict"]
    # Every visit gets its own token.
    again = TOKEN_RE.findall(await (await client.get(path)).text())
    assert again[0] != tokens[0]


async def test_optout_page_script_and_style_are_allowed_by_hash(make_client):
    client = await make_client({})
    page = await client.get("/static/optout.html")
    csp = page.headers["Content-Security-Policy"]
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/]{43}='", csp)
    assert re.search(r"style-src 'sha256-[A-Za-z0-9+/]{43}='", csp)
    assert "unsafe-inline" not in csp


@pytest.mark.parametrize(
    ("form", "cookie", "extra"),
    [
        ({"optout": "1"}, True, {}),  # no token in the form
        ({"optout": "1", "token": "x" * 43}, True, {}),  # wrong token
        ({"optout": "1", "token": "TOKEN"}, False, {}),  # no token cookie
        ({"optout": "1", "token": ""}, False, {}),
        # A browser request made by script (fetch/XHR), or a navigation no user started.
        ({"optout": "1", "token": "TOKEN"}, True, {"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-origin"}),
        ({"optout": "1", "token": "TOKEN"}, True, {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "same-origin"}),
        ({"optout": "1", "token": "TOKEN"}, True, {"Origin": "https://evil.example"}),
        ({"optout": "1", "token": "TOKEN"}, True, {"Origin": "null"}),
    ],
)
async def test_optout_post_without_a_matching_token_is_refused(make_client, form, cookie, extra):
    client = await make_client({})
    token, cookie_headers = await optout_token(client)
    form = {k: token if v == "TOKEN" else v for k, v in form.items()}
    headers = {**(cookie_headers if cookie else {}), **extra}
    response = await client.post("/optout", data=form, headers=headers, allow_redirects=False)
    assert response.status == 403
    assert "Set-Cookie" not in response.headers
    text = await response.text()
    assert "opt-out" in text


async def test_optout_post_with_the_token_from_a_click(make_client):
    client = await make_client({})
    token, headers = await optout_token(client, "/optout")
    start = UidsCookie({"adnxs": UidEntry("1", datetime.now(UTC) + timedelta(days=1))})
    headers = {
        "Cookie": f"{headers['Cookie']}; uids={encode_cookie(start)}",
        "Origin": "http://localhost:8000",
        "Sec-Fetch-Site": "same-origin",
        "Sec-Fetch-Mode": "navigate",
        "Sec-Fetch-User": "?1",
    }
    response = await client.post(
        "/optout", data={"optout": "1", "token": token}, headers=headers, allow_redirects=False
    )
    assert (response.status, response.headers["Location"]) == (303, "/static/optout.html?status=out")
    [uids] = [h for h in response.headers.getall("Set-Cookie") if h.startswith("uids=")]
    assert decode_cookie(uids.split(";")[0][5:]) == UidsCookie(optout=True)


async def test_optout_token_that_is_not_ascii_is_just_wrong(make_client):
    client = await make_client({})
    await optout_token(client)
    headers = {"Cookie": "hbs_optout_token=t\u00e9st".encode().decode("latin-1")}
    response = await client.post("/optout", data={"optout": "1", "token": "t\u00e9st"}, headers=headers)
    assert response.status == 403


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (b"optout=\x80", {"Content-Type": "application/x-www-form-urlencoded"}),
        (b"not gzip", {"Content-Type": "application/x-www-form-urlencoded", "Content-Encoding": "gzip"}),
    ],
)
async def test_optout_unreadable_form_is_a_400(make_client, body, headers):
    client = await make_client({})
    response = await client.post("/optout", data=body, headers=headers)
    assert (response.status, await response.text()) == (400, "opt-out form could not be read")
