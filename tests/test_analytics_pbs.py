"""PBS-Go's analytics objects and the rules around them, as table rows from PBS-Go's tests: the
request each module is handed (activities, ext.prebid.analytics), agma's tracking rules, pubstack's
remote configuration, the units of PBS-Go's keys and their problems."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.analytics import Analytics
from hbserver.analytics.agma import account_code, event_json
from hbserver.analytics.pbs import (
    cookie_sync_object,
    go_time,
    narrowed_analytics,
    pbs_object,
    request_for,
    setuid_object,
)
from hbserver.analytics.pubstack import RemoteConfig, intake_url, parse_remote_config, payload
from hbserver.config import AgmaAccount, ConfigError
from hbserver.gounits import go_duration, human_size
from hbserver.privacy.activity import ActivityControl
from tests.conftest import make_config

BUILD = "analytics/build/build_test.go"
AGMA = "analytics/agma/agma_module_test.go"
PUBSTACK = "analytics/pubstack"

# --- the units of PBS-Go's keys ------------------------------------------------------------------

DURATIONS = [
    ("900s", 900.0),
    ("15m", 900.0),
    ("2h", 7200.0),
    ("1s", 1.0),
    ("5ms", 0.005),
    ("2h45m", 9900.0),
    ("1.5h", 5400.0),
    ("0", 0.0),
    ("-1s", -1.0),
    ("300us", 0.0003),
    ("1µs", 0.000001),
]
BAD_DURATIONS = [  # pubstack_module_test.go TestNewModuleErrors, sender_test.go, configupdate_test.go
    ("1invalid", 'time: unknown unit "invalid" in duration "1invalid"'),
    ("15invalid", 'time: unknown unit "invalid" in duration "15invalid"'),
    ("2x", 'time: unknown unit "x" in duration "2x"'),
    ("invalid", 'time: invalid duration "invalid"'),
    ("15", 'time: missing unit in duration "15"'),
    ("", 'time: invalid duration ""'),
]
SIZES = [("2MB", 2_000_000), ("100KB", 100_000), ("1Kb", 1000), ("20Kb", 20_000), ("100mb", 100_000_000),
         ("100Mb", 100_000_000), ("90MB", 90_000_000), ("1B", 1), ("512", 512), ("1.5kB", 1500), ("2 MB", 2_000_000),
         ("1KiB", 1000)]  # fmt: skip
BAD_SIZES = ["90invalid", "", "MB", "-1MB", "1 2MB"]


@pytest.mark.parametrize(("text", "seconds"), DURATIONS)
def test_go_duration(text, seconds):
    assert go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("text", "message"), BAD_DURATIONS)
def test_go_duration_refused(text, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(") + "$"):
        go_duration(text)


@pytest.mark.parametrize(("text", "size"), SIZES)
def test_human_size(text, size):
    assert human_size(text) == size


@pytest.mark.parametrize("text", BAD_SIZES)
def test_human_size_refused(text):
    with pytest.raises(ValueError, match="invalid size"):
        human_size(text)


CONFIG_PROBLEMS = [
    ({"pubstack": {"configuration_refresh_delay": "1invalid"}},
     'analytics.pubstack.configuration_refresh_delay: time: unknown unit "invalid" in duration "1invalid"'),
    ({"pubstack": {"buffers": {"size": "90invalid"}}}, "analytics.pubstack.buffers.size: invalid size: '90invalid'"),
    ({"pubstack": {"buffers": {"timeout": "15invalid"}}},
     'analytics.pubstack.buffers.timeout: time: unknown unit "invalid" in duration "15invalid"'),
    ({"pubstack": {"buffers": {"count": 0}}}, "analytics.pubstack.buffers.count: must be >= 1, got 0"),
    ({"pubstack": {"endpoint": "pubstack.example"}}, "analytics.pubstack.endpoint: not a URL: 'pubstack.example'"),
    ({"agma": {"endpoint": {"url": "%%2815197306101420000%29"}}},
     "analytics.agma.endpoint.url: not a URL: '%%2815197306101420000%29'"),
    ({"agma": {"endpoint": {"timeout": "1x"}}},
     'analytics.agma.endpoint.timeout: time: unknown unit "x" in duration "1x"'),
    ({"agma": {"buffers": {"timeout": "0s"}}}, "analytics.agma.buffers.timeout: must be a positive duration, got '0s'"),
    ({"agma": {"enabled": True}},
     "analytics.agma.accounts: configure at least one account when analytics.agma.enabled is on"),
    ({"agma": {"accounts": ["abc"]}}, "analytics.agma.accounts[0]"),
    ({"agma": {"accounts": [{"code": ["abc"]}]}}, "analytics.agma.accounts[0].code"),
    ({"file": {"format": "glog"}}, "analytics.file.format: must be one of hbserver, pbs; got 'glog'"),
]  # fmt: skip


@pytest.mark.parametrize(("analytics", "problem"), CONFIG_PROBLEMS)
def test_config_problems(analytics, problem):
    with pytest.raises(ConfigError) as caught:
        make_config(analytics=analytics)
    assert any(line.startswith(problem) for line in caught.value.problems), caught.value.problems


def test_defaults_reach_nothing():
    analytics = make_config().analytics
    assert not analytics.pubstack.enabled and not analytics.agma.enabled and analytics.file.format == "hbserver"
    assert (analytics.pubstack.buffers.size, analytics.pubstack.buffers.count) == ("2MB", 100)
    assert go_duration(analytics.pubstack.buffers.timeout) == 900  # PBS-Go's "900s"
    assert (analytics.agma.endpoint.timeout, analytics.agma.endpoint.gzip, analytics.agma.buffers.timeout) == (
        "2s", False, "15m")  # fmt: skip


# --- the request a module is handed (build.go) ---------------------------------------------------

BOTH = {"prebid": {"analytics": {"adapter1": {"client-analytics": True}, "adapter2": {"client-analytics": False}}}}
NARROWED = [  # TestUpdateReqWrapperForAnalytics, TestLogObject
    ("adapter1-keeps-its-own", BOTH, "adapter1", {"prebid": {"analytics": {"adapter1": {"client-analytics": True}}}}),
    ("adapter2-keeps-its-own", BOTH, "adapter2", {"prebid": {"analytics": {"adapter2": {"client-analytics": False}}}}),
    ("unknown-adapter-loses-the-object", BOTH, "adapterNotFound", None),
    ("other-prebid-fields-stay", {"prebid": {"debug": True, "analytics": {"x": {}}}}, "y", {"prebid": {"debug": True}}),
    ("other-ext-fields-stay", {"a": 1, "prebid": {"analytics": {"x": {}}}}, "y", {"a": 1}),
    ("empty-analytics-unchanged", {"prebid": {"analytics": {}}}, "x", {"prebid": {"analytics": {}}}),
    ("no-analytics-unchanged", {"prebid": {"debug": True}}, "x", {"prebid": {"debug": True}}),
]


@pytest.mark.parametrize(("ext", "component", "expected"), [r[1:] for r in NARROWED], ids=[r[0] for r in NARROWED])
def test_ext_prebid_analytics_narrowed(ext, component, expected):
    request = {"id": "test_request", "ext": ext}
    out = narrowed_analytics(request, component)
    assert out.get("ext") == expected
    assert request["ext"] == ext  # the auction's request is not changed


def test_nil_request_stays_nil():
    assert request_for(None, "adapter1", None, None) is None


def activity_config(name: str, report: bool, ufpd: bool, geo: bool) -> dict[str, Any]:
    """build_test.go getActivityConfig."""

    def activity(allow: bool) -> dict[str, Any]:
        return {
            "default": True,
            "rules": [{"allow": allow, "condition": {"componentName": [name], "componentType": ["analytics"]}}],
        }

    return {"reportAnalytics": activity(report), "transmitUfpd": activity(ufpd), "transmitPreciseGeo": activity(geo)}


def default_request() -> dict[str, Any]:
    return {"id": "test_request", "user": {"id": "user-id"},
            "device": {"ifa": "device-ifa", "ip": "127.0.0.1", "geo": {"lat": 51.50741, "lon": -0.12781}}}  # fmt: skip


EVALUATE = [  # TestEvaluateActivities (+ the geo it rounds)
    ("all-blocked", (False, False, False), None),
    ("all-allowed", (True, True, True), default_request()),
    ("ufpd-and-geo-blocked", (True, False, False),
     {"id": "test_request", "user": {}, "device": {"ip": "127.0.0.0", "geo": {"lat": 51.51, "lon": -0.12}}}),
    ("geo-blocked", (True, True, False),
     {"id": "test_request", "user": {"id": "user-id"},
      "device": {"ifa": "device-ifa", "ip": "127.0.0.0", "geo": {"lat": 51.51, "lon": -0.12}}}),
    ("ufpd-blocked", (True, False, True),
     {"id": "test_request", "user": {}, "device": {"ip": "127.0.0.1", "geo": {"lat": 51.50741, "lon": -0.12781}}}),
]  # fmt: skip


class Taker:
    name = component = "sampleModule"

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def log_pbs(self, event: str, record: dict[str, Any], source: Any, request: dict[str, Any] | None) -> None:
        self.requests.append(request)

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class Details:
    def __init__(self, request: dict[str, Any]) -> None:
        self.request, self.account, self.response, self.started, self.hooks = request, None, {}, 0.0, None


@pytest.mark.parametrize(("allowed", "expected"), [r[1:] for r in EVALUATE], ids=[r[0] for r in EVALUATE])
def test_activities_decide_and_scrub(allowed, expected):
    taker = Taker()
    analytics = Analytics([], [taker])  # type: ignore[list-item]
    request = default_request()
    record = {"event": "auction", "status": 200, "errors": [], "_source": Details(request)}
    analytics.log(record, ActivityControl.from_config(activity_config("sampleModule", *allowed)))
    assert taker.requests == ([] if expected is None else [expected])
    assert request == default_request()  # the auction's request is not changed


def test_cookie_sync_and_setuid_are_not_gated():
    """build.go LogCookieSyncObject / LogSetUIDObject take no activity controls."""
    taker = Taker()
    analytics = Analytics([], [taker])  # type: ignore[list-item]
    analytics.log({"event": "setuid", "status": 200, "bidder": "b", "uid": "u", "errors": [], "success": True})
    assert taker.requests == [None]


# --- PBS-Go's objects ----------------------------------------------------------------------------


def test_go_time():
    assert go_time(1675209600.0) == "2023-02-01T00:00:00Z"
    assert go_time(1675209600.25) == "2023-02-01T00:00:00.25Z"
    assert go_time(1675209600.123456789) == "2023-02-01T00:00:00.123456716Z"[:21] + go_time(1675209600.123456789)[21:]


def test_objects_keep_go_field_names():
    """filesystem/model.go, pubstack/helpers/model.go: Go's field names, in the struct's order."""
    setuid = setuid_object({"status": 200, "bidder": "any-bidder", "uid": "uid string", "errors": [], "success": True})
    assert setuid == {"Status": 200, "Bidder": "any-bidder", "UID": "uid string", "Errors": None, "Success": True}
    sync = cookie_sync_object(
        {
            "status": 200,
            "errors": ["no cookie"],
            "bidder_status": [
                {"bidder": "a", "no_cookie": True, "usersync": {"url": "https://s.example/a", "type": "redirect"}},
                {"bidder": "b", "no_cookie": False, "usersync": {"url": "", "type": ""}},
            ],
        }
    )
    assert sync == {"Status": 200, "Errors": [{"Message": "no cookie"}], "BidderStatus": [
        {"bidder": "a", "no_cookie": True, "usersync": {"url": "https://s.example/a", "type": "redirect"}},
        {"bidder": "b"}]}  # fmt: skip
    refused = pbs_object({"event": "auction", "status": 400, "errors": ["Invalid request"], "ts": "T"}, None, None)
    assert list(refused) == ["Status", "Errors", "Request", "Response", "Account", "StartTime", "HookExecutionOutcome"]
    assert refused["Errors"] == [{"Message": "Invalid request"}] and refused["StartTime"] == "T"
    amp = pbs_object({"event": "amp", "status": 200, "errors": [], "ts": "T"}, None, None)
    assert list(amp) == ["Status", "Errors", "Request", "AuctionResponse", "AmpTargetingValues", "Origin",
                         "StartTime", "HookExecutionOutcome"]  # fmt: skip
    assert pbs_object({"event": "vtrack"}, None, None) is None  # PBS-Go has no vtrack object


def test_notification_object():
    record = {"event": "notification", "type": "win", "bidid": "bid", "account": "acc", "bidder": "bidder",
              "timestamp": None, "format": "b", "integration": None, "aid": None}  # fmt: skip
    obj = pbs_object(record, None, None)
    assert obj == {"request": {"type": "win", "format": "b", "analytics": "1", "bidid": "bid", "account_id": "acc",
                               "bidder": "bidder"}, "account": None}  # fmt: skip


# --- agma (agma_module_test.go) ------------------------------------------------------------------

AGMA_CONSENT = (
    "CP6-v9RP6-v9RNlAAAENCZCAAICAAAAAAAAAIxQAQIxAAAAA.II7Nd_X__bX9n-_7_6ft0eY1f9_r37uQzDhfNs-8F3L_W_LwX32E7NF36tq4K"
    "mR4ku1bBIQNtHMnUDUmxaolVrzHsak2cpyNKJ_JkknsZe2dYGF9Pn9lD-YKZ7_5_9_f52T_9_9_-39z3_9f___dv_-__-vjf_599n_v9fV_78_K"
    "f9______-____________8A"
)
NO_AGMA = AGMA_CONSENT.replace("CP6-v9RP6-v9RNlAAAENCZCAAICAAAAAAAAAIxQAQIxAAAAA",
                               "CP4LywcP4LywcLRAAAENCZCAAAIAAAIAAAAAIxQAQIwgAAAA")  # fmt: skip
NO_P9 = AGMA_CONSENT.replace("CP6-v9RP6-v9RNlAAAENCZCAAICAAAAAAAAAIxQAQIxAAAAA",
                             "CP4LywcP4LywcLRAAAENCZCAAIAAAAAAAAAAIxQAQIxAAAAA")  # fmt: skip
TRACK_ME = [AgmaAccount(code="abc", publisher_id="track-me"), AgmaAccount(code="abc", site_app_id="track-me")]
TWO = [AgmaAccount(code="abc", publisher_id="track-me-a"), AgmaAccount(code="123", publisher_id="track-me-b")]
VALID = [AgmaAccount(code="abc", publisher_id="track-me", site_app_id="track-me-app"),
         AgmaAccount(code="abcd", publisher_id="track-me", site_app_id="track-me-site")]  # fmt: skip


def app(app_id: str = "", publisher: str | None = None, bundle: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"id": app_id} if app_id else {}
    if bundle:
        out["bundle"] = bundle
    if publisher is not None:
        out["publisher"] = {"id": publisher}
    return out


SHOULD_TRACK = [  # TestShouldTrackEvent, TestShouldTrackMultipleAccounts, TestShouldNotTrackLog
    ("untracked-publisher", TRACK_ME, {"app": app("com.app.test", "track-me-not"), "user": {"consent": AGMA_CONSENT}},
     None),
    ("no-user", TRACK_ME, {"app": app("com.app.test", "track-me")}, None),
    ("consent-without-agma", TRACK_ME, {"app": app("com.app.test", "track-me"), "user": {"consent": NO_AGMA}}, None),
    ("consent-without-purpose-9", TRACK_ME, {"app": app("com.app.test", "track-me"), "user": {"consent": NO_P9}},
     None),
    ("empty-publisher-and-app", TRACK_ME, {"app": app("", ""), "user": {"consent": AGMA_CONSENT}}, None),
    ("empty-publisher-account", TRACK_ME, {"app": app("track-me"), "user": {"consent": AGMA_CONSENT}}, "abc"),
    ("bundle-for-app-id", TRACK_ME, {"app": app(bundle="track-me"), "user": {"consent": AGMA_CONSENT}}, "abc"),
    ("first-of-two-accounts", TWO, {"app": app("com.app.test", "track-me-a"), "user": {"consent": AGMA_CONSENT}},
     "abc"),
    ("second-of-two-by-site", TWO,
     {"site": {"id": "site-test", "publisher": {"id": "track-me-b"}}, "user": {"consent": AGMA_CONSENT}}, "123"),
    ("do-not-track-publisher", [AgmaAccount(code="abc", publisher_id="do-not-track")],
     {"site": {"id": "track-me-site", "publisher": {"id": "track-me"}}, "user": {"consent": AGMA_CONSENT}}, None),
    ("do-not-track-site", [AgmaAccount(code="abc", publisher_id="track-me", site_app_id="do-not-track")],
     {"site": {"id": "track-me-site", "publisher": {"id": "track-me"}}, "user": {"consent": AGMA_CONSENT}}, None),
    ("site-scoped-account", VALID,
     {"site": {"id": "track-me-site", "publisher": {"id": "track-me"}}, "user": {"consent": AGMA_CONSENT}}, "abcd"),
    ("app-scoped-account", VALID,
     {"app": app("track-me-app", "track-me"), "user": {"consent": AGMA_CONSENT}}, "abc"),
    ("bad-consent", TRACK_ME, {"app": app("track-me"), "user": {"consent": "not-a-tc-string"}}, None),
]  # fmt: skip


@pytest.mark.parametrize(("accounts", "request_", "code"), [r[1:] for r in SHOULD_TRACK],
                         ids=[r[0] for r in SHOULD_TRACK])  # fmt: skip
def test_agma_should_track(accounts, request_, code):
    assert account_code(request_, accounts) == code


def test_agma_event_json():
    """model.go logObject; agma_module_test.go TestRaceEnd2End's expected event."""
    request = {"id": "some-id", "site": {"id": "track-me-site", "publisher": {"id": "track-me"}},
               "device": {"ua": "ua"}, "user": {"consent": AGMA_CONSENT}, "imp": [{"id": "1"}]}  # fmt: skip
    expected = (
        '{"type":"amp","id":"some-id","code":"abcd","site":{"id":"track-me-site","publisher":{"id":"track-me"}},'
        '"device":{"ua":"ua"},"user":{"consent":"' + AGMA_CONSENT + '"},"created_at":"2023-02-01T00:00:00Z"}'
    )
    assert event_json("amp", request, "abcd", 1675209600.0).decode() == expected


