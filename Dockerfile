# Backprop's images, one target each (docker compose builds all three: compose.yaml):
#   web          the web app, and the runner agent (`backprop agent`); no PyTorch
#   worker-cpu   the sandbox worker with PyTorch's CPU build and a C++ compiler (torch.compile)
#   worker-cuda  the sandbox worker with PyTorch's CUDA build, for a host with an NVIDIA GPU
# `docker build .` builds `web`, the last target. For the app on one machine with its own
# sandbox, the Quick start (.ci/serve) is simpler than any of these.

FROM python:3.11-slim AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /srv/backprop
RUN groupadd --gid 10001 backprop && useradd --uid 10001 --gid 10001 --no-create-home backprop
COPY pyproject.toml README.md ./
COPY app app
COPY sandbox sandbox
COPY templates templates
COPY static static
COPY content content
COPY deploy deploy

# The sandbox worker: root inside its container (it builds a jail per run: namespaces, mounts,
# cgroups); every run is an unprivileged user with no capabilities. Its socket is shared with
# the agent's container through a volume, readable by group 10001 only.
FROM base AS worker-cpu
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends g++ \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv .venv \
    && .venv/bin/pip install --quiet --extra-index-url https://download.pytorch.org/whl/cpu \
       -e ".[sandbox]"
ENTRYPOINT ["deploy/worker-entrypoint.sh"]

FROM base AS worker-cuda
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends g++ \
    && rm -rf /var/lib/apt/lists/*
# PyPI's torch wheels are CUDA builds that bring their CUDA libraries; the host's driver comes
# in through the NVIDIA container toolkit (compose.yaml's `gpus`).
RUN python -m venv .venv && .venv/bin/pip install --quiet -e ".[sandbox]"
ENTRYPOINT ["deploy/worker-entrypoint.sh"]

FROM base AS web
RUN python -m venv .venv && .venv/bin/pip install --quiet -e . \
    && mkdir -p data && chown backprop:backprop data
ENV PATH=/srv/backprop/.venv/bin:$PATH \
    HOST=0.0.0.0 \
    PORT=8000 \
    SANDBOX_AUTOSTART=false
USER backprop
EXPOSE 8000
# With SQLite (the default) the database lives in ./data: mount a volume there. With
# DATABASE_URL=postgresql+psycopg://..., replicas keep nothing locally. Migrations and the
# content import run at start-up, one replica at a time. In production set ENVIRONMENT and
# SECRET_KEY.
VOLUME ["/srv/backprop/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"
CMD ["backprop", "serve"]
