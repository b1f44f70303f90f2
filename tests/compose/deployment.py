"""A compose project of the smoke tests: `docker compose` on the repository's files under a
project name of its own (so a developer's own deployment is left alone), on a free host port."""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import socket
import subprocess
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from orquestra.client import Client

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "compose-smoke-admin-token"
# Business time of the smoke tests' turns (a Monday; the trial classes are on Tuesdays).
START = datetime.fromisoformat("2026-06-01T10:00:00-03:00")


def say(client: Client, conversation: str, text: str, at: datetime) -> dict[str, Any]:
    """Post one message and return the turn's reply (long-polling for it)."""
    _, cursor = client.replies(conversation)
    client.post(conversation, text, sent_at=at)
    replies, _ = client.replies(conversation, after=cursor, wait_s=60)
    assert replies, f"{conversation}: no reply to {text!r}"
    return replies[0]


def engine_problem() -> str | None:
    """Why these tests cannot run here (None: they can)."""
    if os.environ.get("ORQ_COMPOSE") != "1":
        return "builds images and starts containers: run with ORQ_COMPOSE=1"
    if not shutil.which("docker"):
        return "no docker command"
    for probe in (["docker", "info"], ["docker", "compose", "version"]):
        done = subprocess.run(probe, capture_output=True, text=True)
        if done.returncode != 0:
            return f"{' '.join(probe)}: {done.stderr.strip()[:200]}"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_net() -> str:
    """The first three numbers of a /24 no Docker network of this engine uses (CLUSTER_NET)."""
    names = subprocess.run(
        ["docker", "network", "ls", "-q"], capture_output=True, text=True, check=True
    ).stdout.split()
    taken = []
    for name in names:
        inspected = subprocess.run(
            ["docker", "network", "inspect", name], capture_output=True, text=True, check=True
        ).stdout
        for network in json.loads(inspected):
            for pool in (network.get("IPAM") or {}).get("Config") or []:
                if "Subnet" in pool:
                    taken.append(ipaddress.ip_network(pool["Subnet"]))
    for third in range(60, 250):
        candidate = ipaddress.ip_network(f"172.30.{third}.0/24")
        if not any(candidate.overlaps(used) for used in taken):
            return f"172.30.{third}"
    raise RuntimeError("no free 172.30.x.0/24 for the cluster's network")


@dataclass
class Deployment:
    file: str
    project: str = field(default_factory=lambda: f"orqsmoke-{uuid.uuid4().hex[:8]}")
    port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "ORQ_ADMIN_TOKEN": TOKEN,
            "GATEWAY_PORT": str(self.port),
            **self.extra_env,
        }

    def compose(self, *args: str, timeout: float = 900) -> str:
        command = ["docker", "compose", "-p", self.project, "-f", self.file, *args]
        done = subprocess.run(
            command, cwd=ROOT, env=self.env(), capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise AssertionError(f"{' '.join(command)}: {done.returncode}\n{done.stderr[-3000:]}")
        return done.stdout

    def up(self, *args: str) -> None:
        """Start (or update) and return once every service is healthy (and the cluster's init
        step has finished): compose awaits the health checks itself."""
        self.compose("up", "-d", "--wait", "--wait-timeout", "300", *args)

    def containers(self) -> list[dict[str, str]]:
        lines = self.compose("ps", "--all", "--format", "json").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def of(self, service: str) -> list[str]:
        return [c["Name"] for c in self.containers() if c["Service"] == service]

    def zombies(self) -> dict[str, list[str]]:
        """Zombie processes in each running container (``docker top``: state Z)."""
        found: dict[str, list[str]] = {}
        for container in self.containers():
            if container["State"] != "running":
                continue
            top = subprocess.run(
                ["docker", "top", container["Name"], "-eo", "pid,stat,comm"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.splitlines()[1:]
            dead = [row for row in top if row.split()[1].startswith("Z")]
            if dead:
                found[container["Name"]] = dead
        return found

    def down(self, *args: str) -> None:
        self.compose("down", "--remove-orphans", *args)
