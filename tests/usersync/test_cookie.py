"""The uids cookie codec, Set-Cookie and trimming: the reference's vectors (TV1-TV4, TV17)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from hbserver.usersync.cookie import (
    ZERO_TIME,
    CookieTooLarge,
    NotAPriority,
    SetCookieHeader,
    UidEntry,
    UidsCookie,
    decode_cookie,
    encode_cookie,
    format_expires,
    measured_size,
    parse_expires,
    prepare_for_write,
    read_request_cookie,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("cookie", "encoded"),
    [
        (UidsCookie({"adnxs": UidEntry("UID", ZERO_TIME)}),
         "eyJ0ZW1wVUlEcyI6eyJhZG54cyI6eyJ1aWQiOiJVSUQiLCJleHBpcmVzIjoiMDAwMS0wMS0wMVQwMDowMDowMFoifX19"),
        (UidsCookie(), "e30="),
        (UidsCookie(optout=True), "eyJvcHRvdXQiOnRydWV9"),
        (UidsCookie({"adnxs": UidEntry("123", datetime(2026, 1, 15, tzinfo=UTC))}),
         "eyJ0ZW1wVUlEcyI6eyJhZG54cyI6eyJ1aWQiOiIxMjMiLCJleHBpcmVzIjoiMjAyNi0wMS0xNVQwMDowMDowMFoifX19"),
    ],
)
def test_encoding_vectors(cookie, encoded):
    assert encode_cookie(cookie) == encoded
    assert decode_cookie(encoded) == cookie


def test_measured_size_vector():
    value = encode_cookie(UidsCookie({"adnxs": UidEntry("123", datetime(2026, 1, 15, tzinfo=UTC))}))
    assert (len(value), measured_size(value)) == (92, 144)


def test_keys_sorted_and_html_escaped():
    cookie = UidsCookie({
        "zeta": UidEntry("<a&b>\u2028", ZERO_TIME),
        "alpha": UidEntry("é", ZERO_TIME),
    })
    raw = base64.urlsafe_b64decode(encode_cookie(cookie))
    assert raw == (
        b'{"tempUIDs":{"alpha":{"uid":"\xc3\xa9","expires":"0001-01-01T00:00:00Z"},'
        b'"zeta":{"uid":"\\u003ca\\u0026b\\u003e\\u2028","expires":"0001-01-01T00:00:00Z"}}}'
    )
    assert decode_cookie(encode_cookie(cookie)) == cookie


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", UidsCookie()),
        (None, UidsCookie()),
        ("bad base64 encoding", UidsCookie()),
        (b64("not json"), UidsCookie()),
        (b64("[1]"), UidsCookie()),
        (b64('{"tempUIDs": []}'), UidsCookie()),
        (b64('{"tempUIDs": {"a": {"uid": 5}}}'), UidsCookie()),
        (b64('{"tempUIDs": {"a": {"uid": "x", "expires": "yesterday"}}}'), UidsCookie()),
        # padding is required (Go's URLEncoding)
        (b64('{"optout": true}').rstrip("="), UidsCookie()),
        (b64('{"optout": true}'), UidsCookie(optout=True)),
        # only the URL alphabet
        (base64.b64encode(b'{"tempUIDs":{"a":{"uid":"\xff\xfe?"}}}').decode(), UidsCookie()),
        # unknown members (legacy uids, bday) are ignored; optout discards uids
        (b64('{"uids": {"a": "1"}, "bday": "2017", '
             '"tempUIDs": {"a": {"uid": "1", "expires": "2026-01-15T00:00:00Z"}}}'),
         UidsCookie({"a": UidEntry("1", datetime(2026, 1, 15, tzinfo=UTC))})),
        (b64('{"tempUIDs": {"a": {"uid": "1"}}, "optout": true}'), UidsCookie(optout=True)),
        # a missing expires is the zero time; audienceNetwork "0" is dropped
        (b64('{"tempUIDs": {"a": {"uid": "1"}, "audienceNetwork": {"uid": "0"}}}'),
         UidsCookie({"a": UidEntry("1", ZERO_TIME)})),
    ],
)
def test_decoding_is_lenient(value, expected):
    assert decode_cookie(value) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-07-30T22:10:28.961Z", datetime(2020, 7, 30, 22, 10, 28, 961000, tzinfo=UTC)),
        ("2020-07-30T22:10:28.123456789Z", datetime(2020, 7, 30, 22, 10, 28, 123456, tzinfo=UTC)),
        ("2020-07-30T22:10:28+02:00", datetime(2020, 7, 30, 20, 10, 28, tzinfo=UTC)),
        ("0001-01-01T00:00:00Z", ZERO_TIME),
        ("2020-13-30T22:10:28Z", None),
        ("\u0662\u0660\u0662\u0660-07-30T22:10:28Z", None),  # Arabic-Indic digits: Go's time.Parse refuses them
        ("2020-07-30T22:10:28.\u0669Z", None),
    ],
)
def test_parse_expires(text, expected):
    assert parse_expires(text) == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (datetime(2026, 1, 15, tzinfo=UTC), "2026-01-15T00:00:00Z"),
        (datetime(2020, 7, 30, 22, 10, 28, 961000, tzinfo=UTC), "2020-07-30T22:10:28.961Z"),
        (ZERO_TIME, "0001-01-01T00:00:00Z"),
    ],
)
def test_format_expires(value, text):
    assert format_expires(value) == text


def test_liveness_and_uid_ttl():
    cookie = UidsCookie()
    cookie.set_uid("adnxs", "u1", NOW)
    assert cookie.uids["adnxs"].expires == NOW + timedelta(days=14)
    assert cookie.is_live("adnxs", NOW + timedelta(days=13, hours=23))
    assert not cookie.is_live("adnxs", NOW + timedelta(days=14))
    assert cookie.has_live_uid(NOW) and not cookie.has_live_uid(NOW + timedelta(days=15))
    assert cookie.buyeruids() == {"adnxs": "u1"}  # expired uids are still sent to bidders


@pytest.mark.parametrize(
    ("domain", "expected"),
    [
        ("", "uids=V; Path=/; Expires=Wed, 01 Apr 2026 00:00:00 GMT; Max-Age=7776000; SameSite=None; Secure; HttpOnly"),
        (".example.com",
         "uids=V; Path=/; Domain=example.com; Expires=Wed, 01 Apr 2026 00:00:00 GMT; Max-Age=7776000; SameSite=None; "
         "Secure; HttpOnly"),
    ],
)
def test_set_cookie_header(domain, expected):
    header = SetCookieHeader(90, domain)
    assert header("V", NOW) == expected
    assert header("W", NOW) == expected.replace("uids=V", "uids=W")  # the second's attributes, kept
    later = header("V", NOW + timedelta(seconds=1))
    assert "Expires=Wed, 01 Apr 2026 00:00:01 GMT" in later and later != expected


def tv4_cookie() -> UidsCookie:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    uids = {
        "mainUID": ("m" * 46, 7), "2": ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 6), "3": ("c" * 48, 5),
        "4": ("d" * 52, 4), "5": ("e" * 50, 3), "6": ("abcdefghij", 2), "7": ("abcdefghijklmnopqrstuvwxy", 1),
    }
    # sub-second expiries, as real ones have (PBS-Go writes nanoseconds; we keep microseconds)
    stamp = timedelta(microseconds=123456)
    return UidsCookie({k: UidEntry(uid, base + timedelta(minutes=m) + stamp) for k, (uid, m) in uids.items()})


TV4_GROUPS = [{"mainUID"}, {"2", "3"}, {"4", "5", "6"}]  # "7" is not a priority key


@pytest.mark.parametrize(
    ("max_bytes", "kept"),
    [
        (2000, {"mainUID", "2", "3", "4", "5", "6", "7"}),
        (0, {"mainUID", "2", "3", "4", "5", "6", "7"}),
        (-100, {"mainUID", "2", "3", "4", "5", "6", "7"}),
        (900, {"mainUID", "2", "3", "4", "5", "6"}),
        (500, {"mainUID", "2", "3"}),
        (300, {"mainUID"}),
    ],
)
def test_trimming_vectors(max_bytes, kept):
    cookie = tv4_cookie()
    value = prepare_for_write(cookie, max_bytes, TV4_GROUPS, syncing_is_priority=True)
    assert set(decode_cookie(value).uids) == kept
    assert max_bytes <= 0 or measured_size(value) <= max_bytes


def test_trimming_ejects_in_the_reference_order():
    """Non-priority first, then the lowest group oldest first: 7, then 6, 5, 4, then 3, 2."""
    full = set(tv4_cookie().uids)
    ejected: list[str] = []
    limit = measured_size(encode_cookie(tv4_cookie()))
    while True:
        limit -= 4
        try:
            kept = set(decode_cookie(prepare_for_write(tv4_cookie(), limit, TV4_GROUPS, True)).uids)
        except CookieTooLarge:
            break
        ejected += sorted(full - kept - set(ejected))
    assert ejected == ["7", "6", "5", "4", "3", "2"]


def test_single_uid_too_big():
    with pytest.raises(CookieTooLarge, match="uid that's trying to be synced is bigger than MaxCookieSize"):
        prepare_for_write(tv4_cookie(), 100, TV4_GROUPS, syncing_is_priority=True)


def test_only_priority_left_and_syncer_not_a_priority():
    cookie = UidsCookie({
        "syncerNotPriority": UidEntry("x" * 30, NOW + timedelta(minutes=2)),
        "2": UidEntry("y" * 30, NOW + timedelta(minutes=1)),
    })
    with pytest.raises(NotAPriority, match="syncer key is not a priority, and there are only priority elements left"):
        prepare_for_write(cookie, 100, [{"2"}], syncing_is_priority=False)


def test_without_groups_the_oldest_goes_first():
    cookie = UidsCookie({f"k{i}": UidEntry("u" * 40, NOW + timedelta(minutes=i)) for i in range(6)})
    value = prepare_for_write(cookie, 400, [], syncing_is_priority=False)
    kept = set(decode_cookie(value).uids)
    assert "k5" in kept and "k0" not in kept
    assert measured_size(value) <= 400


def test_empty_cookie_writes_empty_value():
    assert prepare_for_write(UidsCookie(), 500, [], syncing_is_priority=False) == ""


OPTOUT = {"optout_name": "optOutCookieName", "optout_value": "optOutCookieValue"}
SOME_UIDS = encode_cookie(UidsCookie({"adnxs": UidEntry("1", NOW + timedelta(days=1))}))


@pytest.mark.parametrize(
    ("cookies", "optout", "uids"),
    [
        ({"optOutCookieName": "optOutCookieValue"}, True, {}),
        ({"optOutCookieName": "optOutCookieValue", "uids": SOME_UIDS}, True, {}),
        ({"optOutCookieName": "wrong", "uids": SOME_UIDS}, False, {"adnxs": "1"}),
        ({"otherName": "optOutCookieValue", "uids": SOME_UIDS}, False, {"adnxs": "1"}),
    ],
)
def test_host_optout_cookie(cookies, optout, uids):
    cookie = read_request_cookie(cookies, NOW, **OPTOUT)
    assert (cookie.optout, cookie.buyeruids()) == (optout, uids)


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        ({}, "host-1"),  # missing: filled from the host cookie
        ({"host": UidEntry("", ZERO_TIME)}, "host-1"),  # empty: filled
        ({"host": UidEntry("synced", ZERO_TIME)}, "synced"),  # present: kept (PBS-Go)
    ],
)
def test_host_cookie_fills_its_family(existing, expected):
    cookies = {"uids": encode_cookie(UidsCookie(dict(existing))), "hostid": "host-1"}
    cookie = read_request_cookie(cookies, NOW, host_family="host", host_cookie_name="hostid")
    assert cookie.uids["host"].uid == expected


@pytest.mark.parametrize("optout", [False, True])
def test_encoding_matches_orjsons_sorted_dataclass_output(optout):
    """encode_cookie writes plain dicts (faster) with the bytes orjson gives the UidEntry dataclasses
    with sorted keys: field order inside each entry, keys in UTF-8 order (non-ASCII ones too)."""
    import orjson

    uids = {key: UidEntry(f"u-{key}", datetime(2026, 1, 15, 3, 4, 5, 678, tzinfo=UTC) if key < "m" else ZERO_TIME)
            for key in ("zeta", "alpha", "\u00e9t\u00e9", "Beta", "\U0001f600", "a")}
    cookie = UidsCookie(dict(uids), optout=optout)
    if optout:
        doc = {"tempUIDs": dict(sorted(uids.items())), "optout": True}
        expected = orjson.dumps(doc, option=orjson.OPT_UTC_Z)
    else:
        expected = orjson.dumps({"tempUIDs": uids}, option=orjson.OPT_UTC_Z | orjson.OPT_SORT_KEYS)
    assert base64.urlsafe_b64decode(encode_cookie(cookie)) == expected
