# syntax=docker/dockerfile:1
# threadsage: one image for every process of the stack — `serve` (the default), `worker`,
# `ingest`, `search`, `prune` — see docker-compose.yml and docs/operations.md, "Deployment".
# Dependencies are pinned in deploy/requirements.lock (regenerate with `make lock`).

# --- build: a virtualenv with the locked dependencies and the package --------------------------
FROM python:3.11-slim AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src

# The lock alone first, so this layer is rebuilt only when the dependencies change.
COPY deploy/requirements.lock deploy/requirements.lock
RUN pip install --no-cache-dir -r deploy/requirements.lock

# The package itself, without resolving anything; `pip check` fails the build when the lock no
# longer satisfies pyproject.toml.
COPY pyproject.toml README.md ./
COPY threadsage ./threadsage
RUN pip install --no-cache-dir --no-deps . && pip check

# --- runtime -----------------------------------------------------------------------------------
FROM python:3.11-slim

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    THREADSAGE_DATA_DIR=/data \
    THREADSAGE_HTTP_PORT=8080

# OpenCV (under the screenshots' OCR, adapters/documents/images.py) loads libGL and GLib, which slim lacks.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgl1 libglib2.0-0 \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 threadsage \
    && useradd --system --uid 10001 --gid threadsage --create-home --home-dir /home/threadsage \
        --shell /usr/sbin/nologin threadsage \
    && mkdir -p /data \
    && chown threadsage:threadsage /data

# Code and dependencies stay owned by root: the service user can read them, not change them.
COPY --from=build /opt/venv /opt/venv

WORKDIR /home/threadsage
USER 10001:10001

EXPOSE 8080

# Liveness of the HTTP server that `serve` and `worker` both run (slim has no curl).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('THREADSAGE_HTTP_PORT', '8080'), timeout=4)"]

ENTRYPOINT ["threadsage"]
CMD ["serve"]
