"""An agent's own Prometheus metrics, served at /metrics on its --metrics-port."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server


class AgentMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.last_beat: float | None = None
        self.taken = Counter(
            "backprop_agent_runs_taken",
            "Jobs this agent took from its pool's stream (each delivery, retries included).",
            registry=self.registry,
        )
        self.running = Gauge(
            "backprop_agent_runs_running",
            "Runs this agent has handed to its worker and not yet seen end.",
            registry=self.registry,
        )
        self.finished = Counter(
            "backprop_agent_runs_finished",
            "Runs this agent reported ended, by verdict.",
            ["verdict"],
            registry=self.registry,
        )
        heartbeat_age = Gauge(
            "backprop_agent_heartbeat_age_seconds",
            "Seconds since this agent last renewed its heartbeat in Redis (-1 before the first).",
            registry=self.registry,
        )
        heartbeat_age.set_function(self.heartbeat_age)

    def beat(self) -> None:
        self.last_beat = time.monotonic()

    def heartbeat_age(self) -> float:
        return -1.0 if self.last_beat is None else time.monotonic() - self.last_beat

    def serve(self, host: str, port: int) -> None:
        """Serve /metrics from a thread of this process."""
        start_http_server(port, addr=host, registry=self.registry)
