"""GET /setuid (TV5, TV6, TV7), /getuids (TV16) and /optout over HTTP."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from hbserver.events import PIXEL_PNG
from hbserver.usersync.cookie import UidEntry, UidsCookie, decode_cookie, encode_cookie
from tests.conftest import write_account

REDIRECT = {"redirect": {"url": "https://sync.test/s?r={{.RedirectURL}}", "user_macro": "$UID"}}
IFRAME = {"iframe": {"url": "https://sync.test/i?r={{.RedirectURL}}", "user_macro": "$UID"}}
TCF = "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"


@pytest.fixture
async def client(make_client):
    return await make_client(adapters={
        "iframer": {"alias_of": "generic", "usersync": {**IFRAME, **REDIRECT}},
        "audienceNetwork": {"disabled": False, "usersync": REDIRECT},  # built in, off by default
    })


def cookie_header(cookie: UidsCookie) -> dict[str, str]:
    return {"Cookie": f"uids={encode_cookie(cookie)}"}


def written(response) -> UidsCookie | None:
    header = response.headers.get("Set-Cookie")
    if header is None:
        return None
    match = re.match(r"uids=([^;]*);", header)
    return decode_cookie(match.group(1))


@pytest.mark.parametrize(
    ("query", "existing", "content_type", "body", "uids"),
    [
        ("bidder=pubmatic&uid=123", None, "text/html", b"", {"pubmatic": "123"}),  # iframe syncer -> f=b
        ("bidder=PUBMATIC&uid=123", None, "text/html", b"", {"pubmatic": "123"}),
        ("bidder=appnexus&uid=123", None, "image/png", PIXEL_PNG, {"adnxs": "123"}),  # redirect-only -> f=i
        ("bidder=pubmatic", {"pubmatic": "1234"}, "text/html", b"", {}),  # no uid: removed
        ("bidder=pubmatic&uid=123", {"rubicon": "def"}, "text/html", b"", {"pubmatic": "123", "rubicon": "def"}),
        ("bidder=pubmatic&uid=123&f=i", None, "image/png", PIXEL_PNG, {"pubmatic": "123"}),
        ("bidder=appnexus&uid=123&f=B", None, "text/html", b"", {"adnxs": "123"}),
        ("bidder=pubmatic&uid=123&gpp_sid=100,101", None, "text/html", b"", {"pubmatic": "123"}),
        ("bidder=pubmatic&uid=123&gdpr=0", None, "text/html", b"", {"pubmatic": "123"}),
        ("bidder=pubmatic&uid=123&gdpr=1&gdpr_consent=" + TCF, None, "text/html", b"", {"pubmatic": "123"}),
        ("bidder=audienceNetwork&uid=0", None, "image/png", PIXEL_PNG, {}),  # Facebook's "unknown" uid
    ],
)
async def test_happy_paths(client, query, existing, content_type, body, uids):
    future = datetime.now(UTC) + timedelta(days=3)
    headers = cookie_header(UidsCookie({k: UidEntry(v, future) for k, v in existing.items()})) if existing else {}
    response = await client.get("/setuid?" + query, headers=headers)
    assert response.status == 200
    assert response.headers["Content-Type"] == content_type
    assert await response.read() == body
    assert written(response).buyeruids() == uids
    header = response.headers["Set-Cookie"]
    assert "Path=/" in header and "SameSite=None" in header and "Secure" in header
    assert header.endswith("; HttpOnly")
    assert "Max-Age=7776000" in header and "Expires=" in header


async def test_uid_lives_14_days(client):
    response = await client.get("/setuid?bidder=appnexus&uid=abc")
    entry = written(response).uids["adnxs"]
    assert abs(entry.expires - (datetime.now(UTC) + timedelta(days=14))) < timedelta(seconds=30)


@pytest.mark.parametrize(
    ("query", "status", "body"),
    [
        ("bidder=unsupported-bidder&uid=123", 400, "The bidder name provided is not supported by Prebid Server"),
        ("bidder=rubicon&uid=123", 400, "The bidder name provided is not supported by Prebid Server"),  # disabled
        ("bidder=&uid=123", 400, '"bidder" query param is required'),
        ("uid=123", 400, '"bidder" query param is required'),
        ("bidder=appnexus&uid=123&gdpr=2", 400, "the gdpr query param must be either 0 or 1. You gave 2"),
        ("bidder=appnexus&uid=123&gdpr=1", 400, "GDPR consent is required when gdpr signal equals 1"),
        ("bidder=appnexus&uid=123&gpp_sid=2,6", 400, "GDPR consent is required when gdpr signal equals 1"),
        ("bidder=appnexus&uid=123&f=x", 400, '"f" query param is invalid. must be "b" or "i"'),
        ("bidder=appnexus&uid=123&gpp_sid=malformed", 400, "invalid gpp_sid encoding, must be a csv list of integers"),
        ("bidder=appnexus&uid=123&gpp=malformed", 400, "error parsing GPP header, header must have type=3"),
        ("bidder=appnexus&uid=" + "x" * 4097, 400, "uid is longer than 4096 characters"),
    ],
)
async def test_errors(client, query, status, body):
    response = await client.get("/setuid?" + query)
    assert (response.status, await response.text()) == (status, body)
    assert "Set-Cookie" not in response.headers


UNSUPPORTED = "The bidder name provided is not supported by Prebid Server"


@pytest.mark.parametrize(
    ("bidder", "status", "uids"),
    [
        ("appnexus", 200, {"adnxs": "7"}),  # a bidder name
        ("adnxs", 200, {"adnxs": "7"}),  # appnexus's syncer key (cookie family), as older PBS took it
        ("iframer", 200, {"iframer": "7"}),  # a host alias with a syncer of its own
        ("mynexus", 200, {"adnxs": "7"}),  # an alias sharing its parent's key
        ("fam", 200, {"fam": "7"}),  # a key that is no bidder's name resolves to its syncer
        ("Fam", 400, UNSUPPORTED),  # keys are exact (the cookie's keys are)
        ("nobody", 400, UNSUPPORTED),  # unknown: PBS-Go's text
        ("rubicon", 400, UNSUPPORTED),  # a bidder name that is disabled is not looked up as a key
    ],
)
async def test_bidder_param_takes_name_or_syncer_key(make_client, bidder, status, uids):
    client = await make_client(adapters={
        "iframer": {"alias_of": "generic", "usersync": {**IFRAME, **REDIRECT}},
        "mynexus": {"alias_of": "appnexus"},
        "keyed": {"alias_of": "generic", "usersync": {"key": "fam", **REDIRECT}},
    })
    response = await client.get(f"/setuid?bidder={bidder}&uid=7")
    assert response.status == status
    if status == 200:
        assert written(response).buyeruids() == uids
    else:
        assert await response.text() == uids


async def test_syncer_key_meets_activity_rules_as_its_bidder(client, data_dir):
    rules = {"syncUser": {"rules": [{"condition": {"componentName": ["appnexus"]}, "allow": False}]}}
    write_account(data_dir, "acc", {"privacy": {"allowactivities": rules}})
    for bidder in ("appnexus", "adnxs"):
        response = await client.get(f"/setuid?bidder={bidder}&uid=1&account=acc")
        assert response.status == 451, bidder


async def test_opted_out_is_401_with_an_empty_body(client):
    response = await client.get("/setuid?bidder=appnexus&uid=1", headers=cookie_header(UidsCookie(optout=True)))
    assert (response.status, await response.read()) == (401, b"")
    assert "Set-Cookie" not in response.headers


@pytest.mark.parametrize(
    ("account", "status", "body"),
    [
        ({"disabled": True}, 400, "account is disabled, please reach out to the prebid server host"),
        ({"privacy": {"allowactivities": {"syncUser": {"default": False}}}}, 451, ""),
        ({"privacy": {"allowactivities": {"syncUser": {"rules": [{"condition": {"componentName": ["other"]}}]}}}},
         200, None),  # a deny rule that does not match falls back to the default: allow
        ({"privacy": {"allowactivities": {"syncUser": "yes"}}}, 400,
         "account config is malformed and could not be read"),
    ],
)
async def test_account_rules(client, data_dir, account, status, body):
    write_account(data_dir, "acc", account)
    response = await client.get("/setuid?bidder=appnexus&uid=1&account=acc")
    assert response.status == status
    if body is not None:
        assert await response.text() == body


@pytest.mark.parametrize(
    ("consent", "status", "body"),
    [
        (TCF, 451, "The gdpr_consent string prevents cookies from being saved"),
        ("malformed", 400, "gdpr_consent was invalid. malformed consent string malformed: "),
    ],
)
async def test_host_vendor_consent(make_client, consent, status, body):
    client = await make_client(gdpr={"host_vendor_id": 15})
    response = await client.get(f"/setuid?bidder=appnexus&uid=1&gdpr=1&gdpr_consent={consent}")
    assert response.status == status
    assert (await response.text()).startswith(body)
    ok = await client.get(f"/setuid?bidder=appnexus&uid=1&gdpr=0&gdpr_consent={consent}")
    assert ok.status == 200


def five_uids() -> dict[str, str]:
    base = datetime.now(UTC) + timedelta(days=1)
    cookie = UidsCookie({f"syncer{i}": UidEntry("111", base + timedelta(minutes=i)) for i in range(1, 5)})
    cookie.uids["syncerToEject"] = UidEntry("111", base)
    return cookie_header(cookie)


@pytest.mark.parametrize(
    ("groups", "max_bytes", "status", "kept", "body"),
    [
        ([], 0, 200, {"syncer1", "syncer2", "syncer3", "syncer4", "syncerToEject", "pubmatic"}, None),
        ([["pubmatic", "s1", "s2", "s3", "s4"], ["s5"]], 500, 200, None, None),
        ([["s1", "s2", "s3", "s4"]], 200, 200, None,
         "Warning: syncer key is not a priority, and there are only priority elements left, cookie not updated"),
        ([], 60, 400, None, "uid that's trying to be synced is bigger than MaxCookieSize"),
    ],
)
async def test_priority_ejection(make_client, groups, max_bytes, status, kept, body):
    adapters = {f"s{i}": {"alias_of": "generic", "usersync": {"key": f"syncer{i}", **REDIRECT}} for i in range(1, 5)}
    adapters["s5"] = {"alias_of": "generic", "usersync": {"key": "syncerToEject", **REDIRECT}}
    client = await make_client(adapters=adapters, user_sync={"priority_groups": groups},
                               host_cookie={"max_cookie_size_bytes": max_bytes if max_bytes >= 500 or not max_bytes
                                            else 500})
    if max_bytes and max_bytes < 500:
        # below the configurable minimum: exercise the limit with uids long enough to overflow 500 bytes
        response = await client.get("/setuid?bidder=pubmatic&uid=" + "u" * 600, headers=five_uids())
    else:
        response = await client.get("/setuid?bidder=pubmatic&uid=123", headers=five_uids())
    assert response.status == status
    if body is not None:
        assert await response.text() == body
        assert "Set-Cookie" not in response.headers
    if kept is not None:
        assert set(written(response).uids) == kept
    if groups and groups[-1] == ["s5"]:
        uids = set(written(response).uids)
        assert "syncerToEject" not in uids and "pubmatic" in uids


async def test_metrics_and_analytics(make_client, tmp_path):
    log = tmp_path / "a.jsonl"
    client = await make_client(analytics={"file": {"filename": str(log)}})
    await client.get("/setuid?bidder=appnexus&uid=42")
    await client.get("/setuid?bidder=appnexus")
    await client.get("/setuid?bidder=nobody&uid=1")
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_setuid_requests{status="ok"} 2.0' in metrics
    assert 'hbserver_setuid_requests{status="syncer_unknown"} 1.0' in metrics
    assert 'hbserver_syncer_sets{status="ok",syncer="adnxs"} 1.0' in metrics
    assert 'hbserver_syncer_sets{status="cleared",syncer="adnxs"} 1.0' in metrics
    await client.close()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["event"], r["status"], r["bidder"], r["uid"], r["success"]) for r in records] == [
        ("setuid", 200, "appnexus", "42", True),
        ("setuid", 200, "appnexus", "", True),
        ("setuid", 400, "nobody", "1", False),
    ]


@pytest.mark.parametrize(
    ("cookie", "expected"),
    [
        (UidsCookie({"adnxs": UidEntry("123", datetime(2020, 1, 1, tzinfo=UTC)),
                     "audienceNetwork": UidEntry("456", datetime(2020, 1, 1, tzinfo=UTC))}),
         {"buyeruids": {"adnxs": "123", "audienceNetwork": "456"}}),  # expired uids included
        (UidsCookie(), {}),
        (None, {}),
    ],
)
async def test_getuids(client, cookie, expected):
    response = await client.get("/getuids", headers=cookie_header(cookie) if cookie else {})
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    assert json.loads(await response.text()) == expected


async def optout_form(client) -> tuple[str, str]:
    """GET the opt-out page; (the form's token, its cookie as a Cookie pair)."""
    page = await client.get("/static/optout.html")
    form = await page.text()
    assert form.count('action="../optout"') == 2 and 'name="optout" value="1"' in form
    [token] = set(re.findall(r'name="token" value="([^"]+)"', form))
    [set_cookie] = page.headers.getall("Set-Cookie")
    assert set_cookie.startswith(f"hbs_optout_token={token};")
    return token, f"hbs_optout_token={token}"


async def test_optout_round_trip(client):
    page = await client.get("/optout", allow_redirects=False)
    assert page.status == 200 and 'action="../optout"' in await page.text()  # the page itself, as PBS
    token, token_cookie = await optout_form(client)
    start = cookie_header(UidsCookie({"adnxs": UidEntry("1", datetime.now(UTC) + timedelta(days=1))}))
    start["Cookie"] += "; " + token_cookie
    out = await client.post("/optout", data={"optout": "1", "token": token}, headers=start, allow_redirects=False)
    assert (out.status, out.headers["Location"]) == (303, "/static/optout.html?status=out")
    assert written(out) == UidsCookie(optout=True)
    assert out.headers["Set-Cookie"].endswith("; SameSite=None; Secure; HttpOnly")
    blocked = await client.get("/setuid?bidder=appnexus&uid=1", headers=cookie_header(UidsCookie(optout=True)))
    assert blocked.status == 401
    opted_out = cookie_header(UidsCookie(optout=True))
    opted_out["Cookie"] += "; " + token_cookie
    back_in = await client.post("/optout", data={"optout": "", "token": token}, headers=opted_out,
                                allow_redirects=False)
    assert written(back_in) == UidsCookie()


async def test_optout_needs_the_page_token(client):
    response = await client.post("/optout", data={"optout": ""}, headers=cookie_header(UidsCookie(optout=True)))
    assert response.status == 403
    assert "Set-Cookie" not in response.headers


async def test_optout_refuses_other_sites(client):
    response = await client.post("/optout", data={"optout": ""}, headers={"Origin": "https://evil.example"})
    assert response.status == 403
    assert "Set-Cookie" not in response.headers
