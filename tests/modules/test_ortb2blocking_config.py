"""prebid.ortb2blocking: reading the account's config (PBS-Go's config_test.go) and the module's build."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.modules import builder_of
from hbserver.modules.ortb2blocking import Ortb2BlockingModule, build
from hbserver.modules.ortb2blocking.config import (
    EMPTY,
    ActionOverride,
    Conditions,
    ConfigCache,
    Override,
    parse,
    read_override,
)

DATA = Path(__file__).parent / "data" / "ortb2blocking"


def _full() -> dict[str, Any]:
    return json.loads((DATA / "full_config.json").read_text())


def _one(conditions: Conditions, override: Override) -> tuple[ActionOverride, ...]:
    return (ActionOverride(conditions, override),)


def test_full_config_values() -> None:
    cfg = parse(_full())
    assert cfg.value("badv.enforce_blocks") is True
    assert cfg.value("badv.block_unknown_adomain") is True
    assert cfg.value("badv.blocked_adomain") == ("a.com", "b.com", "c.com")
    assert cfg.value("badv.allowed_adomain_for_deals") == ("z.com", "x.com")
    assert cfg.value("bcat.enforce_blocks") is False
    assert cfg.value("bcat.block_unknown_adv_cat") is False
    assert cfg.value("bcat.category_taxonomy") == 6
    assert cfg.value("bcat.blocked_adv_cat") == ("IAB-1", "IAB-2")
    assert cfg.value("bcat.allowed_adv_cat_for_deals") == ("IAB-1",)
    assert cfg.value("bapp.enforce_blocks") is False
    assert cfg.value("bapp.blocked_app") == ("app1", "app2")
    assert cfg.value("bapp.allowed_app_for_deals") == ()
    assert cfg.value("btype.blocked_banner_type") == (3, 4)
    assert cfg.value("battr.allowed_banner_attr_for_deals") == ()
    assert cfg.value("battr.enforce_blocks") is False
    assert cfg.value("battr.blocked_banner_attr") == (1, 8, 9, 10)


def test_full_config_overrides() -> None:
    cfg = parse(_full())
    assert cfg.overrides_of("badv.enforce_blocks") == ()
    assert cfg.overrides_of("badv.blocked_adomain") == (
        ActionOverride(
            Conditions(bidders=("biddera", "bidderb"), media_types=("video",)), Override(names=("a.com", "b.com"))
        ),
        ActionOverride(Conditions(bidders=("bidderb",)), Override(names=("a.com", "b.com", "c.com", "d.com", "e.com"))),
    )
    assert cfg.overrides_of("badv.block_unknown_adomain") == _one(
        Conditions(bidders=("biddera",), media_types=("video",)), Override(is_active=True)
    )
    assert cfg.overrides_of("badv.allowed_adomain_for_deals") == _one(
        Conditions(deal_ids=("12345678",)), Override(names=("a.com",))
    )
    assert cfg.overrides_of("bcat.blocked_adv_cat") == _one(
        Conditions(media_types=("video",)), Override(names=("IAB-1", "IAB-2", "IAB-3", "IAB-4"))
    )
    assert cfg.overrides_of("bcat.enforce_blocks") == _one(Conditions(bidders=("biddera",)), Override(is_active=True))
    assert cfg.overrides_of("bcat.block_unknown_adv_cat") == _one(
        Conditions(media_types=("video",)), Override(is_active=True)
    )
    assert cfg.overrides_of("bcat.allowed_adv_cat_for_deals") == _one(
        Conditions(deal_ids=("1111111",)), Override(names=("IAB-1",))
    )
    assert cfg.overrides_of("bapp.allowed_app_for_deals") == ()
    assert cfg.overrides_of("bapp.enforce_blocks") == ()
    assert cfg.overrides_of("bapp.blocked_app") == _one(Conditions(bidders=("biddera",)), Override(names=("app3",)))
    assert cfg.overrides_of("btype.blocked_banner_type") == _one(
        Conditions(bidders=("biddera",)), Override(ids=(3, 4, 5))
    )
    assert cfg.overrides_of("battr.allowed_banner_attr_for_deals") == ()
    assert cfg.overrides_of("battr.blocked_banner_attr") == ()
    assert cfg.overrides_of("battr.enforce_blocks") == _one(Conditions(bidders=("biddera",)), Override(is_active=True))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (True, Override(is_active=True)),
        (False, Override()),
        ([1, 2, 3], Override(ids=(1, 2, 3))),
        (["one", "two"], Override(names=("one", "two"))),
        ("string", Override()),  # ignored kinds of value: an empty override
        ({}, Override()),
        (None, Override()),
        (7, Override()),
        ([1.9, "a", True, None, {}], Override(ids=(1,), names=("a",))),  # numbers truncate; others are skipped
    ],
)
def test_override_values(raw: Any, expected: Override) -> None:
    assert read_override(raw) == expected


def test_null_is_absent_and_unknown_keys_are_ignored() -> None:
    cfg = parse(
        {
            "attributes": {
                "badv": {"enforce_blocks": None, "blocked_adomain": None, "action_overrides": None, "extra": 1},
                "cattax": {"enforce_blocks": True},
                "bcat": None,
            },
            "other": "x",
        }
    )
    assert cfg.value("badv.enforce_blocks") is False
    assert cfg.value("badv.blocked_adomain") == ()
    assert cfg == parse({}) == EMPTY


def test_absent_and_empty_condition_lists_differ() -> None:
    cfg = parse(
        {
            "attributes": {
                "badv": {
                    "action_overrides": {
                        "blocked_adomain": [{"conditions": {"bidders": None, "media_types": []}, "override": ["a"]}]
                    }
                }
            }
        }
    )
    assert cfg.overrides_of("badv.blocked_adomain")[0].conditions == Conditions(bidders=None, media_types=())


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"attributes": []}, "attributes"),
        ({"attributes": {"badv": "x"}}, "attributes.badv"),
        ({"attributes": {"badv": {"enforce_blocks": "true"}}}, "attributes.badv.enforce_blocks"),
        ({"attributes": {"badv": {"enforce_blocks": 1}}}, "attributes.badv.enforce_blocks"),
        ({"attributes": {"badv": {"blocked_adomain": "a.com"}}}, "attributes.badv.blocked_adomain"),
        ({"attributes": {"badv": {"blocked_adomain": ["a.com", 1]}}}, "attributes.badv.blocked_adomain[1]"),
        ({"attributes": {"bcat": {"category_taxonomy": "6"}}}, "attributes.bcat.category_taxonomy"),
        ({"attributes": {"bcat": {"category_taxonomy": True}}}, "attributes.bcat.category_taxonomy"),
        ({"attributes": {"btype": {"blocked_banner_type": [1, 2.5]}}}, "attributes.btype.blocked_banner_type[1]"),
        ({"attributes": {"battr": {"blocked_video_attr": [True]}}}, "attributes.battr.blocked_video_attr[0]"),
        ({"attributes": {"bapp": {"action_overrides": []}}}, "attributes.bapp.action_overrides"),
        (
            {"attributes": {"bapp": {"action_overrides": {"blocked_app": {}}}}},
            "attributes.bapp.action_overrides.blocked_app",
        ),
        (
            {"attributes": {"bapp": {"action_overrides": {"blocked_app": ["x"]}}}},
            "attributes.bapp.action_overrides.blocked_app[0]",
        ),
        (
            {"attributes": {"bapp": {"action_overrides": {"blocked_app": [{"conditions": {"bidders": "a"}}]}}}},
            "attributes.bapp.action_overrides.blocked_app[0].conditions.bidders",
        ),
        (
            {"attributes": {"badv": {"action_overrides": {"blocked_adomain": [{"conditions": {"deal_ids": [1]}}]}}}},
            "attributes.badv.action_overrides.blocked_adomain[0].conditions.deal_ids[0]",
        ),
    ],
)
def test_wrong_types_name_the_key(raw: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError, match=r"^failed to parse config: ") as caught:
        parse(raw)
    assert str(caught.value).startswith(f"failed to parse config: {key}: ")


def test_cache_parses_each_object_once() -> None:
    cache = ConfigCache(size=2)
    first, second, third = _full(), {"attributes": {}}, {}
    parsed = cache.get(first)
    assert cache.get(first) is parsed
    assert cache.get(_full()) is not parsed  # an equal but distinct object is parsed on its own
    cache.get(second)
    cache.get(third)
    assert cache.get(first) is not parsed  # pushed out by two newer ones (size 2)
    assert len(cache._entries) <= 2


def test_cache_repeats_the_parse_error() -> None:
    cache = ConfigCache()
    bad = {"attributes": {"badv": {"enforce_blocks": "yes"}}}
    for _ in range(2):
        with pytest.raises(ValueError, match=r"attributes\.badv\.enforce_blocks"):
            cache.get(bad)


def test_build() -> None:
    assert isinstance(build({"enabled": True}), Ortb2BlockingModule)
    assert builder_of("prebid.ortb2blocking") is build
    with pytest.raises(ValueError, match=r"hooks\.modules\.prebid\.ortb2blocking"):
        build(["x"])  # type: ignore[arg-type]
