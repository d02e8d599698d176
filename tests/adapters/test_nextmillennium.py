"""NextMillennium adapter: the stored-request id (placement or group, size and domain), one call per
imp carrying the whole request, the host facts and flags in ``ext``, params errors, headers, bid typing
by ``mtype`` and status texts."""

from __future__ import annotations

from typing import Any

import pytest

from hbserver.adapters.base import AdapterConfig, ErrorCode, RequestInfo
from hbserver.adapters.nextmillennium import build
from tests.adapters.helpers import bids_for, imp_with, requests_of

ENDPOINT = "https://pbs.nextmillmedia.com/openrtb2/auction"
INFO = RequestInfo(bidder="nextmillennium")
HOST = {"external_url": "https://pbs.example", "gvl_id": 7, "datacenter": "eu", "pbs_version": "1.2.3"}


def imp(imp_id: str = "i", params: Any = None, **fields: Any) -> dict:
    return imp_with(imp_id, params or {"placement_id": "p1"}, fields, {"banner": {"format": [{"w": 300, "h": 250}]}})


def adapter(extra_info: str = "", **host: Any):
    return build(AdapterConfig("nextmillennium", ENDPOINT, {**HOST, **host, "extra_info": extra_info}))


def run(request: dict, extra_info: str = "", **host: Any):
    calls, bodies, errors = requests_of(adapter(extra_info, **host), request, INFO)
    return calls, bodies, [(e.message, e.code) for e in errors]


def stored_id(body: dict) -> str:
    imp_id = body["imp"][0]["ext"]["prebid"]["storedrequest"]["id"]
    assert body["ext"]["prebid"]["storedrequest"]["id"] == imp_id
    return imp_id


@pytest.mark.parametrize(
    ("params", "media", "request_fields", "want"),
    [
        ({"placement_id": "p1"}, {}, {"site": {"domain": "s.com"}}, "p1"),
        ({"placement_id": "p1", "group_id": ""}, {}, {}, "p1"),
        ({"group_id": "7", "placement_id": "p1"}, {}, {"site": {"domain": "s.com"}}, "g7;300x250;s.com"),
        ({"group_id": "7"}, {"banner": {"w": 1, "h": 2}}, {"app": {"domain": "a.com"}}, "g7;1x2;a.com"),
        ({"group_id": "7"}, {"banner": {"w": 1}}, {}, "g7;;"),  # w without h: no size
        ({"group_id": "7"}, {"banner": {"format": [{"w": 5}], "w": 1, "h": 2}}, {}, "g7;5x0;"),  # format first
        ({"group_id": "7"}, {"video": {"w": 640, "h": 480}}, {}, "g7;;"),  # only a banner has a size
        ({"group_id": "7"}, {}, {"site": {"domain": "s.com"}, "app": {"bundle": "b"}}, "g7;300x250;"),  # app wins
        ({"GROUP_ID": "8", "Placement_Id": "p"}, {}, {}, "g8;300x250;"),  # struct fields: any case
        ({"group_id": "7", "GROUP_ID": None}, {}, {}, ""),  # json-iterator reads null as ""
    ],
)
def test_stored_request_id(params, media, request_fields, want):
    _calls, bodies, errors = run({"id": "r", **request_fields, "imp": [imp("a", params, **media)]})
    assert errors == []
    assert stored_id(bodies[0]) == want


def test_group_size_and_domain_come_from_the_first_imp():
    imps = [imp("a", banner={"w": 1, "h": 1}), imp("b", {"group_id": "9"}, banner={"w": 2, "h": 2})]
    _, bodies, _ = run({"id": "r", "imp": imps})
    assert [stored_id(body) for body in bodies] == ["p1", "g9;1x1;"]


def test_one_call_per_imp_each_with_the_whole_request():
    imps = [imp("a", {"placement_id": "pa"}), imp("b", {"placement_id": "pb"}, video={"w": 1})]
    request = {"id": "r", "test": 0, "ext": {"prebid": {"debug": True}}, "imp": imps}
    calls, bodies, errors = run(request, '{"nmmFlags": ["f1"]}')
    assert errors == []
    assert [(call.uri, call.imp_ids) for call in calls] == [(ENDPOINT, ["a", "b"]), (ENDPOINT, ["a", "b"])]
    for call in calls:
        assert dict(call.headers) == {
            "Content-Type": "application/json;charset=utf-8",
            "Accept": "application/json",
            "X-Openrtb-Version": "2.5",
        }
    server = {"externalurl": "https://pbs.example", "gvlid": 7, "datacenter": "eu"}
    for body, placement in zip(bodies, ("pa", "pb"), strict=True):
        stored = {"storedrequest": {"id": placement}}
        assert body["imp"][0] == {**imps[0], "ext": {"prebid": stored, "nextMillennium": {"nmmFlags": ["f1"]}}}
        # only the first imp's ext is replaced, as PBS-Go does (which writes a video's absent mimes as null)
        assert body["imp"][1] == {**imps[1], "video": {"w": 1, "mimes": None}}
        assert body["ext"] == {
            "prebid": {**stored, "server": server},
            "nextMillennium": {"nmmFlags": ["f1"], "server_version": "1.2.3", "nm_version": "v1.0.1"},
        }
        assert "test" not in body


