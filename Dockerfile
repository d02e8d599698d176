# hbserver: a slim, non-root image that runs with a read-only root filesystem.
#   docker build -t hbserver:0.1.0 .
#   docker run --read-only -p 8000:8000 hbserver:0.1.0
# Writable paths are the two VOLUMEs below and nothing else. tests/deploy/test_container.py rebuilds
# this layout without Docker (the wheel from the lock into /opt/hbserver, run as uid 10001 with a
# read-only root) and serves an auction from it; hadolint and checkov check this file there.

# --- build: dependencies from the hashed lock, then the hbserver wheel -------------------------
FROM python:3.11.14-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/hbserver
# Dependencies in a layer of their own: a code change does not reinstall them.
COPY requirements/runtime.txt /tmp/runtime.txt
RUN /opt/hbserver/bin/pip install --require-hashes --no-deps -r /tmp/runtime.txt
WORKDIR /src
COPY pyproject.toml README.md ./
COPY hbserver ./hbserver
# The wheel carries the package data (bidder definitions, parameter schemas, helper pages).
RUN /opt/hbserver/bin/pip wheel --no-deps --wheel-dir /tmp/dist . \
 && /opt/hbserver/bin/pip install --no-deps /tmp/dist/hbserver-*.whl

# --- run ------------------------------------------------------------------------------------
FROM python:3.11.14-slim-bookworm
# /version's revision: docker build --build-arg HBSERVER_BUILD_REVISION=$(git rev-parse HEAD) .
ARG HBSERVER_BUILD_REVISION=not-set
ENV HBSERVER_BUILD_REVISION=$HBSERVER_BUILD_REVISION \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/hbserver/bin:$PATH \
    PROMETHEUS_MULTIPROC_DIR=/tmp/hbserver-metrics
# The server's only writable paths, owned by its user: /tmp (Prometheus multiprocess files, made
# at start) and /var/lib/hbserver (point analytics.file.filename here). A named volume mounted on
# /var/lib/hbserver starts as this directory, so it is the server's own, never root's.
RUN groupadd --system --gid 10001 hbserver \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin hbserver \
 && install -d -o hbserver -g hbserver -m 0750 /var/lib/hbserver \
 && install -d -m 0755 /etc/hbserver
COPY --from=build /opt/hbserver /opt/hbserver
WORKDIR /srv/hbserver
# Sample stored data (filesystem backend, read-only to the server); production uses PostgreSQL.
COPY stored_requests ./stored_requests
VOLUME ["/tmp", "/var/lib/hbserver"]
USER 10001:10001
EXPOSE 8000
# Asks /status on the configured port (config file, HBS_PORT or --port alike).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 CMD ["python", "-m", "hbserver.healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["hbserver"]
CMD ["--host", "0.0.0.0", "--port", "8000"]
