"""The account's ``hooks.modules.pb-response-correction`` (PBS-Java's ``Config``).

Only the account's section counts (the host's ``enabled`` just loads the module):
``{"enabled": bool, "app-video-html": {"enabled": bool, "excluded-bidders": [str]}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hbserver.modules.request_correction.jackson import read_boolean, read_object, read_string_list

_APP_VIDEO_HTML_TYPE = "org.prebid.server.hooks.modules.pb.response.correction.core.config.model.AppVideoHtmlConfig"


@dataclass(frozen=True, slots=True)
class AppVideoHtmlConfig:
    enabled: bool = False
    excluded_bidders: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Config:
    enabled: bool = False
    app_video_html: AppVideoHtmlConfig | None = None


def _app_video_html(node: dict[str, Any] | None) -> AppVideoHtmlConfig | None:
    if node is None:
        return None
    enabled = False
    excluded: list[str | None] | None = None
    for key, value in node.items():
        if key == "enabled":
            enabled = bool(read_boolean(value, key, "AppVideoHtmlConfig"))
        elif key == "excluded-bidders":
            excluded = read_string_list(value, key, "AppVideoHtmlConfig")
    return AppVideoHtmlConfig(enabled, tuple(excluded or ()))


def read_config(node: Mapping[str, Any] | None) -> Config | None:
    """The account's configuration, None without one; a value of the wrong type raises JacksonError."""
    if node is None:
        return None
    enabled = False
    app_video_html = None
    for key, value in node.items():
        if key == "enabled":
            enabled = bool(read_boolean(value, key, "Config"))
        elif key == "app-video-html":
            app_video_html = _app_video_html(read_object(value, _APP_VIDEO_HTML_TYPE, key, "Config"))
    return Config(enabled, app_video_html)
