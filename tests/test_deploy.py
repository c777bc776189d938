"""The deployment files say what docs/deploy.md promises: each part where it belongs, with
only what it needs. Docker is not available where the tests run, so these read the files;
the commands they hold are checked against the real parsers of `backprop agent` and
`python -m sandbox`."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from typing import Any

import yaml

from app.agent import cli as agent_cli
from app.settings import PROJECT_ROOT

COMPOSE: dict[str, Any] = yaml.safe_load((PROJECT_ROOT / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
SANDBOXES = ("sandbox-cpu", "sandbox-cuda")
AGENTS = ("agent-cpu", "agent-cuda")


def test_the_set_up_has_every_part_the_fleet_needs() -> None:
    assert set(SERVICES) == {
        "lb", "web1", "web2", "postgres", "redis", *SANDBOXES, *AGENTS
    }  # fmt: skip
    for web in ("web1", "web2"):
        env = SERVICES[web]["environment"]
        assert env["RUN_QUEUE"] == "redis" and env["DATABASE_URL"].startswith("postgresql+psycopg")
        assert env["ENVIRONMENT"] == "production" and env["LOG_FORMAT"] == "json"


def test_the_gpu_parts_start_only_with_the_gpu_profile() -> None:
    with_profile = {name for name, s in SERVICES.items() if s.get("profiles")}
    assert with_profile == {"sandbox-cuda", "agent-cuda"}
    assert all(SERVICES[n]["profiles"] == ["gpu"] for n in with_profile)
    devices = SERVICES["sandbox-cuda"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}]


def test_sandboxes_have_no_network_and_only_the_capabilities_they_need() -> None:
    for name in SANDBOXES:
        sandbox = SERVICES[name]
        assert sandbox["network_mode"] == "none"
        assert not sandbox.get("privileged") and sandbox["cap_drop"] == ["ALL"]
        assert "SYS_ADMIN" in sandbox["cap_add"] and "NET_ADMIN" not in sandbox["cap_add"]
        assert "seccomp=unconfined" not in sandbox.get("security_opt", [])


def test_agents_know_redis_and_the_socket_but_not_the_database() -> None:
    for name in AGENTS:
        agent = SERVICES[name]
        assert not {"DATABASE_URL", "SECRET_KEY"} & set(agent["environment"])
        assert agent["user"] == "10001:10001"  # the group the worker opens its socket to
        sandbox = "sandbox-" + name.split("-")[1]
        assert agent["volumes"] == SERVICES[sandbox]["volumes"]  # the socket's volume


def test_agent_commands_are_what_backprop_agent_accepts() -> None:
    parser = argparse.ArgumentParser()
    agent_cli.add_arguments(parser)
    for name in AGENTS:
        command = SERVICES[name]["command"]
        assert command[:2] == ["backprop", "agent"]
        args = parser.parse_args(command[2:])
        assert args.pool == name.split("-")[1] and str(args.socket) == "/run/backprop/sandbox.sock"


def test_the_worker_entrypoint_uses_options_the_worker_has() -> None:
    entrypoint = (PROJECT_ROOT / "deploy/worker-entrypoint.sh").read_text()
    used = set(re.findall(r"(--[a-z-]+)", entrypoint.split("-m sandbox", 1)[1]))
    shown = subprocess.run(
        [sys.executable, "-m", "sandbox", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert used and all(option in shown for option in used)
    assert "--client-gid 10001" in entrypoint


def test_redis_keeps_what_it_is_given() -> None:
    conf = (PROJECT_ROOT / "deploy/redis.conf").read_text().splitlines()
    for line in ("appendonly yes", "appendfsync everysec", "maxmemory-policy noeviction"):
        assert line in conf
    assert "/etc/backprop/redis.conf" in SERVICES["redis"]["command"]


def test_the_dockerfile_builds_each_image_compose_names() -> None:
    targets = set(
        re.findall(r"^FROM \S+ AS (\S+)$", (PROJECT_ROOT / "Dockerfile").read_text(), re.M)
    )
    named = {s["build"]["target"] for s in SERVICES.values() if "build" in s}
    assert named == {"web", "worker-cpu", "worker-cuda"} and named <= targets


def test_the_load_balancer_streams_events_and_passes_request_ids() -> None:
    conf = (PROJECT_ROOT / "deploy/nginx.conf").read_text()
    assert "proxy_buffering off;" in conf and "X-Request-ID $request_id" in conf
    assert "server web1:8000" in conf and "server web2:8000" in conf
