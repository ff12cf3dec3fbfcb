"""Shared set-up for the MCP server tests: the built `switchboard` binary, a config
of demo agents (one of which delegates further) and a subprocess agent that can be
watched being ended, in a fresh folder per test."""

import json
import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"

# A subprocess agent that runs until it is ended: it records its pid, prints a
# line every 50 ms, and notes a clean exit when it gets SIGTERM.
SLOW_AGENT = """#!/bin/sh
echo $$ > "$1/slow.pid"
trap 'echo terminated > "$1/slow.exit"; exit 0' TERM
i=0
while [ $i -lt 1200 ]; do echo "working $i"; i=$((i+1)); sleep 0.05; done
"""


def config_for(folder: pathlib.Path) -> dict:
    return {
        "primary": "assistant",
        # An MCP call stands where a model's call would (depth 1): depth 2 lets
        # the planner delegate once more.
        "limits": {"max_depth": 2},
        "agents": [
            {"name": "assistant", "provider": "demo", "model": "demo-planner"},
            {
                "name": "planner",
                "provider": "demo",
                "model": "demo-planner",
                "delay_ms": 5,
                "tools": [
                    {"agent": "researcher", "description": "Looks things up.", "approval": "auto"},
                    {"agent": "slow", "description": "Not for the planner.", "enabled": False},
                    {"agent": "quiet", "description": "Not for the planner.", "enabled": False},
                ],
            },
            {
                "name": "researcher",
                "provider": "demo",
                "model": "demo-researcher",
                "delay_ms": 5,
                "prices": {"input_per_million": 3.0, "output_per_million": 15.0},
                # A leaf: it calls no one.
                "tools": [
                    {"agent": "planner", "description": "-", "enabled": False},
                    {"agent": "slow", "description": "-", "enabled": False},
                    {"agent": "quiet", "description": "-", "enabled": False},
                ],
            },
            {
                "name": "slow",
                "provider": "subprocess",
                "command": "/bin/sh",
                "args": [str(folder / "slow.sh"), str(folder)],
                "request_via": "stdin",
            },
            {
                "name": "quiet",
                "provider": "subprocess",
                "command": "/bin/sh",
                "args": ["-c", "sleep 2.5; echo done"],
                "request_via": "stdin",
            },
        ],
        "agent_tools": [
            {"agent": "planner", "description": "Plans work with a researcher's help.", "approval": "auto"},
            {"agent": "researcher", "description": "Research agent: returns findings.", "approval": "ask"},
            {"agent": "slow", "description": "A slow worker.", "approval": "auto"},
            {"agent": "quiet", "description": "Works in silence.", "approval": "auto"},
        ],
    }


class Workspace:
    def __init__(self, folder: pathlib.Path):
        self.folder = folder
        self.config_path = folder / "config.json"
        (folder / "slow.sh").write_text(SLOW_AGENT)
        self.write(config_for(folder))

    def write(self, config: dict) -> None:
        # As an editor saves: a new file renamed over the old one.
        staging = self.folder / "config.json.new"
        staging.write_text(json.dumps(config, indent=2))
        os.replace(staging, self.config_path)

    def config(self) -> dict:
        return json.loads(self.config_path.read_text())

    def command(self, *extra: str) -> list[str]:
        return [str(BINARY), "--config", str(self.config_path), "mcp", *extra]

    def env(self) -> dict:
        return {"HOME": str(self.folder), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@pytest.fixture
def workspace(tmp_path):
    if not BINARY.exists():
        pytest.fail(f"{BINARY} is missing: build it with `cargo build -p switchboard-cli`")
    return Workspace(tmp_path)


def node22() -> str:
    """The node 22 binary the npm package `node@22` provides (tests/peers)."""
    found = ROOT / "tests" / "peers" / "node_modules" / "node" / "bin" / "node"
    return str(found) if found.exists() else shutil.which("node")
