"""What every table module shares."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; every time here is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
