"""Attempts counted against rate limits, kept where every web replica sees them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, Index, Integer
from sqlmodel import Field, SQLModel

# A 64-bit id on PostgreSQL (hits come and go, and a sequence never goes back); SQLite's
# 64-bit rowid is only an INTEGER PRIMARY KEY.
HIT_ID = BigInteger().with_variant(Integer(), "sqlite")


class LimitHit(SQLModel, table=True):
    """One attempt (a run started, a password checked) counted by a sliding window."""

    id: int | None = Field(default=None, sa_column=Column(HIT_ID, primary_key=True))
    # sha256 of the window's name and the key it counts (a client's address, an account):
    # one length for every key, and no address kept in the clear.
    key_sha256: str = Field(max_length=64)
    at: datetime  # by the database's clock (app.db.database_now)
    expires_at: datetime = Field(index=True)  # when it leaves its window: then it is swept

    __table_args__ = (Index("ix_limithit_key_sha256_at", "key_sha256", "at"),)
