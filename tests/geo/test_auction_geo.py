"""Geo lookup through /openrtb2/auction: the real app, mock bidders on real sockets, a MaxMind file
written by the test. The looked-up ``device.geo`` is read by the GDPR scope (PBS-Go
``gdpr.eea_countries``), activity ``geo`` conditions (PBS-Java), the floors' ``country`` field (PBS-Go
``floors/rule.go``) and the account's ``privacy.geo.precise_geo_blocked_states`` (hbserver's own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.conftest import write_account
from tests.geo.mmdb import write_db

ACCOUNT = {
    "privacy": {
        "geo": {"precise_geo_blocked_states": ["CA"]},
        # beta is not asked from New York (PBS-Java's activity geo condition)
        "allowactivities": {
            "fetchBids": {"rules": [{"condition": {"componentName": ["beta"], "geo": ["USA.NY"]}, "allow": False}]}
        },
    },
}
FLOORS = {"enabled": True, "data": {"modelgroups": [
    {"schema": {"fields": ["country"]}, "values": {"USA": 5.0, "DEU": 3.0, "*": 0.25}}]}}  # fmt: skip


def _request(device: dict[str, Any] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "id": "req-1",
        "tmax": 500,
        "imp": [banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2})],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "ext": {"prebid": {"floors": FLOORS}},
    }
    if device is not None:
        request["device"] = device
    return request


ROWS = [
    # (id, X-Forwarded-For, body device, bidders asked, device alpha gets, alpha's imp floor)
    ("california-coarse-geo-only", "8.8.8.8", {"geo": {"lat": 37.77, "lon": -122.42}}, ("alpha", "beta"),
     {"ip": "8.8.8.0", "geo": {"country": "USA", "region": "CA", "metro": "807"}}, 5.0),
    ("new-york-precise-beta-not-asked", "9.9.9.9", {"geo": {"lat": 40.71, "lon": -74.0}}, ("alpha",),
     {"ip": "9.9.9.9", "geo": {"lat": 40.71, "lon": -74.0, "country": "USA", "region": "NY", "metro": "501"}}, 5.0),
    ("germany-gdpr-applies-no-consent", "81.2.69.160", None, (), None, None),
    ("client-country-wins", "81.2.69.160", {"geo": {"country": "USA", "region": "TX"}}, ("alpha", "beta"),
     {"ip": "81.2.69.160", "geo": {"country": "USA", "region": "TX"}}, 5.0),
    ("unknown-address-no-geo", "192.0.2.10", None, ("alpha", "beta"), {"ip": "192.0.2.10"}, 0.25),
]


@pytest.mark.parametrize(
    ("forwarded", "device", "asked", "alpha_device", "floor"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
async def test_geo_from_ip(
    forwarded, device, asked, alpha_device, floor, make_client, bidders, data_dir: Path, tmp_path: Path
) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 9.0, "a1")]
    bidders.bids["beta"] = [bid("imp-1", 8.0, "b1")]
    write_account(data_dir, "1001", ACCOUNT)
    config = bidder_config(bidders, "alpha", "beta", alpha={"gvl_vendor_id": 32}, beta={"gvl_vendor_id": 52})
    config["geolocation"] = {"database": str(write_db(tmp_path / "city.mmdb"))}
    client = await make_client(config)
    response = await client.post(
        "/openrtb2/auction", data=json.dumps(_request(device)), headers={"X-Forwarded-For": forwarded}
    )
    assert response.status == 200, await response.text()
    data = await response.json()
    assert tuple(sorted(bidders.received)) == asked, data.get("ext")
    if not asked:  # GDPR applies (an EEA country, no consent): TCF purpose 2 blocks both
        warnings = data["ext"]["warnings"]
        assert {w["code"] for name in ("alpha", "beta") for w in warnings[name]} == {10017}
        return
    sent = bidders.received["alpha"][0]
    assert {k: v for k, v in sent["device"].items() if k in ("ip", "geo")} == alpha_device
    assert sent["imp"][0]["bidfloor"] == floor


async def test_no_database_no_geo(make_client, bidders, data_dir: Path) -> None:
    bidders.bids["alpha"] = []
    client = await make_client(bidder_config(bidders, "alpha"))
    assert client.app is not None
    request = _request()
    request["imp"] = [banner_imp("imp-1", alpha={"p": 1})]
    response = await client.post("/openrtb2/auction", data=json.dumps(request), headers={"X-Forwarded-For": "8.8.8.8"})
    assert response.status == 200
    assert "geo" not in bidders.received["alpha"][0]["device"]


async def test_amp_auctions_each_look_up_their_ip(
    make_client, bidders, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AMP call plans are per place while geo lookup is on (what the lookup finds is part of the plan's
    variant): each visit gets its own country, floor and precise-geo rule, the repeated ones planned."""
    from hbserver.auction import core

    started: list[int] = []
    original = core.start_planned

    def counted(*args: Any, **kwargs: Any) -> Any:
        started.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(core, "start_planned", counted)
    bidders.bids["alpha"] = [bid("slot-1", 9.0, "a1")]
    write_account(data_dir, "1001", ACCOUNT)
    stored = _request()
    stored["imp"] = [{"id": "slot-1", "banner": {"format": [{"w": 300, "h": 250}]},
                      "ext": {"prebid": {"bidder": {"alpha": {"p": 1}}}}}]  # fmt: skip
    (data_dir / "stored_requests" / "t1.json").write_text(json.dumps(stored))
    config = bidder_config(bidders, "alpha")
    config["geolocation"] = {"database": str(write_db(tmp_path / "city.mmdb"))}
    client = await make_client(config)
    query = "tag_id=t1&w=300&h=250&curl=https%3A%2F%2Fpub.example%2Fpage&account=1001"
    visits = [("8.8.8.8", "CA"), ("9.9.9.9", "NY"), ("192.0.2.10", None), ("8.8.8.8", "CA"), ("9.9.9.9", "NY")] * 3
    for address, _ in visits:
        response = await client.get(f"/openrtb2/amp?{query}", headers={"X-Forwarded-For": address})
        assert response.status == 200, await response.text()
    sent = bidders.received["alpha"]
    assert [s["device"].get("geo", {}).get("region") for s in sent] == [region for _, region in visits]
    masked = {"8.8.8.8": "8.8.8.0", "9.9.9.9": "9.9.9.9", "192.0.2.10": "192.0.2.10"}  # CA: no precise geo
    assert [s["device"]["ip"] for s in sent] == [masked[address] for address, _ in visits]
    assert [s["imp"][0]["bidfloor"] for s in sent] == [0.25 if region is None else 5.0 for _, region in visits]
    assert len(started) >= 6  # the later visits of each place ran their plan
