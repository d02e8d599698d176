"""pb-request-correction: PBS-Java's RequestCorrectionProcessedAuctionHookTest, the producers' and
corrections' tests and VersionUtilTest, as tables."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hbserver.hooks.api import HookFailure, HookResult, InvocationContext, ProcessedAuctionRequestPayload
from hbserver.modules import builder_of
from hbserver.modules.request_correction import HOOK_CODE, build
from hbserver.modules.request_correction.config import Config, read_config
from hbserver.modules.request_correction.corrections import corrections
from hbserver.modules.request_correction.jackson import JacksonError
from hbserver.modules.request_correction.version import is_version_less_than

INT_MAX = 2**31 - 1


def _ctx(account_config: dict[str, Any] | None) -> InvocationContext:
    return InvocationContext("/openrtb2/auction", "acc", account_config, {}, HOOK_CODE)


def _run(account_config: dict[str, Any] | None, request: dict[str, Any]) -> tuple[HookResult[Any], dict[str, Any]]:
    """The hook's result and the request after its mutations (the input must stay untouched)."""
    before = copy.deepcopy(request)
    result = build({"enabled": True}).handle_processed_auction_request(
        _ctx(account_config), ProcessedAuctionRequestPayload(request)
    )
    payload = ProcessedAuctionRequestPayload(request)
    for mutation in result.mutations:
        payload = mutation.apply(payload)
    assert request == before
    return result, payload.request


def _app(source: str | None = "prebid-mobile", version: str | None = "1.2.3", bundle: str | None = None) -> dict:
    prebid = {k: v for k, v in (("source", source), ("version", version)) if v is not None}
    app: dict[str, Any] = {"ext": {"prebid": prebid}}
    if bundle is not None:
        app["bundle"] = bundle
    return app


# VersionUtilTest
@pytest.mark.parametrize(
    ("version", "bound", "less"),
    [
        ("2.4.3", (2, 2, 3), False),
        ("2.4.3", (2, 4, 3), False),
        ("2.2.3", (2, 4, 3), True),
        ("0", (2, 2, 3), True),
        ("1", (2, 2, 3), True),
        ("2", (2, 2, 3), True),
        ("3", (2, 2, 3), False),
        (f"0.{INT_MAX}", (2, 2, 3), True),
        (f"1.{INT_MAX}", (2, 2, 3), True),
        ("2.0", (2, 2, 3), True),
        ("2.1", (2, 2, 3), True),
        ("2.2", (2, 2, 3), True),
        ("2.3", (2, 2, 3), False),
        (f"0.{INT_MAX}.{INT_MAX}", (2, 2, 3), True),
        (f"1.{INT_MAX}.{INT_MAX}", (2, 2, 3), True),
        (f"2.1.{INT_MAX}", (2, 2, 3), True),
        ("2.2.1", (2, 2, 3), True),
        ("2.2.2", (2, 2, 3), True),
        ("2.2.3", (2, 2, 3), False),
        # Integer.parseInt's rules: an unreadable or negative major is "newer", minor/patch count as 0
        ("1a.2.3", (2, 2, 3), False),
        ("-1.0.0", (2, 2, 3), False),
        ("", (2, 2, 3), False),
        ("...", (2, 2, 3), False),
        ("2.x.9", (2, 2, 3), True),
        ("2.2.-5", (2, 2, 3), True),
        ("+1.0", (2, 2, 3), True),
        (f"{INT_MAX + 1}", (2, 2, 3), False),
        ("2.2.3.", (2, 2, 3), False),
        (" 1", (2, 2, 3), False),
    ],
)
def test_version_less_than(version: str, bound: tuple[int, int, int], less: bool) -> None:
    assert is_version_less_than(version, *bound) is less


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (None, None),
        ({}, Config()),
        ({"enabled": True, "pbsdk-android-instl-remove": True}, Config(True, True, False)),
        ({"enabled": True, "pbsdkAndroidInstlRemove": True}, Config(True, True, False)),
        ({"enabled": True, "pbsdk-ua-cleanup": True}, Config(True, False, True)),
        ({"enabled": True, "pbsdkUaCleanup": True}, Config(True, False, True)),
        ({"pbsdkUaCleanup": True, "pbsdk-ua-cleanup": False}, Config(False, False, False)),  # the last wins
        ({"enabled": "true", "pbsdk-ua-cleanup": 1}, Config(True, False, True)),  # Jackson's coercions
        ({"enabled": "TRUE", "pbsdk-ua-cleanup": 0}, Config(True, False, False)),
        ({"enabled": None, "pbsdk-ua-cleanup": ""}, Config()),
        ({"enabled": True, "pbsdk_ua_cleanup": True, "interstitialCorrectionEnabled": True}, Config(True)),
    ],
)
def test_read_config(node: dict[str, Any] | None, expected: Config | None) -> None:
    assert read_config(node) == expected


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"enabled": []}, "Cannot deserialize value of type `boolean` from Array value"),
        ({"enabled": {}}, "Cannot deserialize value of type `boolean` from Object value"),
        ({"pbsdkUaCleanup": "yes"}, 'Cannot deserialize value of type `boolean` from String "yes"'),
        ({"pbsdk-android-instl-remove": 1.5}, "Floating-point value"),
    ],
)
def test_read_config_refuses(node: dict[str, Any], message: str) -> None:
    with pytest.raises(JacksonError, match=message) as raised:
        read_config(node)
    assert f'["{next(iter(node))}"]' in str(raised.value)