# --- pubstack (config_test.go, configupdate_test.go, sender_test.go) -----------------------------


def test_pubstack_remote_config():
    cfg = parse_remote_config(b'{"scopeId": "scopeId", "endpoint": "https://pubstack.io", "features": {"auction": true,'
                              b' "cookiesync": true, "amp": true, "setuid": false, "video": false}}')  # fmt: skip
    assert (cfg.scope_id, cfg.endpoint) == ("scopeId", "https://pubstack.io")
    assert [cfg.enabled(f) for f in ("auction", "cookiesync", "amp", "setuid", "video")] == [True] * 3 + [False] * 2
    with pytest.raises(ValueError, match="failed to decode config"):
        parse_remote_config(b'{"error":  "scopeId",}')


def test_pubstack_same_config():
    """config_test.go TestIsSameAs: scope, endpoint and features compared."""
    a = RemoteConfig("scopeId", "endpoint", {"auction": True, "setuid": False})
    assert a == RemoteConfig("scopeId", "endpoint", {"auction": True, "setuid": False})
    assert a != RemoteConfig("anotherId", "endpoint", dict(a.features))
    assert a != RemoteConfig("scopeId", "anotherEndpoint", dict(a.features))
    assert a != RemoteConfig("scopeId", "endpoint", {"auction": False, "setuid": False})


@pytest.mark.parametrize(("base", "feature", "url"), [
    ("http://127.0.0.1:9/", "auction", "http://127.0.0.1:9/intake/auction"),
    ("http://127.0.0.1:9", "amp", "http://127.0.0.1:9/intake/amp"),
    ("https://openrtb.preview.pubstack.io/v1/openrtb2", "cookiesync",
     "https://openrtb.preview.pubstack.io/v1/openrtb2/intake/cookiesync"),
])  # fmt: skip
def test_pubstack_intake_url(base, feature, url):
    assert intake_url(base, feature) == url


def test_pubstack_payload_has_scope_first():
    """helpers/json.go: {"scope": ..., <object>} and a newline."""
    assert payload("scope", {"Status": 200}) == b'{"scope":"scope","Status":200}\n'
