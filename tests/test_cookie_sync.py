"""POST /cookie_sync over HTTP: parsing and error texts (TV8, TV9), responses (TV10), limits
(TV11), coop sync, filters, privacy, debug, metrics and analytics."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import orjson
import pytest

from hbserver.bidders.registry import build_registry
from hbserver.config import Config, load_config
from hbserver.endpoints.cookie_sync import effective_limit
from hbserver.privacy.activity import ActivityControl
from hbserver.usersync.cookie import UidEntry, UidsCookie, encode_cookie
from hbserver.usersync.privacy import PrivacyRequestError
from tests.conftest import write_account

SYNC = {"redirect": {"url": "https://sync.test/s?r={{.RedirectURL}}", "user_macro": "$UID"}}
IFRAME = {"iframe": {"url": "https://sync.test/i?r={{.RedirectURL}}", "user_macro": "$UID"}}
ADAPTERS = {
    "alpha": {"alias_of": "generic", "gvl_vendor_id": 1, "usersync": {"key": "ka", **SYNC}},
    "beta": {"alias_of": "generic", "gvl_vendor_id": 2, "usersync": {"key": "kb", **SYNC, **IFRAME}},
    "gamma2": {"alias_of": "generic", "gvl_vendor_id": 3, "usersync": {"key": "kc", "support_cors": True, **SYNC}},
}
# The cookie keys /cookie_sync offers with ADAPTERS: the three above and each built-in that can
# sync, one bidder per key (equativ and smartadserver share theirs: either may stand for it).
_BUILT_IN = build_registry(Config())
ALL_SYNC_KEYS = {a["usersync"]["key"] for a in ADAPTERS.values()} | {
    _BUILT_IN.bidders[code].sync_key for code in _BUILT_IN.syncable
}


def offered_keys(document: dict) -> list[str]:
    """The cookie key of each bidder offered (ADAPTERS' own, else the built-in's)."""
    keys = {name: a["usersync"]["key"] for name, a in ADAPTERS.items()}
    return [keys.get(b["bidder"]) or _BUILT_IN.bidders[b["bidder"]].sync_key for b in document["bidder_status"]]
GPP_TCF = "DBABMA~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"
TCF = "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"


def live_cookie(*keys: str) -> str:
    now = datetime.now(UTC)
    return encode_cookie(UidsCookie({k: UidEntry(f"uid-{k}", now + timedelta(days=1)) for k in keys}))


@pytest.fixture
async def sync_client(make_client):
    async def factory(raw=None, **keys):
        base = {"adapters": ADAPTERS, "external_url": "https://pbs.test"}
        from hbserver.config import deep_merge

        return await make_client(deep_merge(base, raw or {}), **keys)

    return factory


async def post(client, body, cookies=None):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    headers = {"Content-Type": "text/plain"}
    if cookies:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    response = await client.post("/cookie_sync", data=data, headers=headers)
    return response.status, await response.text(), response


ERRORS = [
    ("malformed", "JSON parsing failed: "),
    ({"gdpr": 5}, "GDPR signal should be integer 0 or 1\n"),
    ({"gdpr": 1}, "gdpr_consent is required if gdpr=1\n"),
    ({"gdpr": 1, "gdpr_consent": ""}, "gdpr_consent is required if gdpr=1\n"),
    ({"gpp_sid": "2"}, "gdpr_consent is required if gdpr=1\n"),  # gpp_sid decides the signal
    ({"gpp_sid": "malformed"}, 'strconv.ParseInt: parsing "malformed": invalid syntax\n'),
    ({"gpp": "malformedGPPString"}, "error parsing GPP header, header must have type=3\n"),
    ({"gpp": "DBACNYA~" + TCF + "~1YNN", "gpp_sid": "6", "us_privacy": "1YYY"},
     "request.us_privacy consent does not match uspv1\n"),
    ({"filterSettings": {"iframe": {"bidders": "invalid", "filter": "exclude"}}},
     "error parsing filtersettings.iframe: invalid bidders value `invalid`. must either be '*' or a string array\n"),
    ({"filterSettings": {"image": {"bidders": 42, "filter": "exclude"}}},
     "error parsing filtersettings.image: invalid bidders type. must either be a string '*' or a string array of "
     "bidders\n"),
    ({"filterSettings": {"image": {"bidders": "*", "filter": "invalid"}}},
     "error parsing filtersettings.image: invalid filter value 'invalid'. must be either 'include' or 'exclude'\n"),
    ({"bidders": "alpha"}, "JSON parsing failed: bidders must be an array of strings\n"),
    ({"limit": "5"}, "JSON parsing failed: limit must be an integer\n"),
    ({"coopSync": "yes"}, "JSON parsing failed: coopSync must be a boolean\n"),
    ([1, 2], "JSON parsing failed: the request body must be a JSON object\n"),
]


@pytest.mark.parametrize(("body", "message"), ERRORS)
async def test_errors(sync_client, body, message):
    client = await sync_client()
    status, text, response = await post(client, body)
    assert status == 400
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert text.startswith(message) and text.endswith("\n")


async def test_gdpr_default_value_1_needs_consent(sync_client):
    client = await sync_client(gdpr={"default_value": "1"})
    status, text, _ = await post(client, {})
    assert (status, text) == (400, "gdpr_consent is required. gdpr is not specified and is assumed to be 1 by the "
                                    "server. set gdpr=0 to exempt this request\n")


@pytest.mark.parametrize(
    ("account", "status", "text"),
    [
        ({"disabled": True}, 400, "account is disabled, please reach out to the prebid server host\n"),
        ("{nope", 400, "account config is malformed and could not be read\n"),
    ],
)
async def test_account_errors(sync_client, data_dir, account, status, text):
    write_account(data_dir, "acc", account)
    client = await sync_client()
    assert (await post(client, {"account": "acc"}))[:2] == (status, text)


async def test_account_required(sync_client, data_dir):
    # PBS-Go account.GetAccount: a request naming no account is refused; one naming an account that is
    # not stored gets account_defaults, unless they are disabled too
    client = await sync_client(account_required=True)
    expected = (400, "account must be valid if provided, please reach out to the prebid server host\n")
    assert (await post(client, {}))[:2] == expected
    assert (await post(client, {"account": "nobody"}))[0] == 200
    strict = await sync_client(account_required=True, account_defaults={"disabled": True})
    assert (await post(strict, {"account": "nobody"}))[:2] == expected
    write_account(data_dir, "1001", {})
    assert (await post(client, {"account": 1001}))[0] == 200  # a numeric account (prebid-universal-creative)


async def test_response_shape_and_sync_url(sync_client):
    client = await sync_client()
    status, text, response = await post(client, {"bidders": ["alpha"], "gdpr": 0, "us_privacy": "1NYN"})
    assert status == 200
    assert response.headers["Content-Type"] == "application/json; charset=utf-8"
    assert text.endswith("\n")
    assert json.loads(text) == {
        "status": "no_cookie",
        "bidder_status": [{
            "bidder": "alpha",
            "no_cookie": True,
            "usersync": {
                "url": "https://sync.test/s?r=https%3A%2F%2Fpbs.test%2Fsetuid%3Fbidder%3Dalpha%26gdpr%3D0"
                       "%26gdpr_consent%3D%26gpp%3D%26gpp_sid%3D%26f%3Di%26uid%3D%24UID",
                "type": "redirect",
                "supportCORS": False,
            },
        }],
    }


async def test_status_ok_with_a_live_uid_and_already_synced_bidders_left_out(sync_client):
    client = await sync_client()
    _status, text, _ = await post(client, {"bidders": ["alpha", "beta"], "gdpr": 0, "debug": True},
                                 cookies={"uids": live_cookie("ka")})
    document = json.loads(text)
    assert document["status"] == "ok"
    assert [b["bidder"] for b in document["bidder_status"]] == ["beta"]
    assert document["bidder_status"][0]["usersync"]["type"] == "iframe"  # iframe is the default type
    assert document["debug"] == [{"bidder": "alpha", "error": "Already in sync"}]


async def test_opted_out(sync_client):
    client = await sync_client()
    optout = encode_cookie(UidsCookie(optout=True))
    assert (await post(client, {"gdpr": 0}, cookies={"uids": optout}))[:2] == (401, "User has opted out\n")


async def test_host_optout_cookie(sync_client):
    client = await sync_client(host_cookie={"optout_cookie": {"name": "nosync", "value": "1"}})
    assert (await post(client, {"gdpr": 0}, cookies={"nosync": "1"}))[:2] == (401, "User has opted out\n")
    assert (await post(client, {"gdpr": 0}, cookies={"nosync": "0"}))[0] == 200


async def test_all_syncable_bidders_when_none_are_requested(sync_client):
    client = await sync_client()
    document = json.loads((await post(client, {"gdpr": 0}))[1])
    assert sorted(offered_keys(document)) == sorted(ALL_SYNC_KEYS)
    assert {"ka", "kb", "kc", "adnxs", "openx", "medianet", "adform", "smartadserver"} <= ALL_SYNC_KEYS


@pytest.mark.parametrize(
    ("body", "account", "expected_count"),
    [
        ({"limit": 2}, {}, 2),
        ({}, {"cookie_sync": {"default_limit": 3}}, 3),
        ({"limit": 5}, {"cookie_sync": {"max_limit": 1}}, 1),
        ({"limit": 0}, {"cookie_sync": {"default_limit": 1}}, len(ALL_SYNC_KEYS)),  # 0 in the request: unlimited
    ],
)
async def test_limits(sync_client, data_dir, body, account, expected_count):
    write_account(data_dir, "acc", account)
    client = await sync_client()
    document = json.loads((await post(client, {"gdpr": 0, "account": "acc", **body}))[1])
    assert len(document["bidder_status"]) == expected_count


@pytest.mark.parametrize(
    ("requested", "default", "maximum", "expected"),
    [(None, 0, 0, 0), (-1, 20, 0, 0), (0, 20, 0, 0), (10, 20, 30, 10), (30, 20, 10, 10), (None, 30, 0, 30),
     (30, 40, 0, 30), (None, 0, 5, 5)],
)
def test_effective_limit(requested, default, maximum, expected):
    assert effective_limit(requested, default, maximum) == expected


@pytest.mark.parametrize(
    ("config", "body", "expected"),
    [
        ({}, {"bidders": ["alpha"]}, {"alpha"}),  # coop off by default
        ({}, {"bidders": ["alpha"], "coopSync": True}, ALL_SYNC_KEYS),
        ({"user_sync": {"coop_sync": {"default": True}, "priority_groups": [["gamma2"]]}},
         {"bidders": ["alpha"], "limit": 2}, {"alpha", "gamma2"}),  # priority groups come first
    ],
)
async def test_cooperative_sync(sync_client, config, body, expected):
    client = await sync_client(config)
    document = json.loads((await post(client, {"gdpr": 0, **body}))[1])
    if expected is ALL_SYNC_KEYS:
        assert sorted(offered_keys(document)) == sorted(expected)
    else:
        assert {b["bidder"] for b in document["bidder_status"]} == expected


async def test_account_coop_and_priority_groups_only(sync_client, data_dir):
    write_account(data_dir, "acc", {"cookie_sync": {"default_coop_sync": True, "priority_groups": [["beta"]],
                                                    "priority_groups_only": True}})
    client = await sync_client()
    document = json.loads((await post(client, {"gdpr": 0, "account": "acc", "bidders": ["alpha"]}))[1])
    assert {b["bidder"] for b in document["bidder_status"]} == {"alpha", "beta"}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"iframe": {"bidders": "*", "filter": "exclude"}}, {"alpha": "redirect", "beta": "redirect"}),  # AMP
        ({"image": {"bidders": ["alpha"], "filter": "exclude"}}, {"beta": "iframe"}),
        ({"image": {"bidders": ["ALPHA"]}}, {"alpha": "redirect", "beta": "iframe"}),  # filter: include by default
        ({"iframe": {"filter": "exclude"}, "image": {"filter": "exclude"}}, {}),  # bidders: * by default
    ],
)
async def test_filter_settings(sync_client, filters, expected):
    client = await sync_client()
    body = {"gdpr": 0, "bidders": ["alpha", "beta"], "filterSettings": filters}
    document = json.loads((await post(client, body))[1])
    assert {b["bidder"]: b["usersync"]["type"] for b in document["bidder_status"]} == expected


async def test_requested_names_keep_their_case_and_unknown_ones_are_debugged(sync_client):
    client = await sync_client()
    body = {"gdpr": 0, "bidders": ["ALPHA", "nobody", "rubicon", "alpha"], "debug": True}
    document = json.loads((await post(client, body))[1])
    [chosen] = [b["bidder"] for b in document["bidder_status"]]  # the order is shuffled: either spelling
    assert chosen in ("ALPHA", "alpha")
    other = "alpha" if chosen == "ALPHA" else "ALPHA"
    assert sorted(document["debug"], key=lambda d: d["bidder"]) == sorted([
        {"bidder": other, "error": "Duplicate bidder synced as ka"},
        {"bidder": "nobody", "error": "Unsupported bidder"},
        {"bidder": "rubicon", "error": "Bidder is disabled"},
    ], key=lambda d: d["bidder"])


async def test_support_cors_is_reported(sync_client):
    client = await sync_client()
    document = json.loads((await post(client, {"gdpr": 0, "bidders": ["gamma2"]}))[1])
    assert document["bidder_status"][0]["usersync"]["supportCORS"] is True


async def test_activity_controls_block_bidders(sync_client, data_dir):
    write_account(data_dir, "acc", {"privacy": {"allowactivities": {"syncUser": {
        "default": True, "rules": [{"condition": {"componentName": ["beta"], "componentType": ["bidder"]},
                                    "allow": False}],
    }}}})
    client = await sync_client()
    body = {"gdpr": 0, "account": "acc", "bidders": ["alpha", "beta"], "debug": True}
    document = json.loads((await post(client, body))[1])
    assert [b["bidder"] for b in document["bidder_status"]] == ["alpha"]
    assert document["debug"] == [{"bidder": "beta", "error": "Rejected by privacy"}]


@pytest.mark.parametrize(
    ("enforce", "us_privacy", "expected"),
    [(False, "1YYN", ["alpha"]), (True, "1YYN", []), (True, "1YNN", ["alpha"]), (True, "junk", ["alpha"])],
)
async def test_ccpa_enforcement(sync_client, enforce, us_privacy, expected):
    client = await sync_client(ccpa={"enforce": enforce})
    document = json.loads((await post(client, {"gdpr": 0, "bidders": ["alpha"], "us_privacy": us_privacy}))[1])
    assert [b["bidder"] for b in document["bidder_status"]] == expected


async def test_gdpr_in_scope_without_vendor_consent_blocks_bidders(sync_client):
    """TCF is the one Prebid Server uses in its tests: no purpose or vendor consents."""
    client = await sync_client()
    body = {"gdpr": 1, "gdpr_consent": TCF, "bidders": ["alpha"], "debug": True}
    document = json.loads((await post(client, body))[1])
    assert document["bidder_status"] == []
    assert document["debug"] == [{"bidder": "alpha", "error": "Rejected by privacy"}]


async def test_host_vendor_blocked_answers_an_empty_list(sync_client):
    client = await sync_client(gdpr={"host_vendor_id": 15})
    for consent in (TCF, "not-a-consent-string"):
        status, text, _ = await post(client, {"gdpr": 1, "gdpr_consent": consent, "bidders": ["alpha"]},
                                     cookies={"uids": live_cookie("kz")})
        assert (status, json.loads(text)) == (200, {"status": "ok", "bidder_status": []})


async def test_gdpr_macros_come_from_gpp(sync_client):
    client = await sync_client(gdpr={"enabled": False})
    body = {"bidders": ["alpha"], "gdpr": 0, "gdpr_consent": "other", "gpp": GPP_TCF, "gpp_sid": "2"}
    document = json.loads((await post(client, body))[1])
    url = document["bidder_status"][0]["usersync"]["url"]
    assert f"gdpr%3D1%26gdpr_consent%3D{TCF}%26gpp%3D{GPP_TCF}%26gpp_sid%3D2%26" in url


async def test_metrics_and_analytics(sync_client, tmp_path):
    log = tmp_path / "a.jsonl"
    client = await sync_client(analytics={"file": {"filename": str(log)}})
    await post(client, {"gdpr": 0, "bidders": ["alpha", "beta"]}, cookies={"uids": live_cookie("kb")})
    await post(client, {"gdpr": 5})
    metrics = await (await client.get("/metrics")).text()
    assert 'hbserver_cookie_sync_requests{status="ok"} 1.0' in metrics
    assert 'hbserver_cookie_sync_requests{status="bad_request"} 1.0' in metrics
    assert 'hbserver_syncer_requests{status="ok",syncer="ka"} 1.0' in metrics
    assert 'hbserver_syncer_requests{status="already_synced",syncer="kb"} 1.0' in metrics
    await client.close()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["event"], r["status"]) for r in records] == [("cookie_sync", 200), ("cookie_sync", 400)]
    assert records[0]["bidder_status"][0]["bidder"] == "alpha"
    assert records[1]["errors"] == ["GDPR signal should be integer 0 or 1"]


async def test_urls_follow_the_privacy_values_of_each_request(sync_client):
    client = await sync_client()
    for i in range(5):
        document = json.loads((await post(client, {"gdpr": 0, "gdpr_consent": f"c{i}", "bidders": ["alpha"]}))[1])
        assert f"gdpr_consent%3Dc{i}%26" in document["bidder_status"][0]["usersync"]["url"]


def _entry_endpoint(monkeypatch, size: int):
    import hbserver.endpoints.cookie_sync as cookie_sync
    from hbserver.analytics import Analytics
    from hbserver.app import build_sync_service
    from hbserver.config import load_config
    from hbserver.metrics import Metrics
    from hbserver.usersync.chooser import Chosen

    monkeypatch.setattr(cookie_sync, "ENTRY_CACHE_SIZE", size)
    service = build_sync_service(load_config(environ={}, overrides={"adapters": ADAPTERS}))
    endpoint = cookie_sync.CookieSyncEndpoint(service, None, Analytics([]), Metrics())
    return endpoint, Chosen("alpha", service.registry.lookup("alpha"), "redirect")


def test_the_entry_cache_is_bounded(monkeypatch):
    from hbserver.endpoints.cookie_sync import _entry
    from hbserver.usersync.privacy import SyncPrivacy

    endpoint, alpha = _entry_endpoint(monkeypatch, 3)
    for i in range(10):  # every request its own US Privacy string: a key each
        privacy = SyncPrivacy(0, "c", f"1YN{i}", "", "")
        assert endpoint._status_entry(alpha, privacy) == orjson.dumps(_entry(alpha, privacy.macros()))
        assert len(endpoint._entries) <= 3
    assert len(endpoint._entries) == 1  # emptied when full, then filled again


@pytest.mark.parametrize("consent", ["", "CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA.YAAAAAAAAAA", "a~b_c-d.e"])
def test_entries_of_each_users_consent_string_come_from_one_kept_entry(monkeypatch, consent):
    """The consent string is not part of the entry's key: every user's own string is joined into
    the kept pieces, and the entry is the one rendered for that string."""
    from hbserver.endpoints.cookie_sync import _entry
    from hbserver.usersync.privacy import SyncPrivacy

    endpoint, alpha = _entry_endpoint(monkeypatch, 3)
    for i in range(5):
        privacy = SyncPrivacy(1, consent + ("" if consent == "" else str(i)), "1YNN", "", "")
        encoded = endpoint._status_entry(alpha, privacy)
        assert encoded == orjson.dumps(_entry(alpha, privacy.macros()))
        assert privacy.consent in json.loads(encoded)["usersync"]["url"]
    assert len(endpoint._entries) == 1


@pytest.mark.parametrize("consent", ['a"b', "a\\b", "a\nb", "h\u00e9", "a b"])
def test_a_consent_string_json_would_change_is_rendered_whole_and_not_kept(monkeypatch, consent):
    from hbserver.endpoints.cookie_sync import _entry
    from hbserver.usersync.privacy import SyncPrivacy

    endpoint, alpha = _entry_endpoint(monkeypatch, 3)
    privacy = SyncPrivacy(1, consent, "", "", "")
    encoded = endpoint._status_entry(alpha, privacy)
    assert encoded == orjson.dumps(_entry(alpha, privacy.macros()))
    assert json.loads(encoded)["usersync"]["url"].count(consent) >= 1
    assert endpoint._entries == {}


def test_a_sync_url_holding_the_slot_text_itself_is_rendered_whole(monkeypatch):
    from hbserver.endpoints import cookie_sync
    from hbserver.endpoints.cookie_sync import _entry
    from hbserver.usersync.privacy import SyncPrivacy

    endpoint, alpha = _entry_endpoint(monkeypatch, 3)
    monkeypatch.setattr(cookie_sync, "_CONSENT_SLOT", "alpha")  # appears in the bidder's own URL text
    for consent in ("CONE", "CTWO"):
        privacy = SyncPrivacy(1, consent, "", "", "")
        assert endpoint._status_entry(alpha, privacy) == orjson.dumps(_entry(alpha, privacy.macros()))
        assert consent.encode() in endpoint._status_entry(alpha, privacy)
    assert list(endpoint._entries.values()) == [()]  # kept as "render it whole"


def test_parsed_bodies_are_kept_by_their_bytes_and_bounded(monkeypatch):
    """A repeated body is parsed once and shared (read-only); refusals, large bodies and a full
    cache are handled without keeping anything wrong."""
    from hbserver.endpoints import cookie_sync

    monkeypatch.setattr(cookie_sync, "_parsed", {})
    monkeypatch.setattr(cookie_sync, "PARSED_CACHE_SIZE", 3)
    body = b'{"bidders":["alpha","beta"],"limit":1}'
    first = cookie_sync.parse_request_cached(body)
    assert first.bidders == ("alpha", "beta") and first.limit == 1
    assert cookie_sync.parse_request_cached(bytes(body)) is first
    with pytest.raises(AttributeError):
        first.limit = 5  # shared between requests: cannot be changed
    for _ in range(2):  # a refused body is refused again, never kept
        with pytest.raises(cookie_sync.BadRequest, match="bidders must be an array"):
            cookie_sync.parse_request_cached(b'{"bidders":"alpha"}')
    assert list(cookie_sync._parsed) == [body]
    large = b'{"bidders":["' + b"x" * cookie_sync.MAX_CACHED_BODY_BYTES + b'"]}'
    assert cookie_sync.parse_request_cached(large).bidders == ("x" * cookie_sync.MAX_CACHED_BODY_BYTES,)
    assert large not in cookie_sync._parsed
    for n in range(5):
        cookie_sync.parse_request_cached(b'{"limit":%d}' % n)
        assert len(cookie_sync._parsed) <= 3
    assert cookie_sync.parse_request_cached(b'{"limit":4}').limit == 4
    kept = dict(cookie_sync._parsed)
    per_user = b'{"gpp":"DBABMA~x"}'
    parsed = cookie_sync.parse_request_cached(per_user)  # each user's own string: never kept
    assert parsed == cookie_sync.parse_request(per_user) and parsed.gpp
    assert cookie_sync._parsed == kept


def test_a_body_with_a_consent_is_kept_without_it(monkeypatch):
    """Bodies alike but for their TC strings share one kept parse, each with its own string."""
    from hbserver.endpoints import cookie_sync

    monkeypatch.setattr(cookie_sync, "_parsed", {})
    bodies = [b'{"bidders": ["alpha"], "gdpr": 1, "gdpr_consent" : "%s", "limit": 2}' % c.encode()
              for c in (TCF, TCF + "x", "", TCF + ".YAAAAAAAAAA")]
    shared = set()
    for body in bodies * 2:
        request, kept = cookie_sync.parse_shared(body)
        assert request == cookie_sync.parse_request(body)
        shared.add(id(kept))
    assert len(shared) == 1 and len(cookie_sync._parsed) == 1


CUT_BODIES = [
    b'{"gdpr_consent":"a\\u0041"}',  # an escape: not cut
    b'{"gdpr_consent":"a b"}',  # not a TC string's bytes
    b'{"gdpr_consent":"a","gdpr_consent":"b"}',  # twice
    b'{"x":{"gdpr_consent":"a"},"gdpr_consent":"a"}',
    b'{"x":{"gdpr_consent":"a"}}',  # not the top-level field
    b'{"x":"\\"gdpr_consent\\":\\"a","gdpr_consent":"a"}',
    b'{"x":"y","gdpr_consent":"a","z":"gdpr_consent"}',
    b'{"gdpr_consent":5}',
    b'{"gdpr_consent":"a"',  # malformed
    b'{"gdpr_consent":"a", "gdpr": 5}',  # refused
    b'{"gdpr_consent":"\xff"}',
    b'{"gdpr_consent":"a"}',
]


@pytest.mark.parametrize("body", CUT_BODIES)
def test_a_consent_body_reads_as_parse_request_reads_it(monkeypatch, body):
    from hbserver.endpoints import cookie_sync

    def outcome(parse, data):
        try:
            return parse(data)
        except cookie_sync.BadRequest as exc:
            return str(exc)

    monkeypatch.setattr(cookie_sync, "_parsed", {})
    for variant in (body, body.replace(b'"a"', b'"CPX-x.y_z~0"'), body.replace(b'"a"', b'""'), body):
        assert outcome(cookie_sync.parse_request_cached, variant) == outcome(cookie_sync.parse_request, variant)


def test_plans_and_candidate_sets_are_kept_and_bounded(monkeypatch):
    """A plan per (kept parse, account, consent given or not); the chooser's candidates per account
    and privacy facts; both emptied when full."""
    from hbserver.endpoints import cookie_sync
    from hbserver.stores.accounts import Account

    monkeypatch.setattr(cookie_sync, "PLAN_CACHE_SIZE", 3)
    monkeypatch.setattr(cookie_sync, "_parsed", {})
    endpoint, _ = _entry_endpoint(monkeypatch, 3)
    account = Account("", load_config(environ={}, overrides={}).account_defaults, ActivityControl())
    for n in range(10):
        body = b'{"bidders":["alpha"],"limit":%d,"gdpr":1,"gdpr_consent":"%s"}' % (n, TCF.encode())
        request, shared = cookie_sync.parse_shared(body)
        plan = endpoint._plan(request, account, shared)
        assert endpoint._plan(request, account, shared) is plan and plan.limit == n
        assert len(endpoint._plans) <= 3 and len(endpoint._candidate_sets) == 1
        with pytest.raises(PrivacyRequestError):  # a plan of its own, and that one refuses it
            endpoint._plan(request._replace(gdpr_consent=""), account, shared)
    for n in range(5):  # every request its own US Privacy string: candidates stay one set (no CCPA)
        request, shared = cookie_sync.parse_shared(b'{"us_privacy":"1YN%d"}' % n)
        endpoint._plan(request, account, shared)
    assert len(endpoint._candidate_sets) <= 3


CDEP_ON = {"privacy": {"privacysandbox": {"cookiedeprecation": {"enabled": True, "ttlsec": 60}}}}


@pytest.mark.parametrize(
    ("settings", "body", "cookies", "expected"),
    [
        # endpoints/cookie_sync.go setCookieDeprecationHeader: on every answer once the account is known
        (CDEP_ON, {"account": "acc", "bidders": ["alpha"]}, None, True),
        (CDEP_ON, {"account": "acc", "gdpr": 1}, None, True),  # an error answer after the account loaded
        (CDEP_ON, {"account": "acc"}, {"uids": live_cookie("alpha")}, True),  # other cookies: still set
        (CDEP_ON, {"account": "acc"}, {"receive-cookie-deprecation": "1"}, False),  # the browser has it
        ({"privacy": {"privacysandbox": {"cookiedeprecation": {"enabled": False}}}}, {"account": "acc"}, None, False),
        ({}, {"account": "acc"}, None, False),
    ],
    ids=["ok", "privacy-error", "other-cookies", "already-set", "disabled", "no-settings"],
)
async def test_receive_cookie_deprecation(sync_client, data_dir, settings, body, cookies, expected):
    write_account(data_dir, "acc", settings)
    client = await sync_client()
    _, _, response = await post(client, body, cookies)
    labels = [v for v in response.headers.getall("Set-Cookie", []) if v.startswith("receive-cookie-deprecation=")]
    if not expected:
        assert labels == []
        return
    (label,) = labels
    assert label.startswith("receive-cookie-deprecation=1; Path=/; Expires=") and label.endswith(
        "; HttpOnly; Secure; SameSite=None; Partitioned;"
    )
    expires = parsedate_to_datetime(label.split("Expires=")[1].split(";")[0])
    assert abs((expires - datetime.now(UTC)).total_seconds() - 60) < 5  # ttlsec from the account


def _kept_answers_endpoint(monkeypatch):
    import hbserver.endpoints.cookie_sync as cookie_sync
    from hbserver.analytics import Analytics
    from hbserver.app import build_sync_service
    from hbserver.metrics import Metrics
    from hbserver.stores.accounts import Account

    monkeypatch.setattr(cookie_sync, "_parsed", {})
    service = build_sync_service(load_config(environ={}, overrides={"adapters": ADAPTERS}))
    endpoint = cookie_sync.CookieSyncEndpoint(service, None, Analytics([]), Metrics())
    account = Account("", load_config(environ={}, overrides={}).account_defaults, ActivityControl())
    return cookie_sync, endpoint, account


@pytest.mark.parametrize("limit", [0, 1, 2])
@pytest.mark.parametrize("debug", [False, True])
def test_kept_outcomes_answer_as_the_chooser_does(monkeypatch, limit, debug):
    """A request without a uid is answered from the outcome its plan keeps by (order, consent
    choices, vendor list): every answer equals the chooser's walk for the same order and consent
    (a cookie holding only another bidder's uid takes the walk; its status says "ok"), whatever
    the timestamps, and strings with the same choices share one outcome."""
    from hbserver.usersync import chooser
    from tests.privacy.tcf_encoder import CoreSegment

    cookie_sync, endpoint, account = _kept_answers_endpoint(monkeypatch)
    walked = {"uids": live_cookie("kz")}
    choices = [[], [1], [2, 3], [1, 2, 3]]  # the vendors consented to (alpha 1, beta 2, gamma2 3)
    for n in range(48):
        vendors = choices[n % len(choices)]
        consent = CoreSegment(created=16_500_000_000 + n, purposes=[1], vendors=vendors).encode()
        body = orjson.dumps({"bidders": ["alpha", "beta", "gamma2"], "gdpr": 1, "gdpr_consent": consent,
                             "limit": limit, "debug": debug})
        draw = (n * 7 % 6) / 6 + 0.01  # one of the six orders
        monkeypatch.setattr(chooser, "_random", lambda draw=draw: draw)
        request, shared = cookie_sync.parse_shared(body)
        kept = json.loads(endpoint._answer(request, account, {}, shared).body)
        walk = json.loads(endpoint._answer(request, account, walked, shared).body)
        assert (kept["status"], walk["status"]) == ("no_cookie", "ok")
        assert kept["bidder_status"] == walk["bidder_status"]
        assert kept.get("debug") == walk.get("debug")
        assert len(kept["bidder_status"]) == min(limit or 3, len(vendors))
        assert all(consent in entry["usersync"]["url"] for entry in kept["bidder_status"])
    plan = endpoint._plan(request, account, shared)
    assert 0 < len(plan.outcomes) <= 6 * len(choices)
    assert {key[1][0][:1] for key in plan.outcomes} == {consent[:1]}  # by choices key, not the string


def test_kept_outcomes_count_the_syncer_metrics_of_the_walk(monkeypatch):
    cookie_sync, endpoint, account = _kept_answers_endpoint(monkeypatch)
    from tests.privacy.tcf_encoder import CoreSegment

    for n in range(4):
        consent = CoreSegment(created=16_500_000_000 + n, purposes=[1], vendors=[1]).encode()
        body = orjson.dumps({"bidders": ["alpha", "beta"], "gdpr": 1, "gdpr_consent": consent})
        request, shared = cookie_sync.parse_shared(body)
        endpoint._answer(request, account, {}, shared)
    text = endpoint.metrics.render()[0].decode()
    assert 'hbserver_syncer_requests{status="ok",syncer="ka"} 4.0' in text
    assert 'hbserver_syncer_requests{status="privacy_blocked",syncer="kb"} 4.0' in text
    assert 'hbserver_cookie_sync_requests{status="ok"} 4.0' in text


VERBATIM_ROWS = [
    b"", (TCF + ".YAAAAAAAAAA").encode(), b"a-b_c~d.e", b"a b", b'a"b', b"a\\b", "h\u00e9".encode(), b"a\nb",
]


@pytest.mark.parametrize("text", [*VERBATIM_ROWS, *(bytes([n]) for n in range(256))])
def test_verbatim_bytes_are_exactly_base64url_dot_and_tilde(text):
    """The table test that decides whether a consent string is joined into kept pieces as it is."""
    import re

    from hbserver.endpoints.cookie_sync import _verbatim

    assert _verbatim(text) == bool(re.fullmatch(rb"[A-Za-z0-9._~-]*", text))


@pytest.mark.parametrize(("consent", "expected"), [("", b""), (TCF, TCF.encode()), ("a b", None), ("h\u00e9", None),
                                                   ("\ud800", None)])
def test_joinable_consent_strings(consent, expected):
    from hbserver.endpoints.cookie_sync import _joinable

    assert _joinable(consent) == expected
