"""The file module in PBS-Go's format (``analytics.file.format: pbs``): its file logger's objects.

PBS-Go's ``analytics/filesystem`` writes one JSON object per event: ``type`` (the request type:
``/openrtb2/auction``, ``/openrtb2/amp``, ``/cookie_sync``, ``/set_uid``, ``/event``) then the
event's PBS-Go object (hbserver.analytics.pbs), the request in it as the activities let the
``filelogger`` see it. Each object is one line; the file, its appending and its reopening after
logrotate are the file module's. PBS-Go's glog line prefix and daily file rotation are not copied:
a line is the JSON object alone.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.analytics.file import FileModule
from hbserver.analytics.pbs import REQUEST_TYPES, pbs_object

LINE = "line"  # the buffered record's serialized object


class PbsFileModule(FileModule):
    def log_pbs(self, event: str, record: dict[str, Any], source: Any, request: dict[str, Any] | None) -> None:
        request_type = REQUEST_TYPES.get(event)
        if request_type is None:
            return
        obj = pbs_object(record, source, request)
        if obj is None:
            return
        self.log({"event": event, LINE: orjson.dumps({"type": request_type, **obj}) + b"\n"})

    async def deliver(self, batch: list[dict[str, Any]]) -> None:
        await self._write_lines(b"".join([record[LINE] for record in batch]))
