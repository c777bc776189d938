"""Configuration: one typed object, read from the environment once and passed in."""

from __future__ import annotations

import secrets
from enum import StrEnum
from pathlib import Path

from pydantic import Field, PrivateAttr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = PROJECT_ROOT / "data"


class RunQueueKind(StrEnum):
    local = "local"  # the sandbox worker's Unix socket on this machine
    fake = "fake"  # scripted runs, for tests of everything around the sandbox
    redis = "redis"  # runner agents on worker hosts, fed through Redis at REDIS_URL


class LogFormat(StrEnum):
    text = "text"  # one readable line per event, for a terminal
    json = "json"  # one JSON object per line, for a log collector


class Environment(StrEnum):
    development = "development"
    production = "production"


class Settings(BaseSettings):
    """Every setting, its default and what it is for; `/docs` and docs/configuration.md list
    them."""

    model_config = SettingsConfigDict(env_file=None, extra="ignore")
    _generated_key: str | None = PrivateAttr(None)  # resolved_secret_key's, once read

    host: str = Field("127.0.0.1", description="Address the web server listens on.")
    port: int = Field(8000, ge=1, le=65535, description="Port the web server listens on.")
    data_dir: Path = Field(
        DEFAULT_DATA_DIR,
        description="Folder for every file the app writes: the SQLite database, the generated "
        "secret key, the sandbox socket and the start-up lock.",
    )
    database_url: str = Field(
        "",
        description="SQLAlchemy URL of the database; a SQLite file in DATA_DIR by default.",
    )
    secret_key: str | None = Field(
        None,
        description="Signs sessions and CSRF tokens. Generated into ./data/secret_key on first "
        "run; required when ENVIRONMENT=production.",
    )
    environment: Environment = Field(
        Environment.development, description="`production` refuses unsafe defaults."
    )
    content_dir: Path = Field(
        PROJECT_ROOT / "content", description="Folder holding the decks as Markdown files."
    )
    import_on_start: bool = Field(
        True, description="Import changed content files when the app starts."
    )
    sandbox_socket: Path = Field(
        Path(""),
        description="Unix socket of the code sandbox worker. `backprop serve` starts the "
        "worker there unless SANDBOX_AUTOSTART is false (a worker on its own host, say).",
    )
    web_user: str = Field(
        "backprop",
        description="When `backprop serve` starts as root: the unprivileged user the web "
        "server runs as (created if missing; it owns DATA_DIR). The sandbox worker alone "
        "stays root.",
    )
    sandbox_autostart: bool = Field(
        True, description="Let `backprop serve` start and stop the sandbox worker."
    )
    keep_sandbox_state: bool = Field(
        False,
        description="Keep the sandbox worker's state folder (its jails' root and compile "
        "cache, about 20 MB, under /run/backprop-sandbox-*) when `backprop serve` stops: the "
        "next start is then a few seconds faster. By default a clean stop removes it.",
    )
    compile_cache_warm: bool = Field(
        True,
        description="Once the sandbox worker `backprop serve` starts is ready, compile every "
        "lab of CONTENT_DIR/labs, then every other sample that calls torch.compile, into the "
        "read-only compile cache each run starts from (a few minutes of CPU in the "
        "background; a sample's first compile then loads in about a second instead of "
        "taking 10-100 s).",
    )
    run_queue: RunQueueKind = Field(
        RunQueueKind.local,
        description="How runs reach a sandbox worker: `local` (the worker at SANDBOX_SOCKET), "
        "`redis` (runner agents on worker hosts, through REDIS_URL) or `fake` (scripted "
        "results, no code runs; for tests only).",
    )
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0",
        description="With RUN_QUEUE=redis: the Redis that carries runs to the runner agents "
        "(`backprop agent`) and their events back (run it with appendonly and noeviction: "
        "deploy/redis.conf).",
    )
    fleet_heartbeat_seconds: float = Field(
        2.0,
        gt=0,
        description="With RUN_QUEUE=redis: how often each replica looks for queued runs missing "
        "from Redis and started runs whose runner is gone. Agents take the same as "
        "--heartbeat-seconds.",
    )
    fleet_lease_seconds: float = Field(
        10.0,
        gt=0,
        description="With RUN_QUEUE=redis: how long an agent, or a replica reading results, may "
        "stay silent before it counts as gone and its runs are taken over (the agents' "
        "--lease-seconds must be the same).",
    )
    fleet_max_wait_seconds: float = Field(
        60.0,
        gt=0,
        description="With RUN_QUEUE=redis: a new run is refused (HTTP 503 with Retry-After) when "
        "the live agents of its pool would take longer than this to reach it.",
    )
    fleet_events_ttl_seconds: int = Field(
        600,
        ge=1,
        description="With RUN_QUEUE=redis: how long a finished run's live events stay in Redis "
        "for a reconnecting browser (the run itself stays in the database).",
    )
    runs_per_minute: int = Field(
        20, ge=1, description="Runs one visitor may start per minute (HTTP 429 beyond)."
    )
    concurrent_runs: int = Field(
        2, ge=1, description="Runs one visitor may have queued or running at once."
    )
    concurrent_runs_per_client: int = Field(
        4,
        ge=1,
        description="Guests' runs one client address may have queued or running at once, however "
        "many visitor cookies it makes (HTTP 429 beyond); a signed-in user's runs count against "
        "the account alone.",
    )
    runs_per_minute_per_client: int = Field(
        40,
        ge=1,
        description="Guests' runs one client address may start per minute (HTTP 429 beyond).",
    )
    streams_per_visitor: int = Field(
        8, ge=1, description="Run event streams one visitor may hold open at once (429 beyond)."
    )
    max_run_body_bytes: int = Field(
        160 * 1024,
        ge=1024,
        description="Largest request body POST /api/runs accepts (HTTP 413 beyond, before the "
        "body is read).",
    )
    max_body_bytes: int = Field(
        64 * 1024,
        ge=1024,
        description="Largest request body any other route accepts (forms, JSON); HTTP 413 beyond.",
    )
    password_check_threads: int = Field(
        2,
        ge=1,
        le=16,
        description="Password hashes (argon2, about 64 MiB and 50 ms each) computed at once, in "
        "the handlers' threads; further checks wait their turn. The first runs at the server's "
        "priority, the others at nice 10.",
    )
    trusted_proxies: str = Field(
        "",
        description="Addresses of reverse proxies whose X-Forwarded-For and X-Forwarded-Proto "
        "headers are believed (uvicorn's forwarded_allow_ips, comma-separated, or `*`). Empty: "
        "the client address is the connection's, and those headers are ignored.",
    )

    log_format: LogFormat = Field(
        LogFormat.text,
        description="`text` or `json`: how log lines are written (stderr). JSON lines carry "
        "`request_id` (also sent back as `X-Request-ID`) and, for a run's events, `run_id`.",
    )

    session_days: int = Field(
        30, ge=1, le=365, description="Days a browser stays signed in (HttpOnly session cookie)."
    )
    token_minutes: int = Field(
        60, ge=1, le=60 * 24 * 30, description="Minutes a bearer token from /api/token is valid."
    )

    @model_validator(mode="after")
    def _defaults_and_safety(self) -> Settings:
        if self.environment is Environment.production and not self.secret_key:
            raise ValueError("SECRET_KEY must be set when ENVIRONMENT=production")
        if self.fleet_lease_seconds <= self.fleet_heartbeat_seconds:
            raise ValueError("FLEET_LEASE_SECONDS must be longer than FLEET_HEARTBEAT_SECONDS")
        # Paths left unset live in the data folder, wherever that is.
        if not self.database_url:
            self.database_url = f"sqlite:///{self.data_dir / 'backprop.db'}"
        if self.sandbox_socket == Path(""):
            self.sandbox_socket = self.data_dir / "sandbox.sock"
        return self

    def resolved_secret_key(self) -> str:
        """The configured key, or one generated once into DATA_DIR/secret_key and reused.
        Read from the file once (at start-up), then kept: requests never wait on the disk."""
        if self.secret_key:
            return self.secret_key
        if self._generated_key is None:
            path = self.data_dir / "secret_key"
            if not path.exists():
                self.data_dir.mkdir(parents=True, exist_ok=True)
                path.write_text(secrets.token_urlsafe(48))
                path.chmod(0o600)
            self._generated_key = path.read_text().strip()
        return self._generated_key
