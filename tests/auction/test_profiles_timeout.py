"""How long the profiles fetch waits, as PBS-Java's ProfilesProcessor.timeoutMillis: the request's
``tmax`` when positive, else ``auction.profiles.timeout-ms`` (PBS-Java's host key, 100 ms; here also
an account's ``auction.profiles.timeout_ms``). Table rows, then end to end through the auction and
AMP endpoints with the fetch's timeout recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.request.profiles import ProfileSettings, fetch_timeout_s, profile_settings
from hbserver.stores.stored import StoredData
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.auction.test_profiles import write_profile
from tests.conftest import write_account


@pytest.mark.parametrize(
    ("raw", "host_ms", "tmax", "seconds"),
    [
        pytest.param({}, 100, None, 0.1, id="ProfilesProcessor.timeoutMillis: no tmax, the default 100 ms"),
        pytest.param({}, 100, 0, 0.1, id="tmax 0: the default"),
        pytest.param({}, 100, -5, 0.1, id="a negative tmax: the default"),
        pytest.param({}, 100, 750, 0.75, id="a positive tmax: the request's"),
        pytest.param({}, 100, 9000, 5.0, id="tmax bounded by the host's largest auction timeout"),
        pytest.param({}, 40, None, 0.04, id="the host's auction.profiles.timeout_ms"),
        pytest.param({"timeout_ms": 60}, 40, None, 0.06, id="the account's timeout_ms over the host's"),
        pytest.param({"timeout_ms": 60, "timeout-ms": 70}, 40, None, 0.07, id="the kebab-case spelling wins"),
        pytest.param({"timeout_ms": 60}, 40, 300, 0.3, id="a tmax still wins over the account's"),
    ],
)
def test_fetch_timeout(raw: dict[str, Any], host_ms: int, tmax: Any, seconds: float) -> None:
    settings = profile_settings(raw, True, {}, host_timeout_ms=host_ms)
    assert settings.timeout_ms == (raw.get("timeout-ms") or raw.get("timeout_ms") or host_ms)
    assert fetch_timeout_s(settings, tmax, 5000) == pytest.approx(seconds)


def test_defaults_unchanged() -> None:
    assert profile_settings({}, True, {}) == ProfileSettings(timeout_ms=100)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The timeout of each profiles fetch the server makes."""
    seen: list[float] = []
    original = StoredData.fetch_profiles

    async def recorded(self: StoredData, ids: Any, timeout_s: float) -> Any:
        seen.append(timeout_s)
        return await original(self, ids, timeout_s)

    monkeypatch.setattr(StoredData, "fetch_profiles", recorded)
    return seen


def _request(tmax: int | None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "id": "req-1",
        "imp": [banner_imp("imp-1", alpha={"p": 1})],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "ext": {"prebid": {"profiles": ["bcat"]}},
    }
    if tmax is not None:
        request["tmax"] = tmax
    return request


@pytest.mark.parametrize(
    ("host", "account", "tmax", "seconds"),
    [
        pytest.param(None, {}, None, 0.1, id="no tmax: PBS-Java's 100 ms"),
        pytest.param(None, {}, 400, 0.4, id="the request's tmax"),
        pytest.param(250, {}, None, 0.25, id="the host's auction.profiles.timeout_ms"),
        pytest.param(250, {"auction": {"profiles": {"timeout-ms": 30}}}, None, 0.03, id="the account's"),
    ],
)
@pytest.mark.parametrize("endpoint", ["auction", "amp"])
async def test_profiles_fetch_waits(
    make_client, bidders, data_dir: Path, waits: list[float], host: int | None, account: dict[str, Any],
    tmax: int | None, seconds: float, endpoint: str,
) -> None:  # fmt: skip
    write_account(data_dir, "1001", account)
    write_profile(data_dir, "bcat", "request", {"bcat": ["IAB25"]})
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    config = bidder_config(bidders, "alpha")
    if host is not None:
        config["auction"] = {"profiles": {"timeout_ms": host}}
    client = await make_client(config)
    if endpoint == "auction":
        response = await client.post("/openrtb2/auction", data=json.dumps(_request(tmax)))
    else:
        (data_dir / "stored_requests" / "t1.json").write_text(json.dumps(_request(tmax)))
        response = await client.get("/openrtb2/amp?tag_id=t1&account=1001")
    assert response.status == 200, await response.text()
    assert bidders.received["alpha"][0]["bcat"] == ["IAB25"]
    assert waits and waits[0] == pytest.approx(seconds)


async def test_bad_account_timeout_refuses_the_account(make_client, bidders, data_dir: Path) -> None:
    write_account(data_dir, "1001", {"auction": {"profiles": {"timeout_ms": 0}}})
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await client.post("/openrtb2/auction", data=json.dumps(_request(None)))
    assert response.status != 200
