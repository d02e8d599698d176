"""POST/GET /cache: the Prebid Cache API of DECISIONS (PBC-Go's texts, reference §5.7 vectors)."""

from __future__ import annotations

import json
import uuid

import pytest

from hbserver.appkeys import CACHE
from hbserver.stores.cache.base import CacheItem

UUID_1 = "0b6b6c4e-8a8f-4f57-9d43-d5b8f0b0f8c1"
XML_70 = '<?xml version="1.0" encoding="UTF-8"?>\r\n<VAST version="2.0"><\\/VAST>\r\n'


@pytest.mark.parametrize(
    ("keys", "body", "status", "text"),
    [
        ({"cache": {"max_num_values": 1}}, {"puts": [{"type": "xml", "value": "<a/>"}] * 2}, 400,
         "More keys than allowed: 1\n"),
        ({}, {"puts": [{"value": "<a/>"}]}, 400, "Type must be one of [\"json\", \"xml\"]. Found ''\n"),
        ({}, {"puts": [{"type": "unknown", "value": "<a/>"}]}, 400,
         "Type must be one of [\"json\", \"xml\"]. Found 'unknown'\n"),
        ({}, {"puts": [{"type": "xml"}]}, 400, "Missing value.\n"),
        ({"cache": {"max_value_bytes": 1}}, {"puts": [{"type": "xml", "value": XML_70}]}, 400,
         "POST /cache element 0 exceeded max size: Payload size 73 exceeded max 1\n"),
        ({}, {"puts": [{"type": "xml", "value": 5}]}, 400, "XML messages must have a String value. Found [53]\n"),
        ({}, {"puts": [{"type": "xml", "value": "<a/>", "ttlseconds": -1}]}, 400,
         "ttlseconds must not be negative -1.\n"),
        ({}, {"puts": [{"type": "json", "value": ""}, {"type": "json", "value": "x" * 300000}]}, 400,
         "POST /cache element 1 exceeded max size: Payload size 300006 exceeded max 262144\n"),
        ({}, {"puts": []}, 200, '{"responses":[]}'),
        ({}, {}, 200, '{"responses":[]}'),
    ],
)
async def test_put_rules(make_client, keys, body, status, text):
    client = await make_client({"max_request_size": 1 << 20, **keys})
    response = await client.post("/cache", data=json.dumps(body))
    assert (response.status, await response.text()) == (status, text)
    if status != 200:
        assert response.headers["Content-Type"].startswith("text/plain")
        assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "body", [b'{"puts":[{"type":"json","value":malformed}]}', b'{"puts":[{"type":"xml","value":"a","ttlseconds":"x"}]}']
)
async def test_undecodable_put_echoes_the_body(make_client, body):
    client = await make_client({})
    response = await client.post("/cache", data=body)
    assert (response.status, await response.read()) == (400, body + b"\n")


async def test_a_bad_put_stores_nothing(make_client):
    """Unlike PBC-Go, validation runs over every put before any is written."""
    client = await make_client({})
    store = client.app[CACHE].store
    body = {"puts": [{"type": "xml", "value": "<ok/>"}, {"type": "bad", "value": "<x/>"}]}
    response = await client.post("/cache", data=json.dumps(body))
    assert response.status == 400 and len(store) == 0


@pytest.mark.parametrize(
    ("put", "content_type", "payload"),
    [
        ({"type": "json", "value": {"custom_key": "foo"}}, "application/json", b'{"custom_key":"foo"}'),
        ({"type": "json", "value": None}, "application/json", b"null"),
        ({"type": "json", "value": True}, "application/json", b"true"),
        ({"type": "json", "value": "text"}, "application/json", b'"text"'),
        ({"type": "xml", "value": '<tag>esc"aped</tag>'}, "application/xml", b'<tag>esc"aped</tag>'),
        ({"type": "xml", "value": "<description>stored xml value</description>"}, "application/xml",
         b"<description>stored xml value</description>"),
    ],
)
async def test_round_trip(make_client, put, content_type, payload):
    client = await make_client({})
    response = await client.post("/cache", data=json.dumps({"puts": [put]}), headers={"Origin": "https://pub.example"})
    assert response.status == 200 and response.headers["Access-Control-Allow-Origin"] == "https://pub.example"
    [entry] = (await response.json())["responses"]
    got = await client.get("/cache", params={"uuid": entry["uuid"]})
    assert (got.status, got.headers["Content-Type"], await got.read()) == (200, content_type, payload)


