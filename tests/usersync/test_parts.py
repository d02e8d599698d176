"""Several uids cookies: PBS-Java's UidsCookieServiceTest cases (split and read-back), in our sizes.

PBS-Java measures a part with its own cookie attributes (~100 bytes); hbserver as PBS-Go does, the
value plus 52 bytes. So the uids here are longer than PBS-Java's to give the same outcomes at 500 bytes.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from hbserver.usersync.cookie import UidEntry, UidsCookie, decode_cookie, decode_parts, encode_cookie
from hbserver.usersync.parts import measured_part_size, part_names, parts_size, split_for_write

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
PAD = "x" * 50
LONG, ANOTHER, SHORT = "very-very-very-very-long-family", "another-very-very-very-long-family", "family"
# PBS-Java's three uids, created in this order (so expiring in this order)
JAVA_UIDS = {
    LONG: "some-very-very-very-long-uid" + PAD,
    ANOTHER: "another-very-very-very-long-uid" + PAD,
    SHORT: "uid",
}


def java_cookie(optout: bool = False) -> UidsCookie:
    base = NOW + timedelta(days=14)
    uids = {key: UidEntry(uid, base + timedelta(seconds=i)) for i, (key, uid) in enumerate(JAVA_UIDS.items())}
    return UidsCookie(uids, optout)


def keys_of(value: str) -> list[str]:
    return sorted(decode_cookie(value).uids) if value else []


@pytest.mark.parametrize(
    ("count", "priority", "parts", "left_out"),
    [
        # updateUidsCookieShouldNotFitNonPrioritizedFamilyWhenSizeExceedsLimitAndLogMetric
        (1, {LONG, ANOTHER}, [[ANOTHER, LONG]], [SHORT]),
        # updateUidsCookieShouldNotFitPrioritizedFamilyWhenSizeExceedsLimitAndIncrementMetric
        (1, {LONG, ANOTHER, SHORT}, [[ANOTHER, LONG]], [SHORT]),
        # updateUidsCookieShouldFitPrioritizedFamily
        (2, {LONG, ANOTHER, SHORT}, [[ANOTHER, LONG], [SHORT]], []),
        # updateUidsCookieShouldFitNonPrioritizedFamily: the parts left empty are expired
        (5, set(), [[ANOTHER, LONG], [SHORT], [], [], []], []),
        # priority first, whatever the expiry: the newest priority uid takes the first part
        (2, {SHORT}, [[SHORT, LONG], [ANOTHER]], []),
    ],
)
def test_split_transcribed_from_pbs_java(count, priority, parts, left_out):
    split = split_for_write(java_cookie(), part_names(count), 500, priority, NOW)
    assert [keys_of(v) for v in split.values] == parts
    assert split.left_out == left_out and split.too_large == []
    for name, value in zip(part_names(count), split.values, strict=True):
        assert measured_part_size(name, value) <= 500


def test_not_split_when_under_the_limit():
    # updateUidsCookieShouldUpdateCookieAndNotSplitCookieWhenLimitIsNotExceeded
    cookie = UidsCookie({"family": UidEntry("uid", NOW + timedelta(days=1)),
                         "another-family": UidEntry("uid", NOW + timedelta(days=2))})
    split = split_for_write(cookie, part_names(2), 500, set(), NOW)
    assert [keys_of(v) for v in split.values] == [["another-family", "family"], []]


def test_no_limit_puts_everything_in_uids():
    split = split_for_write(java_cookie(), part_names(3), 0, set(), NOW)
    assert [keys_of(v) for v in split.values] == [sorted(JAVA_UIDS), [], []]


def test_expired_uids_are_dropped_on_write():
    # updateUidsCookieShouldRemoveAllExpiredUids
    cookie = UidsCookie({"family1": UidEntry("uid1", NOW - timedelta(seconds=1)),
                         "family2": UidEntry("uid2", NOW + timedelta(days=1)),
                         "family3": UidEntry("uid3", NOW - timedelta(days=1))})
    split = split_for_write(cookie, part_names(2), 500, set(), NOW)
    assert [keys_of(v) for v in split.values] == [["family2"], []]


def test_opted_out_writes_uids_alone():
    # updateUidsCookieShouldDisallowSyncForAllCookiesWhenOptoutSetTrue (hbserver's opt-out carries no uids)
    split = split_for_write(java_cookie(optout=True), part_names(2), 500, set(), NOW)
    assert decode_cookie(split.values[0]).optout and split.values[1] == ""


def test_a_uid_too_large_for_any_part_is_left_out_alone():
    cookie = java_cookie()
    cookie.uids["huge"] = UidEntry("h" * 600, NOW + timedelta(days=1))  # the oldest: first in line
    split = split_for_write(cookie, part_names(2), 500, set(), NOW)
    assert split.too_large == ["huge"]  # PBS-Java would leave every later uid out too
    assert [keys_of(v) for v in split.values] == [[ANOTHER, LONG], [SHORT]]


@pytest.mark.parametrize("seed", range(30))
def test_parts_are_filled_to_the_byte(seed):
    """Each part is within the limit and the uid that opened the next part would not have fitted
    (the predicted sizes are the encoded ones, HTML escapes and non-ASCII included)."""
    rng = random.Random(seed)
    alphabet = "abcXYZ019-_<>&é\u2028☃"
    uids = {
        f"k{i}{rng.choice(alphabet)}": UidEntry(
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 120))),
            NOW + timedelta(seconds=rng.randint(1, 10**6), microseconds=rng.choice((0, 5, 123456))),
        )
        for i in range(rng.randint(5, 40))
    }
    names, limit = part_names(4), rng.choice((500, 700, 1200))
    split = split_for_write(UidsCookie(uids), names, limit, set(), NOW)
    placed = [decode_cookie(v).uids if v else {} for v in split.values]
    for name, value in zip(names, split.values, strict=True):
        assert measured_part_size(name, value) <= limit
    for index in range(len(names) - 1):
        if placed[index] and placed[index + 1]:
            opener = min(placed[index + 1], key=lambda k: (uids[k].expires, k))
            grown = encode_cookie(UidsCookie({**placed[index], opener: uids[opener]}))
            assert measured_part_size(names[index], grown) > limit
    kept = {k for part in placed for k in part}
    assert kept | set(split.left_out) | set(split.too_large) == set(uids)
    assert all(placed[i][k] == uids[k] for i in range(len(names)) for k in placed[i])


# PBS-Java's shouldReturnNonEmptyUidsCookieFromCookiesMapWhenSeveralUidsCookiesArePresent and
# shouldReturnMergedUidsFromCookiesWithOldestUidWhenDuplicatesArePresent (their cookie values)
SEVERAL = {
    "uids": "eyJ0ZW1wVUlEcyI6eyJiaWRkZXJBIjp7InVpZCI6ImJpZGRlci1BLXVpZCIsImV4cGlyZXMiOiIyMDIzLTEyLTA1VDE5OjAwOjA1"
            "LjEwMzMyOS0wMzowMCJ9LCJiaWRkZXJCIjp7InVpZCI6ImJpZGRlci1CLXVpZCIsImV4cGlyZXMiOiIyMDIzLTEyLTA1VDE5OjAw"
            "OjA1LjEwMzMyOS0wMzowMCJ9fX0=",
    "uids2": "eyJ0ZW1wVUlEcyI6eyJiaWRkZXJDIjp7InVpZCI6ImJpZGRlci1DLXVpZCIsImV4cGlyZXMiOiIyMDIzLTEyLTA1VDE5OjAwOjA1"
             "LjEwMzMyOS0wMzowMCJ9LCJiaWRkZXJEIjp7InVpZCI6ImJpZGRlci1ELXVpZCIsImV4cGlyZXMiOiIyMDIzLTEyLTA1VDE5OjAw"
             "OjA1LjEwMzMyOS0wMzowMCJ9fX0=",
}
DUPLICATES = {
    "uids": "eyJ0ZW1wVUlEcyI6eyJiaWRkZXJBIjp7InVpZCI6ImJpZGRlci1BMS11aWQiLCJleHBpcmVzIjoiMjAyMy0xMi0wNVQxOTowMDow"
            "NS4xMDMzMjktMDM6MDAifSwiYmlkZGVyQiI6eyJ1aWQiOiJiaWRkZXItQi11aWQiLCJleHBpcmVzIjoiMjAyMy0xMi0wNVQxOTow"
            "MDowNS4xMDMzMjktMDM6MDAifX19",
    "uids2": "eyJ0ZW1wVUlEcyI6eyJiaWRkZXJBIjp7InVpZCI6ImJpZGRlci1BMi11aWQiLCJleHBpcmVzIjoiMjAyNC0xMi0wNVQxOTowMDow"
             "NS4xMDMzMjktMDM6MDAifX19",
}
OPTED_OUT = encode_cookie(UidsCookie(optout=True))


@pytest.mark.parametrize(
    ("cookies", "count", "uids", "optout"),
    [
        (SEVERAL, 2, {"bidderA": "bidder-A-uid", "bidderB": "bidder-B-uid", "bidderC": "bidder-C-uid",
                      "bidderD": "bidder-D-uid"}, False),
        (SEVERAL, 3, {"bidderA": "bidder-A-uid", "bidderB": "bidder-B-uid", "bidderC": "bidder-C-uid",
                      "bidderD": "bidder-D-uid"}, False),  # uids3 absent
        (SEVERAL, 1, None, False),  # one cookie configured: uids2 is not read (decode_cookie's path)
        (DUPLICATES, 2, {"bidderA": "bidder-A2-uid", "bidderB": "bidder-B-uid"}, False),  # later expiry wins
        ({"uids2": SEVERAL["uids2"]}, 2, {"bidderC": "bidder-C-uid", "bidderD": "bidder-D-uid"}, False),
        ({**SEVERAL, "uids": "not base64!"}, 2, {"bidderC": "bidder-C-uid", "bidderD": "bidder-D-uid"}, False),
        ({**SEVERAL, "uids2": OPTED_OUT}, 2, {}, True),  # any part opted out
        ({}, 2, {}, False),
    ],
)
def test_read_back(cookies, count, uids, optout):
    if count == 1:
        cookie = decode_cookie(cookies.get("uids"))
        assert set(cookie.uids) == {"bidderA", "bidderB"}
        return
    cookie = decode_parts(cookies, part_names(count))
    assert cookie.buyeruids() == uids and cookie.optout is optout


def test_names_and_size():
    assert part_names(1) == ("uids",)
    assert part_names(11)[-3:] == ("uids9", "uids10", "uids11")
    assert parts_size(SEVERAL, part_names(3)) == len(SEVERAL["uids"]) + len(SEVERAL["uids2"])
    assert measured_part_size("uids10", "abc") == 3 + 52 + 2


def test_split_then_read_back_round_trips():
    split = split_for_write(java_cookie(), part_names(3), 500, set(), NOW)
    sent = {name: value for name, value in zip(part_names(3), split.values, strict=True) if value}
    assert decode_parts(sent, part_names(3)).uids == java_cookie().uids