INTERSTITIAL = {"enabled": True, "pbsdk-android-instl-remove": True}
USER_AGENT = {"enabled": True, "pbsdk-ua-cleanup": True}


# InterstitialCorrectionProducerTest, UserAgentCorrectionProducerTest
@pytest.mark.parametrize(
    ("config", "request_", "names"),
    [
        ({"enabled": True, "pbsdk-android-instl-remove": False}, {}, []),
        (INTERSTITIAL, {"imp": [], "app": {}}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(source="source", version=None)}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(bundle="bundle")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(version="1a.2.3", bundle="bundleAndroid")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(bundle="bundleAndroid")}, ["interstitial"]),
        # the rules around the ones PBS-Java's tests name
        (INTERSTITIAL, {"imp": [{"instl": 0}, {}], "app": _app(bundle="bundleAndroid")}, []),
        (
            INTERSTITIAL,
            {"imp": [{"instl": 1}], "app": _app(source="Prebid-MOBILE", bundle="ANDROID")},
            ["interstitial"],
        ),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(version="2.2.3", bundle="android")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(version="2.2.2", bundle="android")}, ["interstitial"]),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(version=None, bundle="android")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(bundle=None)}, []),
        (INTERSTITIAL, {"imp": [{"instl": True}], "app": _app(bundle="android")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "site": {}}, []),
        # PbRequestCorrectionSpec
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(bundle="IOS")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(source="prebid-mobileX", bundle="android")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(source="Xprebid-mobile", bundle="android")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}], "app": _app(source=None, bundle="android")}, []),
        (INTERSTITIAL, {"imp": [{}], "app": _app(bundle="android")}, []),
        (INTERSTITIAL, {"imp": [{"instl": 1}] * 2, "app": _app(bundle="xandroid_android1")}, ["interstitial"]),
        (USER_AGENT, {"device": {"ua": "PrebidMobile/"}, "app": _app()}, []),
        (USER_AGENT, {"device": {"ua": "PrebidMobile/1"}, "app": _app(source="mobile-prebid")}, []),
        (USER_AGENT, {"device": {"ua": "PrebidMobile/1"}, "app": _app(source="prebid")}, []),
        (USER_AGENT, {"device": {"ua": "PrebidMobile/1"}, "app": _app("PREBID-mobile", "2.1.5")}, ["user-agent"]),
        ({"enabled": True, "pbsdk-ua-cleanup": False}, {}, []),
        (USER_AGENT, {}, []),
        (USER_AGENT, {"imp": [{"instl": 1}], "app": _app(source="source", version=None)}, []),
        (USER_AGENT, {"app": _app(version="1a.2.3")}, []),
        (USER_AGENT, {"device": {"ua": "Blah blah"}, "app": _app()}, []),
        (USER_AGENT, {"device": {"ua": "Blah PrebidMobile/1asdf blah"}, "app": _app()}, ["user-agent"]),
        (USER_AGENT, {"device": {"ua": "PrebidMobile/2"}, "app": _app(version="2.1.5")}, ["user-agent"]),
        (USER_AGENT, {"device": {"ua": "PrebidMobile/2"}, "app": _app(version="2.1.6")}, []),
        (USER_AGENT, {"device": {"ua": "PrebidMobile/x1"}, "app": _app()}, []),
        (USER_AGENT, {"device": {"ua": "a\nPrebidMobile/1"}, "app": _app()}, []),  # Java's "." stops at \n
        (USER_AGENT, {"device": {"ua": "a\rPrebidMobile/1"}, "app": _app()}, []),
        (USER_AGENT, {"device": {"ua": "a\u2028PrebidMobile/1"}, "app": _app()}, []),
        (USER_AGENT, {"device": {"ua": "PrebidMobile/1\nb"}, "app": _app()}, ["user-agent"]),
        (USER_AGENT, {"device": {"ua": ""}, "app": _app()}, []),
        (
            {**INTERSTITIAL, **USER_AGENT},
            {"imp": [{"instl": 1}], "device": {"ua": "PrebidMobile/1"}, "app": _app(bundle="android")},
            ["interstitial", "user-agent"],
        ),
    ],
)
def test_corrections_apply(config: dict[str, Any], request_: dict[str, Any], names: list[str]) -> None:
    parsed = read_config(config)
    assert parsed is not None
    assert [c.name for c in corrections(parsed, request_)] == names


