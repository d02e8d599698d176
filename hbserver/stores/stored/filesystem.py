"""The filesystem backend: ``<directorypath>/<stored_requests|stored_imps|...>/<id>.json`` (CONTRACT §3).

Per-account stored requests and imps (PBS-Java's, :mod:`.scoped`): ``<stored_requests|stored_imps>/<id>/
<account>.json``, beside or instead of ``<id>.json`` (the item of no account); an id with such a directory is
answered with every item (:class:`~hbserver.stores.stored.scoped.Variants`), the lookup picking the account's.

Files are read on demand (the LRU keeps them), a whole batch in one worker thread, each bounded
to :data:`~hbserver.stores.filesystem.MAX_FILE_BYTES`. Ids that could leave the directory are
not stored here (a later backend may still hold them).
"""

from __future__ import annotations

import asyncio
import os

from hbserver.stores.filesystem import MAX_FILE_BYTES, safe_id
from hbserver.stores.stored.base import LOCATIONS, Answer, Failure, Wanted
from hbserver.stores.stored.scoped import SCOPED_KINDS, Variants


def _read(path: str) -> bytes | Failure | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return Failure(f"cannot read the stored file: {exc.strerror or exc.__class__.__name__}", "io",
                       f"cannot read {path}: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:
        return Failure(f"the stored file is larger than {MAX_FILE_BYTES} bytes", "too_large",
                       f"{path} is larger than {MAX_FILE_BYTES} bytes")
    return data


def _with_accounts(directory: str, plain: bytes | Failure | None) -> bytes | Variants | Failure | None:
    """``plain`` (the item of no account) with the items of ``directory/<account>.json``, when there are any."""
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return plain
    except OSError as exc:
        return Failure(f"cannot list the stored directory: {exc.strerror or exc.__class__.__name__}", "io",
                       f"cannot list {directory}: {exc.strerror or exc}")
    if isinstance(plain, Failure):
        return plain
    items: list[tuple[str | None, bytes]] = [(None, plain)] if plain is not None else []
    for name in names:
        account = name.removesuffix(".json")
        if not safe_id(account):
            continue
        data = _read(os.path.join(directory, name))
        if isinstance(data, Failure):
            return data
        if data is not None:
            items.append((account, data))
    if not items:
        return None
    return Variants(tuple(items)) if items[0][0] is not None or len(items) > 1 else plain


class FilesystemBackend:
    name = "filesystem"

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def _read_batch(self, wanted: Wanted) -> Answer:
        answer: Answer = {}
        for kind, ids in wanted.items():
            found: dict[str, bytes | Failure] = {}
            folder = os.path.join(self.directory, LOCATIONS[kind])
            for item_id in ids:
                if safe_id(item_id):
                    data = _read(os.path.join(folder, item_id + ".json"))
                    if kind in SCOPED_KINDS:
                        data = _with_accounts(os.path.join(folder, item_id), data)
                    if data is not None:
                        found[item_id] = data
            answer[kind] = found
        return answer

    async def fetch(self, wanted: Wanted) -> Answer:
        return await asyncio.to_thread(self._read_batch, wanted)
