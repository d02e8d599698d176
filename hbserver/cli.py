"""The ``hbserver`` command (CONTRACT §1)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any

from hbserver import __version__
from hbserver.config import Config, ConfigError, dump_yaml, load_config
from hbserver.cpus import usable_cpus
from hbserver.installation import installation_problems
from hbserver.logsetup import setup_logging

log = logging.getLogger("hbserver")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="hbserver", description="Server-side header bidding server compatible with Prebid Server."
    )
    parser.add_argument("--config", metavar="FILE", help="YAML configuration file")
    parser.add_argument("--host", help="address to listen on (config key: host)")
    parser.add_argument("--port", type=int, help="port to listen on (config key: port)")
    parser.add_argument("--workers", type=int, help="worker processes; 0 = one per CPU (config key: workers)")
    parser.add_argument(
        "--check-config", action="store_true",
        help="validate the configuration, print it as YAML and exit (2 when invalid)",
    )
    parser.add_argument("--version", action="version", version=f"hbserver {__version__}")
    return parser.parse_args(argv)


def _unwritable(filename: str) -> str:
    """Why ``filename`` could not be opened for appending (created if missing), or "".

    Checked without creating anything: ``--check-config`` only validates.
    """
    if os.path.isdir(filename):
        return "Is a directory"
    if os.path.exists(filename):
        return "" if os.access(filename, os.W_OK) else "Permission denied"
    directory = os.path.dirname(os.path.abspath(filename))
    if not os.path.isdir(directory):
        return "No such file or directory"
    return "" if os.access(directory, os.W_OK | os.X_OK) else "Permission denied"


def runtime_problems(config: Config) -> list[str]:
    """Problems only visible on this machine (files that cannot be opened), one line each."""
    problems = []
    filename = config.analytics.file.filename
    if filename:
        problem = _unwritable(filename)
        if problem:
            problems.append(f"analytics.file.filename: cannot open {filename!r}: {problem}")
    from hbserver.adapters import adapter_problems
    from hbserver.bidders.registry import RegistryError, build_registry
    from hbserver.privacy.gvl import GVLError, load_gvl

    try:
        problems.extend(adapter_problems(build_registry(config)))
    except RegistryError as exc:
        problems.extend(exc.problems)
    if config.gdpr.vendorlist_file:
        try:
            load_gvl(config.gdpr.vendorlist_file)
        except GVLError as exc:
            problems.append(f"gdpr.vendorlist_file: {exc}")
    if config.geolocation.database:
        from hbserver.geo.lookup import GeoDatabaseError, open_reader

        try:
            open_reader(config.geolocation.database).close()
        except GeoDatabaseError as exc:
            problems.append(f"geolocation.database: {exc}")
    if config.port == 0 and (config.workers or usable_cpus()) > 1:
        problems.append("port: 0 (any free port) cannot be shared by several workers; name a port")
    return problems


def startup_warnings(config: Config) -> list[str]:
    """Settings that are valid but probably not what the operator meant, one line each."""
    warnings = []
    directory = config.stored_requests.filesystem.directorypath
    if config.stored_requests.filesystem.enabled and not os.path.isdir(directory):
        warnings.append(
            f"stored_requests.filesystem.directorypath {directory!r} does not exist; nothing is stored there"
        )
    if not config.cache.serve_endpoint and not config.cache.public_url:
        warnings.append(
            "cache.serve_endpoint is false and cache.public_url is empty: hb_cache_host/hb_cache_path name "
            f"{config.external_url.rstrip('/')}/cache, which this server does not serve"
        )
    return warnings


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[tuple[bool, str]] = []  # (is a problem, text)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelno >= logging.ERROR, record.getMessage()))


class _Files:
    """An AccountFetcher over account files already read."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    async def fetch_account(self, account_id: str) -> bytes | None:
        return self.files.get(account_id)


class _Uncounted:
    """The counters an AccountStore touches, counting nothing. The start-up check of the account files
    runs before the server prepares ``PROMETHEUS_MULTIPROC_DIR``: real metrics would create this
    process's metric files there first (or fail, the directory not being there yet)."""

    @property
    def account_cache(self) -> _Uncounted:
        return self

    @property
    def account_fetch_errors(self) -> _Uncounted:
        return self

    def counter(self, *_labels: Any) -> _Uncounted:
        return self

    def labels(self, *_labels: Any) -> _Uncounted:
        return self

    def inc(self, _amount: float = 1) -> None:
        return None


def account_file_findings(config: Config) -> tuple[list[str], list[str]]:
    """(problems, warnings) of every ``accounts/*.json`` of the filesystem store, one line each.

    Each file goes through the account store as a request would load it, so the lines are the ones
    the server logs: a malformed account, or a Prebid Server value hbserver cannot honour, is a problem;
    an unknown key a warning.
    """
    filesystem = config.stored_requests.filesystem
    folder = os.path.join(filesystem.directorypath, "accounts")
    if not filesystem.enabled or not os.path.isdir(folder):
        return [], []
    from hbserver.stores.accounts import AccountError, AccountStore
    from hbserver.stores.filesystem import MAX_FILE_BYTES

    problems: list[str] = []
    files: dict[str, bytes] = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if not name.endswith(".json") or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            problems.append(f"{path}: cannot read: {exc.strerror or exc}")
            continue
        if len(data) > MAX_FILE_BYTES:
            problems.append(f"{path}: larger than {MAX_FILE_BYTES} bytes")
            continue
        files[name.removesuffix(".json")] = data
    store = AccountStore(config.account_defaults, _Files(files), _Uncounted())  # type: ignore[arg-type]

    async def load_all() -> None:
        for account_id in files:
            try:
                await store.load(account_id)
            except AccountError:
                pass  # malformed: logged (collected below); disabled: a valid account

    collect = _Collect()
    logger = logging.getLogger("hbserver.accounts")
    propagate = logger.propagate
    logger.addHandler(collect)
    logger.propagate = False
    try:
        asyncio.run(load_all())
    finally:
        logger.removeHandler(collect)
        logger.propagate = propagate
    problems.extend(text for is_problem, text in collect.lines if is_problem)
    return problems, [text for is_problem, text in collect.lines if not is_problem]


def _refuse(problems: list[str]) -> int:
    """Print one line per problem and give the exit status of a refused start (2)."""
    sys.stderr.write("".join(f"{line}\n" for line in problems))
    return 2


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # First: without the package's own files (bidder definitions, schemas) no setting can be judged.
    problems = installation_problems()
    if problems:
        return _refuse(problems)
    overrides = {"host": args.host, "port": args.port, "workers": args.workers}
    try:
        config = load_config(args.config, os.environ, overrides)
    except ConfigError as exc:
        return _refuse(exc.problems)
    problems = runtime_problems(config)
    if problems:
        return _refuse(problems)
    if not args.check_config:
        # an account file setting a Prebid Server value hbserver cannot honour stops the start, naming it
        from hbserver.stores.accounts import REFUSED_KEYS

        problems = [line for line in account_file_findings(config)[0] if f" {REFUSED_KEYS}: " in line]
        if problems:
            return _refuse(problems)
    if args.check_config:
        problems, warnings = account_file_findings(config)
        if problems:
            return _refuse(problems + warnings)
        sys.stderr.write("".join(f"{line}\n" for line in warnings))
        sys.stdout.write(dump_yaml(config))
        return 0
    setup_logging(level=logging.getLevelNamesMapping()[config.logging.level.upper()])
    for warning in startup_warnings(config):
        log.warning("%s", warning)

    from hbserver.server import serve

    return serve(config)
