# hbserver: slim Python image, non-root, health-checked on /status.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY hbserver ./hbserver
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY --from=build /install /usr/local
RUN useradd --system --uid 10001 --home-dir /srv/hbserver --create-home hbserver
WORKDIR /srv/hbserver
COPY --chown=hbserver:hbserver stored_requests ./stored_requests
USER hbserver
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD python -c "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/status', timeout=2).status in (200, 204) else 1)"
STOPSIGNAL SIGTERM
ENTRYPOINT ["hbserver"]
CMD ["--host", "0.0.0.0", "--port", "8000"]
