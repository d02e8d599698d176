"""Per-account stored ids (issue 46 item 3, PBS-Java's): the same stored request or imp id in two accounts
resolves per account, with PBS-Java's StoredItemResolver rules and texts; files laid out as
``stored_requests/<id>/<account>.json``; the auction and AMP pick by the account they name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.app import create_app
from hbserver.metrics import Metrics
from hbserver.stores.stored import StoredData
from hbserver.stores.stored.filesystem import FilesystemBackend
from hbserver.stores.stored.scoped import Variants, resolve
from tests.conftest import make_config

NONE_A_B = Variants(((None, b"none"), ("a", b"A"), ("b", b"B")))


@pytest.mark.parametrize(
    ("account", "variants", "expected"),
    [
        # one item: taken unless it belongs to another account
        ("", Variants(((None, b"none"),)), b"none"),
        ("a", Variants(((None, b"none"),)), b"none"),
        ("a", Variants((("a", b"A"),)), b"A"),
        ("", Variants((("a", b"A"),)), b"A"),
        (" ", Variants((("a", b"A"),)), b"A"),  # PBS-Java: a blank account is none (isBlank)
        ("b", Variants((("a", b"A"),)), "No stored request found for id: sr for account: b"),
        # several: the account's own, no fallback to the item of no account
        ("a", NONE_A_B, b"A"),
        ("b", NONE_A_B, b"B"),
        ("c", NONE_A_B, "No stored request found among multiple id: sr for account: c"),
        ("", NONE_A_B, "Multiple stored requests found for id: sr but no account was specified"),
        ("", Variants(()), "No stored request found for id: sr"),
    ],
)
def test_pbs_java_resolution_rules(account, variants, expected):
    assert resolve("requests", account, "sr", variants) == expected


def test_imps_are_named_as_imps():
    assert resolve("imps", "", "i", NONE_A_B) == "Multiple stored imps found for id: i but no account was specified"


def write(path: Path, document: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))


def stored_request(request_id: str) -> dict[str, Any]:
    prebid = {"bidder": {"appnexus": {"placementId": 1}}, "storedauctionresponse": {"id": "resp"}}
    return {
        "id": request_id,
        "imp": [{"id": "i1", "banner": {"format": [{"w": 300, "h": 250}]}, "ext": {"prebid": prebid}}],
    }


@pytest.fixture
def files(tmp_path: Path) -> Path:
    write(tmp_path / "stored_requests" / "shared" / "acc1.json", stored_request("of-acc1"))
    write(tmp_path / "stored_requests" / "shared" / "acc2.json", stored_request("of-acc2"))
    write(tmp_path / "stored_requests" / "plain.json", stored_request("plain"))
    write(tmp_path / "stored_requests" / "mine" / "acc1.json", stored_request("mine"))
    write(tmp_path / "stored_imps" / "imp" / "acc2.json", {"banner": {"w": 2}})
    write(tmp_path / "stored_imps" / "imp.json", {"banner": {"w": 0}})
    bid = {"id": "b1", "impid": "i1", "price": 1.5, "adm": "<div/>", "crid": "c", "w": 300, "h": 250}
    write(tmp_path / "stored_responses" / "resp.json", [{"seat": "appnexus", "bid": [bid]}])
    return tmp_path


async def test_the_same_id_resolves_per_account_from_files(files):
    stored = StoredData(Metrics(), filesystem=FilesystemBackend(str(files)))
    for _ in range(2):  # the second time from the cache, resolved again per account
        assert (await stored.fetch_requests(["shared"], [], 1.0, account="acc1"))[0]["shared"] == json.dumps(
            stored_request("of-acc1")
        ).encode()
        assert b"of-acc2" in (await stored.fetch_requests(["shared"], [], 1.0, account="acc2"))[0]["shared"]
        assert b"plain" in (await stored.fetch_requests(["plain"], [], 1.0, account="acc2"))[0]["plain"]
        _requests, imps, errors = await stored.fetch_requests([], ["imp"], 1.0, account="acc2")
        assert imps == {"imp": b'{"banner": {"w": 2}}'} and errors == []
        _requests, imps, errors = await stored.fetch_requests([], ["imp"], 1.0, account="acc9")
        assert imps == {} and errors == ["No stored imp found among multiple id: imp for account: acc9"]
        _requests, _imps, errors = await stored.fetch_requests(["mine"], [], 1.0, account="acc2")
        assert errors == ["No stored request found for id: mine for account: acc2"]


async def test_auction_and_amp_pick_by_the_account_they_name(files, aiohttp_client):
    config = make_config(stored_requests={"filesystem": {"directorypath": str(files)}})
    client = await aiohttp_client(create_app(config))

    async def auction(publisher: dict[str, Any] | None) -> tuple[int, str]:
        body: dict[str, Any] = {"ext": {"prebid": {"storedrequest": {"id": "shared"}}}}
        if publisher is not None:
            body["site"] = {"page": "http://a.example/", "publisher": publisher}
        response = await client.post("/openrtb2/auction", json=body)
        return response.status, (await response.json())["id"] if response.status == 200 else await response.text()

    assert await auction({"id": "acc1"}) == (200, "of-acc1")
    assert await auction({"id": "acc2"}) == (200, "of-acc2")
    assert await auction({"id": "x", "ext": {"prebid": {"parentAccount": "acc2"}}}) == (200, "of-acc2")
    status, text = await auction({"id": "acc3"})
    assert status == 400 and "No stored request found among multiple id: shared for account: acc3" in text
    status, text = await auction(None)
    assert status == 400 and "Multiple stored requests found for id: shared but no account was specified" in text

    response = await client.get("/openrtb2/amp?tag_id=shared&account=acc2&debug=1&curl=http%3A%2F%2Fa.example%2F")
    assert response.status == 200, await response.text()
    assert (await response.json())["ext"]["debug"]["resolvedrequest"]["id"] == "of-acc2"
    response = await client.get("/openrtb2/amp?tag_id=shared")
    assert response.status == 400
    assert "Multiple stored requests found for id: shared but no account was specified" in await response.text()
