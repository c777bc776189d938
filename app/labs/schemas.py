"""The labs in the JSON API: what each times, and what it measured on which device."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.labs.labs import Measured


class MeasurementPublic(BaseModel):
    """One eager-versus-compiled comparison a run of the unedited lab printed."""

    label: str
    device: str
    verdict: str = Field(description="faster, slower, no significant difference, inconclusive")
    speedup: float = Field(description="Eager median / compiled median; read it with the spread.")
    eager_ms: float
    compiled_ms: float
    measured_at: datetime
    result: dict[str, Any] = Field(
        description="The harness's whole result: medians, spreads, rounds, compile time, the "
        "correctness check and the receipt (device, versions, threads, shapes, method, date)."
    )

    @classmethod
    def of(cls, m: Measured) -> MeasurementPublic:
        return cls(
            label=m.label,
            device=m.device,
            verdict=m.verdict,
            speedup=m.speedup,
            eager_ms=m.eager_ms,
            compiled_ms=m.compiled_ms,
            measured_at=m.measured_at,
            result=m.result,
        )


class LabPublic(BaseModel):
    slug: str
    title: str
    measures: list[str] = Field(description="Slugs of the items whose claims this lab times.")
    measurements: list[MeasurementPublic] = Field(
        description="The kept measurements, newest first per device."
    )


class LabRunCreate(BaseModel):
    backend: Literal["cpu", "cuda", "auto"] = "auto"