@pytest.mark.parametrize(
    ("params", "host", "want"),
    [
        (
            {"placement_id": "p", "adSlots": ["s1"], "allowedAds": ["a1", None]},
            {},
            {"adSlots": ["s1"], "allowedAds": ["a1", ""]},
        ),
        ({"placement_id": "p", "adSlots": [], "allowedAds": None}, {}, {}),  # empty lists are left out
        ({"placement_id": "p"}, {"pbs_version": ""}, {"server_version": None}),
    ],
)
def test_request_ext_next_millennium(params, host, want):
    _, bodies, _ = run({"id": "r", "imp": [imp("a", params)]}, **host)
    nm = bodies[0]["ext"]["nextMillennium"]
    for key, value in want.items():
        assert nm.get(key) == value, key
    for key in {"adSlots", "allowedAds"} - want.keys():
        assert key not in nm
    assert bodies[0]["imp"][0]["ext"]["nextMillennium"] == {}  # no flags configured


@pytest.mark.parametrize(
    ("imps", "want"),
    [
        ([{"id": "a", "banner": {}}], ["expect { or n, but found \x00"]),
        ([imp("a", ext=None)], ["expect { or n, but found \x00"]),
        ([imp("a", ext={"placement_id": "1"})], ["expect { or n, but found \x00"]),
        ([imp("a", ext={"bidder": None})], ["expect { or n, but found \x00"]),
        ([imp("a", ext={"bidder": []})], ["expect { or n, but found ["]),
        (
            [imp("a", {"group_id": 7})],
            ['cannot unmarshal openrtb_ext.ImpExtNextMillennium.GroupID: expects " or n, but found 7'],
        ),
        (
            [imp("a", {"adSlots": "s"})],
            ['cannot unmarshal openrtb_ext.ImpExtNextMillennium.AdSlots: decode slice: expect [ or n, but found "'],
        ),
        ([imp("a", {"allowedAds": ["x", 1]})], ['cannot unmarshal []string: expects " or n, but found 1']),
        (
            [imp("a", {"placement_id": 1, "group_id": 2}), imp("b"), imp("c", ext=[])],
            [
                'cannot unmarshal openrtb_ext.ImpExtNextMillennium.PlacementID: expects " or n, but found 1',
                "expect { or n, but found [",
            ],
        ),
    ],
)
def test_params_errors_fail_the_request(imps, want):
    calls, _, errors = run({"id": "r", "imp": imps})
    assert calls == []
    assert errors == [(message, ErrorCode.BAD_INPUT) for message in want]


@pytest.mark.parametrize(
    ("extra_info", "want"),
    [
        ("", None),
        ("null", None),
        (' {"nmmFlags": ["a", "b"], "other": 1}', ["a", "b"]),
        ('{"NMMFLAGS": ["x"], "nm_version": "v9"}', ["x"]),
        ("[1]", "invalid extra info: expect { or n, but found ["),
        ("flags", "invalid extra info: expect { or n, but found f"),
        (
            '{"nmmFlags": "a"}',
            "invalid extra info: "
            'cannot unmarshal nextmillennium.nmExtNMM.NmmFlags: decode slice: expect [ or n, but found "',
        ),
        ('{"nmmFlags": [1]}', 'invalid extra info: cannot unmarshal []string: expects " or n, but found 1'),
        (
            '{"nm_version": 1}',
            'invalid extra info: cannot unmarshal nextmillennium.nmExtNMM.AdapterVersion: expects " or n, but found 1',
        ),
        (
            '{"adSlots": {}}',
            "invalid extra info: "
            "cannot unmarshal nextmillennium.nmExtNMM.AdSlots: decode slice: expect [ or n, but found {",
        ),
    ],
)
def test_extra_info(extra_info, want):
    if isinstance(want, str):
        with pytest.raises(ValueError) as caught:
            adapter(extra_info)
        assert str(caught.value) == want
        return
    _, bodies, _ = run({"id": "r", "imp": [imp()]}, extra_info)
    assert bodies[0]["imp"][0]["ext"]["nextMillennium"] == ({"nmmFlags": want} if want else {})
    assert bodies[0]["ext"]["nextMillennium"].get("nmmFlags") == want


def bids(body: Any, status: int = 200):
    return bids_for(adapter(), {"id": "r", "imp": [imp()]}, body, status)


def answer(*mtypes: Any) -> dict:
    bids = [{"id": f"b{n}", "impid": "i", "price": 1, "mtype": m} for n, m in enumerate(mtypes)]
    return {"cur": "EUR", "seatbid": [{"bid": bids}]}


@pytest.mark.parametrize(
    ("mtypes", "want_types", "want_errors"),
    [
        ((1, 2), ["banner", "video"], []),
        (
            (4, 2, None, 3),
            ["video"],
            ["Unsupported return mType: 4", "Unsupported return mType: 0", "Unsupported return mType: 3"],
        ),
    ],
)
def test_bids_typed_by_mtype(mtypes, want_types, want_errors):
    response, errors = bids(answer(*mtypes))
    assert [b.bid_type for b in response.bids] == want_types
    assert [(e.message, e.code) for e in errors] == [(m, ErrorCode.BAD_SERVER_RESPONSE) for m in want_errors]
    assert response.currency == "USD"  # the answer's cur is not read


@pytest.mark.parametrize(
    ("status", "body", "want"),
    [
        (204, b"", []),
        (200, b'{"seatbid": []}', []),
        (200, b"{}", []),
        (400, b"{}", ["Unexpected http status code: 400"]),  # a 400 too is the server's fault
        (503, b"{}", ["Unexpected http status code: 503"]),
        (200, b"[]", ["Bad server response: &{%!d(string=expect { or n, but found [)}"]),  # Go's %d of an error
        (200, b"", ["Bad server response: &{%!d(string=expect { or n, but found \x00)}"]),
    ],
)
def test_no_response(status, body, want):
    response, errors = bids(body, status)
    assert response is None
    assert [(e.message, e.code) for e in errors] == [(m, ErrorCode.BAD_SERVER_RESPONSE) for m in want]
