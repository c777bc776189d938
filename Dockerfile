# Backprop web app. Every step here is one the project's own scripts run (.ci/setup).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOST=0.0.0.0 \
    PORT=8000

WORKDIR /srv/backprop
RUN useradd --create-home --uid 10001 backprop

COPY pyproject.toml README.md ./
COPY .ci/setup .ci/setup
COPY app app
COPY sandbox sandbox
COPY templates templates
COPY static static
COPY content content
RUN .ci/setup && chown -R backprop:backprop /srv/backprop

USER backprop
EXPOSE 8000
# The database lives in ./data (mount a volume there to keep it); migrations and the content
# import run at start-up. In production set ENVIRONMENT=production and SECRET_KEY.
VOLUME ["/srv/backprop/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"
CMD [".venv/bin/backprop", "serve"]