def test_interstitial_removes_instl_1_only() -> None:
    request = {"imp": [{"id": "a", "instl": 0}, {"id": "b"}, {"id": "c", "instl": 1}], "app": _app(bundle="android")}
    result, corrected = _run(INTERSTITIAL, request)
    assert [m.key for m in result.mutations] == [("imp",)]
    assert corrected["imp"] == [{"id": "a", "instl": 0}, {"id": "b"}, {"id": "c"}]
    assert corrected["imp"][0] is request["imp"][0]  # untouched imps are shared


@pytest.mark.parametrize(
    ("ua", "expected"),
    [
        ("blah PrebidMobile/1asdf blah", "blah  blah"),
        ("PrebidMobile/1 x PrebidMobile/2.0 PrebidMobile/y", " x  PrebidMobile/y"),
        ("Mozilla PrebidMobile/2.1.0\tkeep", "Mozilla "),
        ("123 PrebidMobile/456 abc", "123  abc"),
        ("PrebidMobile/456", ""),
    ],
)
def test_user_agent_cleanup(ua: str, expected: str) -> None:
    request = {"device": {"ua": ua, "ip": "1.2.3.4"}, "app": _app()}
    result, corrected = _run(USER_AGENT, request)
    assert [m.key for m in result.mutations] == [("device", "ua")]
    assert corrected["device"] == {"ua": expected, "ip": "1.2.3.4"}


# RequestCorrectionProcessedAuctionHookTest
@pytest.mark.parametrize(
    "account_config",
    [None, {}, {"enabled": False, "pbsdk-android-instl-remove": True}, {"pbsdk-android-instl-remove": True}],
)
def test_no_action_when_disabled(account_config: dict[str, Any] | None) -> None:
    request = {"imp": [{"instl": 1}], "app": _app(bundle="android")}
    result, corrected = _run(account_config, request)
    assert result.mutations == [] and corrected is request


def test_no_action_without_applicable_corrections() -> None:
    request = {"imp": [{"instl": 1}], "app": _app(version="9.0", bundle="android")}
    result, _ = _run(INTERSTITIAL, request)
    assert result.mutations == [] and not result.errors and not result.analytics_tags


def test_failure_on_invalid_configuration() -> None:
    with pytest.raises(HookFailure, match=r"^Cannot deserialize value of type"):
        _run({"enabled": []}, {})


def test_both_corrections_in_order() -> None:
    request = {"imp": [{"instl": 1}], "device": {"ua": "UA PrebidMobile/1.0"}, "app": _app(bundle="android")}
    result, corrected = _run({**INTERSTITIAL, **USER_AGENT}, request)
    assert [m.kind for m in result.mutations] == ["update", "update"]
    assert corrected["imp"] == [{}] and corrected["device"]["ua"] == "UA "


def test_registered_and_built() -> None:
    builder = builder_of("pb-request-correction")
    assert builder is not None and hasattr(builder({"enabled": True}), "handle_processed_auction_request")
    with pytest.raises(ValueError, match="pb-request-correction"):
        build([])  # type: ignore[arg-type]
