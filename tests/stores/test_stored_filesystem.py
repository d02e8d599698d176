"""Stored data from files (CONTRACT §3 layout), through the StoredData service built from config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbserver.config import AccountSettings
from hbserver.metrics import Metrics
from hbserver.stores.accounts import AccountError, AccountStore
from hbserver.stores.filesystem import MAX_FILE_BYTES, MAX_ID_LENGTH
from hbserver.stores.lru import LRUCache
from hbserver.stores.stored import StoredData, StoredDataError, build_stored_data
from hbserver.web.client import SharedSession
from tests.conftest import make_config

TIMEOUT = 1.0


def write(root: Path, folder: str, item_id: str, content: object) -> None:
    text = content if isinstance(content, str) else json.dumps(content)
    (root / folder / f"{item_id}.json").write_text(text)


@pytest.fixture
def stored(data_dir: Path) -> StoredData:
    write(data_dir, "stored_requests", "req-1", {"id": "req-1", "tmax": 500})
    write(data_dir, "stored_imps", "imp-1", {"id": "imp-1", "banner": {"w": 300, "h": 250}})
    write(data_dir, "stored_responses", "resp-1", [{"seat": "a", "bid": []}])
    write(data_dir, "accounts", "acc-1", {"events": {"enabled": False}})
    config = make_config({"stored_requests": {"filesystem": {"directorypath": str(data_dir)}}})
    return build_stored_data(config, Metrics(), SharedSession())


async def test_reads_each_kind_from_its_folder(stored: StoredData):
    requests, imps, errors = await stored.fetch_requests(["req-1"], ["imp-1"], TIMEOUT)
    assert json.loads(requests["req-1"]) == {"id": "req-1", "tmax": 500}
    assert json.loads(imps["imp-1"]) == {"id": "imp-1", "banner": {"w": 300, "h": 250}}
    assert errors == []
    responses, errors = await stored.fetch_responses(["resp-1"], TIMEOUT)
    assert json.loads(responses["resp-1"]) == [{"seat": "a", "bid": []}]
    assert errors == []
    assert json.loads(await stored.fetch_account("acc-1") or b"") == {"events": {"enabled": False}}
    tag, errors = await stored.fetch_amp_request("req-1", TIMEOUT)
    assert (json.loads(tag or b""), errors) == ({"id": "req-1", "tmax": 500}, [])


LONG = "x" * (MAX_ID_LENGTH + 1)


@pytest.mark.parametrize(
    ("request_ids", "imp_ids", "errors"),
    [
        (["nope"], [], ['Stored Request with ID="nope" not found.']),
        ([], ["nope"], ['Stored Imp with ID="nope" not found.']),
        (["req-1", "nope", "nope"], ["imp-1"], ['Stored Request with ID="nope" not found.']),  # asked twice, one error
        (["imp-1"], ["req-1"], ['Stored Request with ID="imp-1" not found.', 'Stored Imp with ID="req-1" not found.']),
        (["../stored_requests/req-1"], [], ['Stored Request with ID="../stored_requests/req-1" not found.']),
        ([".."], [], ['Stored Request with ID=".." not found.']),
        ([""], [], ['Stored Request with ID="" is invalid: empty']),
        (["a\x00b"], [], ['Stored Request with ID="a\x00b" is invalid: contains control characters']),
        ([LONG], [], [f'Stored Request with ID="{"x" * 64}..." is invalid: longer than {MAX_ID_LENGTH} characters']),
        (["x" * MAX_ID_LENGTH], [], [f'Stored Request with ID="{"x" * MAX_ID_LENGTH}" not found.']),  # at the limit
    ],
)
async def test_missing_and_invalid_ids(stored: StoredData, request_ids, imp_ids, errors):
    _requests, _imps, got = await stored.fetch_requests(request_ids, imp_ids, TIMEOUT)
    assert got == errors


async def test_missing_response_error(stored: StoredData):
    assert await stored.fetch_responses(["r"], TIMEOUT) == ({}, ['Stored Response with ID="r" not found.'])


async def test_file_size_is_bounded(stored: StoredData, data_dir: Path, caplog):
    write(data_dir, "stored_requests", "at-limit", " " * (MAX_FILE_BYTES - 2) + "{}")
    write(data_dir, "stored_requests", "too-big", " " * (MAX_FILE_BYTES - 1) + "{}")
    with caplog.at_level("WARNING", logger="hbserver.stored"):
        requests, _imps, errors = await stored.fetch_requests(["at-limit", "too-big"], [], TIMEOUT)
    assert list(requests) == ["at-limit"]
    path = data_dir / "stored_requests" / "too-big.json"
    # The client's text names no path on this machine; the log does.
    assert errors == [
        f'Stored Request with ID="too-big" could not be fetched: the stored file is larger than {MAX_FILE_BYTES} bytes'
    ]
    assert f"{path} is larger than {MAX_FILE_BYTES} bytes" in caplog.text


async def test_unreadable_file_is_a_failure_not_a_miss_and_not_cached(stored: StoredData, data_dir: Path):
    (data_dir / "stored_imps" / "dir.json").mkdir()
    for _ in range(2):
        _requests, _imps, errors = await stored.fetch_requests([], ["dir"], TIMEOUT)
        assert len(errors) == 1
        assert errors[0].startswith('Stored Imp with ID="dir" could not be fetched: cannot read ')
    (data_dir / "stored_imps" / "dir.json").rmdir()
    write(data_dir, "stored_imps", "dir", {"ok": True})
    _requests, imps, errors = await stored.fetch_requests([], ["dir"], TIMEOUT)
    assert (json.loads(imps["dir"]), errors) == ({"ok": True}, [])


@pytest.mark.parametrize(("account_id", "expected"), [("acc-1", b'{"events": {"enabled": false}}'), ("nope", None),
                                                     ("", None), ("a/b", None), (LONG, None)])
async def test_fetch_account(stored: StoredData, account_id, expected):
    assert await stored.fetch_account(account_id) == expected


async def test_account_store_reads_through_stored_data(stored: StoredData, data_dir: Path):
    accounts = AccountStore(AccountSettings(), stored, Metrics(), cache=LRUCache(10, 60))
    assert (await accounts.get("acc-1")).settings.events.enabled is False
    assert (await accounts.get("other")).settings.events.enabled is True  # defaults
    (data_dir / "accounts" / "broken.json").mkdir()
    with pytest.raises(AccountError) as caught:
        await accounts.get("broken")
    assert caught.value.status == 500
    assert "could not be fetched: cannot read" in caught.value.message


async def test_account_failure_is_an_os_error(stored: StoredData, data_dir: Path):
    write(data_dir, "accounts", "huge", " " * MAX_FILE_BYTES + "{}")
    with pytest.raises(StoredDataError, match=r'Stored Account with ID="huge" could not be fetched: .* is larger than'):
        await stored.fetch_account("huge")
    assert issubclass(StoredDataError, OSError)  # AccountStore answers OSError with a 500


async def test_disabled_filesystem_has_no_backend(data_dir: Path):
    write(data_dir, "stored_requests", "req-1", {})
    config = make_config({"stored_requests": {"filesystem": {"enabled": False, "directorypath": str(data_dir)}}})
    stored = build_stored_data(config, Metrics(), SharedSession())
    not_found = ['Stored Request with ID="req-1" not found.']
    assert await stored.fetch_requests(["req-1"], [], TIMEOUT) == ({}, {}, not_found)
    await stored.start()  # nothing to start without a database
    await stored.close()
