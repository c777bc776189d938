"""exercise.yml, read and checked: the exercise's metadata and how it is graded (content/
README.md, "exercise.yml"). It travels to the grader's jail as JSON (`Config.to_json`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sandbox.grading.compare import Tolerance

KEYS = {"slug", "title", "topic", "difficulty", "items", "entry_point"}
OPTIONAL_KEYS = {
    "tolerances",
    "forbid",
    "forbid_reason",
    "side_effects",
    "may_alias",
    "inputs_without_grad",
    "no_sequence",
    "performance",
    "call_seconds",
    "backends",
}
DIFFICULTIES = ("easy", "medium", "hard")
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")


class ExerciseError(ValueError):
    """An exercise folder that breaks the format; the message names the file and the rule."""


@dataclass(frozen=True)
class Config:
    """exercise.yml, checked. Travels to the grader as JSON (`to_json`)."""

    slug: str
    title: str
    topic: str
    difficulty: str
    items: list[str]
    entry_point: str
    tolerances: dict[str, dict[str, Tolerance]] = field(default_factory=dict)
    forbid: list[str] = field(default_factory=list)
    forbid_reason: str = ""
    # Targets whose contract is to change what they are given (a `fill_` initialiser, an
    # in-place clip), each with the reason: the default side-effect checks spare them.
    side_effects: dict[str, str] = field(default_factory=dict)
    # Targets whose answer may share memory with an argument (a gradient passed through).
    may_alias: dict[str, str] = field(default_factory=dict)
    # Why an object's inputs never arrive requiring grad (that default check is skipped).
    inputs_without_grad: str = ""
    # Why an object target needs no sequence() test (its one method keeps no state).
    no_sequence: str = ""
    performance: dict[str, Any] = field(default_factory=dict)
    call_seconds: float = 10.0
    backends: list[str] = field(default_factory=lambda: ["cpu", "cuda"])

    @classmethod
    def from_json(cls, data: Any, where: str = "exercise.yml") -> Config:
        if not isinstance(data, dict):
            raise ExerciseError(f"{where}: must be a mapping")
        missing, unknown = KEYS - set(data), set(data) - KEYS - OPTIONAL_KEYS
        if missing or unknown:
            raise ExerciseError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")
        if not isinstance(data["slug"], str) or not SLUG.match(data["slug"]):
            raise ExerciseError(f"{where}: slug must be lowercase letters, digits, hyphens")
        if data["difficulty"] not in DIFFICULTIES:
            raise ExerciseError(f"{where}: difficulty must be one of {DIFFICULTIES}")
        for key in ("title", "topic", "entry_point"):
            if not isinstance(data[key], str) or not data[key].strip():
                raise ExerciseError(f"{where}: {key} must be text")
        items, forbid = data["items"], data.get("forbid", [])
        if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
            raise ExerciseError(f"{where}: items must list the Q&A item slugs it drills")
        if not isinstance(forbid, list) or not all(isinstance(f, str) for f in forbid):
            raise ExerciseError(f"{where}: forbid must be a list of names")
        reason = data.get("forbid_reason", "")
        if not isinstance(reason, str) or bool(forbid) != bool(reason.strip()):
            raise ExerciseError(
                f"{where}: forbid_reason says in a sentence why the forbid list is forbidden "
                "(given exactly when forbid is)"
            )
        side_effects = _reasons(data.get("side_effects"), where, "side_effects")
        may_alias = _reasons(data.get("may_alias"), where, "may_alias")
        without_grad = data.get("inputs_without_grad", "")
        if not isinstance(without_grad, str):
            raise ExerciseError(f"{where}: inputs_without_grad is the reason, in a sentence")
        no_sequence = data.get("no_sequence", "")
        if not isinstance(no_sequence, str):
            raise ExerciseError(f"{where}: no_sequence is the reason, in a sentence")
        performance = data.get("performance") or {}
        # ignore_load: the grader's own tests time on any machine (perf.machine_busy).
        if not isinstance(performance, dict) or set(performance) - {
            "graded",
            "max_ratio",
            "ignore_load",
        }:
            raise ExerciseError(f"{where}: performance takes graded, max_ratio and ignore_load")
        backends = data.get("backends", ["cpu", "cuda"])
        if not isinstance(backends, list) or not set(backends) <= {"cpu", "cuda"} or not backends:
            raise ExerciseError(f"{where}: backends is a list of cpu and cuda")
        return cls(
            slug=data["slug"],
            title=data["title"],
            topic=data["topic"],
            difficulty=data["difficulty"],
            items=items,
            entry_point=data["entry_point"],
            tolerances=_tolerances(data.get("tolerances") or {}, where),
            forbid=forbid,
            forbid_reason=reason.strip(),
            side_effects=side_effects,
            may_alias=may_alias,
            inputs_without_grad=without_grad.strip(),
            no_sequence=no_sequence.strip(),
            performance=performance,
            call_seconds=float(data.get("call_seconds", 10.0)),
            backends=backends,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "title": self.title,
            "topic": self.topic,
            "difficulty": self.difficulty,
            "items": self.items,
            "entry_point": self.entry_point,
            "tolerances": {
                dtype: {dev: {"atol": t.atol, "rtol": t.rtol} for dev, t in per.items()}
                for dtype, per in self.tolerances.items()
            },
            "forbid": self.forbid,
            "forbid_reason": self.forbid_reason,
            "side_effects": self.side_effects,
            "may_alias": self.may_alias,
            "inputs_without_grad": self.inputs_without_grad,
            "no_sequence": self.no_sequence,
            "performance": self.performance,
            "call_seconds": self.call_seconds,
            "backends": self.backends,
        }


def _reasons(data: Any, where: str, key: str) -> dict[str, str]:
    """{target: the reason the default check spares it}."""
    data = data or {}
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in data.items()
    ):
        raise ExerciseError(f"{where}: {key} maps a target to the reason it is spared")
    return {k: v.strip() for k, v in data.items()}


def _tolerances(data: Any, where: str) -> dict[str, dict[str, Tolerance]]:
    """{dtype: {device: {atol, rtol}}}."""
    out: dict[str, dict[str, Tolerance]] = {}
    if not isinstance(data, dict):
        raise ExerciseError(f"{where}: tolerances must be a mapping")
    for dtype, per_device in data.items():
        if dtype not in ("float16", "bfloat16", "float32", "float64"):
            raise ExerciseError(f"{where}: tolerances for unknown dtype {dtype!r}")
        if not isinstance(per_device, dict) or not set(per_device) <= {"cpu", "cuda"}:
            raise ExerciseError(f"{where}: tolerances.{dtype} maps cpu / cuda to atol, rtol")
        out[dtype] = {}
        for device, tol in per_device.items():
            if not isinstance(tol, dict) or set(tol) != {"atol", "rtol"}:
                raise ExerciseError(f"{where}: tolerances.{dtype}.{device} needs atol and rtol")
            out[dtype][device] = Tolerance(float(tol["atol"]), float(tol["rtol"]))
    return out
