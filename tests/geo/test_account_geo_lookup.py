"""PBS-Java's account ``settings.geo_lookup`` (GeoLocationServiceWrapper.lookup) on every path: the
auction, AMP's full path and AMP's call plan (the later visits of a slot). ``false`` turns the host's
lookup off for the account, ``true`` turns it on where ``account_defaults`` turned it off, unset
follows the host's ``geolocation.database``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.conftest import write_account
from tests.geo.mmdb import write_db

CA = {"country": "USA", "region": "CA", "metro": "807"}


def _request() -> dict[str, Any]:
    return {
        "id": "req-1",
        "tmax": 500,
        "imp": [banner_imp("slot-1", alpha={"p": 1})],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
    }


@pytest.mark.parametrize(
    ("defaults", "account", "geo"),
    [
        pytest.param(None, {}, CA, id="unset: the host's database decides"),
        pytest.param(None, {"settings": {"geo_lookup": False}}, None, id="false: no lookup for the account"),
        pytest.param(None, {"settings": {"geo-lookup": False}}, None, id="PBS-Java's kebab-case alias"),
        pytest.param(None, {"settings": {"geo_lookup": True}}, CA, id="true: looked up"),
        pytest.param(False, {}, None, id="account_defaults false: PBS-Java's opt-in"),
        pytest.param(False, {"settings": {"geo_lookup": True}}, CA, id="account_defaults false, the account opts in"),
    ],
)
@pytest.mark.parametrize("path", ["auction", "amp"])
async def test_account_geo_lookup(
    make_client, bidders, data_dir: Path, tmp_path: Path, defaults: bool | None, account: dict[str, Any],
    geo: dict[str, str] | None, path: str,
) -> None:  # fmt: skip
    bidders.bids["alpha"] = [bid("slot-1", 1.0, "a1")]
    write_account(data_dir, "1001", account)
    config = bidder_config(bidders, "alpha")
    config["geolocation"] = {"database": str(write_db(tmp_path / "city.mmdb"))}
    if defaults is not None:
        config["account_defaults"] = {"settings": {"geo_lookup": defaults}}
    client = await make_client(config)
    headers = {"X-Forwarded-For": "8.8.8.8"}
    if path == "auction":
        response = await client.post("/openrtb2/auction", data=json.dumps(_request()), headers=headers)
        assert response.status == 200, await response.text()
    else:  # the first visits take the full path, the later ones the slot's call plan
        (data_dir / "stored_requests" / "t1.json").write_text(json.dumps(_request()))
        query = "tag_id=t1&w=300&h=250&curl=https%3A%2F%2Fpub.example%2Fpage&account=1001"
        for _ in range(4):
            response = await client.get(f"/openrtb2/amp?{query}", headers=headers)
            assert response.status == 200, await response.text()
    for sent in bidders.received["alpha"]:
        assert sent["device"].get("geo") == geo
