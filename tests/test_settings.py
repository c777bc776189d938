"""Settings: safe defaults, refused unsafe ones, every one documented."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.settings import PROJECT_ROOT, Settings


def test_defaults_serve_locally_with_sqlite_under_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)  # the PostgreSQL test pass sets it
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (s.host, s.port) == ("127.0.0.1", 8000)
    assert s.database_url.startswith("sqlite:///") and "/data/" in s.database_url


def test_environment_variables_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "9001")
    monkeypatch.setenv("DATABASE_URL", "sqlite:///elsewhere.db")
    s = Settings()
    assert s.port == 9001 and s.database_url == "sqlite:///elsewhere.db"


def test_production_refuses_to_start_without_a_secret_key() -> None:
    with pytest.raises(ValidationError, match="SECRET_KEY"):
        Settings(environment="production")  # type: ignore[arg-type]
    assert Settings(environment="production", secret_key="x" * 32).secret_key  # type: ignore[arg-type]


def test_bad_port_is_refused() -> None:
    with pytest.raises(ValidationError):
        Settings(port=70000)


def test_every_setting_is_documented_in_docs_configuration() -> None:
    page = (PROJECT_ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name, field in Settings.model_fields.items():
        assert f"`{name.upper()}`" in page, f"{name.upper()} is not in docs/configuration.md"
        assert field.description, f"{name} has no description"
