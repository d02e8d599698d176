"""The account's ``hooks.modules.pb-request-correction`` (PBS-Java's ``Config``).

PBS-Java reads only the account's section (the host's ``hooks.pb-request-correction.enabled`` just
loads the module): no section, or ``enabled`` false, and the hook does nothing. Each correction
has a kebab-case key and a camel-case alias; the last one given wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.modules.request_correction.jackson import read_boolean

_OWNER = "Config"
# the JSON names PBS-Java accepts (@JsonProperty and @JsonAlias) -> the field they set
_FIELDS = {
    "enabled": "enabled",
    "pbsdk-android-instl-remove": "interstitial",
    "pbsdkAndroidInstlRemove": "interstitial",
    "pbsdk-ua-cleanup": "user_agent",
    "pbsdkUaCleanup": "user_agent",
}


@dataclass(frozen=True, slots=True)
class Config:
    enabled: bool = False
    interstitial: bool = False  # pbsdk-android-instl-remove
    user_agent: bool = False  # pbsdk-ua-cleanup


def read_config(node: Mapping[str, Any] | None) -> Config | None:
    """The account's configuration, None without one; a value of the wrong type raises JacksonError."""
    if node is None:
        return None
    values: dict[str, bool] = {}
    for key, value in node.items():
        name = _FIELDS.get(key)
        if name is not None:
            values[name] = bool(read_boolean(value, key, _OWNER))
    return Config(**values)
