"""PBS-Java's account ``privacy.gdpr.purposes.p4.eid.activity_transition`` (ActivityInfrastructureCreator
``fallbackActivity``): with it true, an account whose ``allowactivities`` has ``transmitUfpd`` and no
``transmitEids`` gets ``transmitUfpd``'s controller for ``transmitEids``. Rows through the account store
(PBS-Java's spellings normalised, ``account_defaults`` under the file, as PBS-Java's host ``p4`` default),
then one auction showing that the bidder denied ``transmitUfpd`` gets no EIDs either way (hbserver, as
PBS-Go's ScrubUserFPD, removes them with the user's first-party data)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.config import AccountSettings, build
from hbserver.metrics import Metrics
from hbserver.stores.accounts import AccountStore
from tests.auction.helpers import banner_imp, bid, bidder_config
from tests.conftest import write_account

DENY_ALPHA = {"rules": [{"condition": {"componentName": ["alpha"]}, "allow": False}]}


class _Fetcher:
    def __init__(self, account: dict[str, Any]) -> None:
        self.data = json.dumps(account).encode()

    async def fetch_account(self, account_id: str) -> bytes | None:
        return self.data


def _account(activities: dict[str, Any], transition: Any, kebab: bool = False) -> dict[str, Any]:
    eid = {"activity-transition" if kebab else "activity_transition": transition}
    gdpr = {"purposes": {"p4": {"eid": eid}}} if transition is not None else {}
    return {"privacy": {"allowactivities": activities, "gdpr": gdpr}}


@pytest.mark.parametrize(
    ("account", "defaults", "eids_allowed"),
    [
        pytest.param(_account({"transmitUfpd": DENY_ALPHA}, True), {}, False,
                     id="true, transmitUfpd only: transmitEids follows it"),
        pytest.param(_account({"transmitUfpd": DENY_ALPHA}, True, kebab=True), {}, False,
                     id="PBS-Java's kebab-case activity-transition"),
        pytest.param(_account({"transmitUfpd": DENY_ALPHA}, False), {}, True, id="false: transmitEids allowed"),
        pytest.param(_account({"transmitUfpd": DENY_ALPHA}, None), {}, True, id="unset: PBS-Java's default false"),
        pytest.param(_account({"transmitUfpd": DENY_ALPHA, "transmitEids": {"default": True}}, True), {}, True,
                     id="an own transmitEids entry is kept"),
        pytest.param(_account({"transmitufpd": DENY_ALPHA}, True), {}, False,
                     id="activity names read case-insensitively"),
        pytest.param(_account({"transmitUfpd": DENY_ALPHA}, None),
                     {"gdpr": {"purpose4": {"eid": {"activity_transition": True}}}}, False,
                     id="account_defaults: the host's p4 (PBS-Java's gdpr.purposes.p4.eid)"),
    ],
)  # fmt: skip
def test_transmit_eids_follows_transmit_ufpd(
    account: dict[str, Any], defaults: dict[str, Any], eids_allowed: bool
) -> None:
    settings = build(AccountSettings, defaults, "", [])
    store = AccountStore(settings, _Fetcher(account), Metrics())
    loaded = asyncio.run(store.get("1001"))
    assert loaded.activities.allowed("transmitEids", "bidder", "alpha") is eids_allowed
    assert loaded.activities.allowed("transmitEids", "bidder", "beta") is True
    assert loaded.activities.allowed("transmitUfpd", "bidder", "alpha") is False


@pytest.mark.parametrize("transition", [True, False])
async def test_alpha_denied_ufpd_gets_no_eids(make_client, bidders, data_dir: Path, transition: bool) -> None:
    write_account(data_dir, "1001", _account({"transmitUfpd": DENY_ALPHA}, transition))
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    bidders.bids["beta"] = [bid("imp-1", 0.5, "b2")]
    client = await make_client(bidder_config(bidders, "alpha", "beta"))
    eids = [{"source": "id.example", "uids": [{"id": "u-1"}]}]
    request = {
        "id": "r1", "tmax": 500, "imp": [banner_imp("imp-1", alpha={"p": 1}, beta={"p": 2})],
        "site": {"page": "https://news.example/a", "publisher": {"id": "1001"}},
        "user": {"eids": eids},
    }  # fmt: skip
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200, await response.text()
    alpha_user = bidders.received["alpha"][0].get("user", {})
    assert "eids" not in alpha_user and "eids" not in alpha_user.get("ext", {})
    user = bidders.received["beta"][0]["user"]
    assert user.get("eids", user.get("ext", {}).get("eids")) == eids, user