async def test_custom_keys_are_not_accepted_from_clients(make_client):
    client = await make_client({})
    body = {"puts": [{"type": "xml", "value": "<a/>", "key": "the-custom-thirty-six-character-uuid"}]}
    [entry] = (await (await client.post("/cache", data=json.dumps(body))).json())["responses"]
    assert entry["uuid"] != "the-custom-thirty-six-character-uuid" and uuid.UUID(entry["uuid"]).version == 4


@pytest.mark.parametrize(
    ("query", "status", "text"),
    [
        ("", 400, "GET /cache: Missing required parameter uuid\n"),
        ("?uuid=", 400, "GET /cache: Missing required parameter uuid\n"),
        ("?uuid=non-36-char-uuid", 404, "GET /cache uuid=non-36-char-uuid: invalid uuid length\n"),
        ("?uuid=36-char-uuid-is-not-found-in-backend", 404,
         "GET /cache uuid=36-char-uuid-is-not-found-in-backend: Key not found\n"),
        # auction-written <hb_pb_cat_dur>_<uuid> keys: "_" then 36 characters, at most 256 in all
        (f"?uuid=5.00_404_15s_{UUID_1}", 404, f"GET /cache uuid=5.00_404_15s_{UUID_1}: Key not found\n"),
        (f"?uuid={'x' * 219}_{UUID_1}", 404, f"GET /cache uuid={'x' * 219}_{UUID_1}: Key not found\n"),
        (f"?uuid={'x' * 220}_{UUID_1}", 404, f"GET /cache uuid={'x' * 220}_{UUID_1}: invalid uuid length\n"),
        (f"?uuid=_{UUID_1}", 404, f"GET /cache uuid=_{UUID_1}: invalid uuid length\n"),
        (f"?uuid=5.00_404_15s-{UUID_1}", 404, f"GET /cache uuid=5.00_404_15s-{UUID_1}: invalid uuid length\n"),
    ],
)
async def test_get_rules(make_client, query, status, text):
    client = await make_client({})
    response = await client.get("/cache" + query)
    assert (response.status, await response.text()) == (status, text)


async def test_get_reads_an_auction_written_category_key(make_client):
    """The auction's competitive-exclusion key (PBS-Go doCache) is read back as PBC-Go reads custom keys."""
    client = await make_client({})
    key = f"12.00_395_30s_{UUID_1}"
    [written] = await client.app[CACHE].put_many([CacheItem("xml", b"<VAST/>", 60, key)], 1.0)
    assert written == key
    response = await client.get("/cache", params={"uuid": key})
    assert response.status == 200 and response.headers["Content-Type"] == "application/xml"
    assert await response.read() == b"<VAST/>"


async def test_corrupt_stored_value(make_client):
    client = await make_client({})
    store = client.app[CACHE].store
    key = str(uuid.uuid4())
    store._items[key] = (10**12, b"<HTML>nope</HTML>")
    response = await client.get("/cache", params={"uuid": key})
    assert (response.status, await response.text()) == (
        500, f"GET /cache uuid={key}: Cache data was corrupted. Cannot determine type.\n"
    )


async def test_ttl_is_capped_by_max(make_client):
    client = await make_client({"cache": {"max_ttl_seconds": 5, "default_ttl_seconds": 5}})
    body = {"puts": [{"type": "xml", "value": "<a/>", "ttlseconds": 6}]}
    [entry] = (await (await client.post("/cache", data=json.dumps(body))).json())["responses"]
    store = client.app[CACHE].store
    deadline, _value = store._items[entry["uuid"]]
    assert deadline - store.clock() <= 5.01


async def test_store_failure_is_a_500(make_client):
    client = await make_client({"cache": {"store": "redis", "redis": {"url": "redis://127.0.0.1:1/0"}}})
    response = await client.post("/cache", data=json.dumps({"puts": [{"type": "xml", "value": "<a/>"}]}))
    assert response.status == 500 and (await response.text()).startswith("redis: ")


async def test_endpoint_can_be_switched_off(make_client):
    client = await make_client({"cache": {"serve_endpoint": False}})
    assert (await client.get("/cache?uuid=x")).status == 404
    assert (await client.post("/cache", data="{}")).status == 404


async def test_body_limit(make_client):
    client = await make_client({"max_request_size": 1000})
    response = await client.post("/cache", data=json.dumps({"puts": [{"type": "xml", "value": "x" * 2000}]}))
    assert response.status == 413
