"""A shell killed with SIGKILL (no handler of ours runs) takes its agents with
it: a quiet agent (`sleep 600`) and a shell with grandchildren, started by `ask` and
by `switchboard mcp` for a real MCP client, are gone once the shell is killed
(the reaper ends their process groups)."""

import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

from hostile_common import mcp_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"
PYTHON = str(ROOT / ".venv" / "bin" / "python")
WAIT = 60

# Writes its process group, starts two grandchildren and waits on them quietly.
AGENT = (
    'echo $(ps -o pgid= $$) > "$MARK.tmp" && mv "$MARK.tmp" "$MARK"; (sleep 600 & sleep 600 & wait) & sleep 600; wait'
)


def config(folder: pathlib.Path, mark: pathlib.Path) -> pathlib.Path:
    path = folder / "config.json"
    path.write_text(
        json.dumps(
            {
                "primary": "assistant",
                "agents": [
                    {"name": "assistant", "provider": "demo", "model": "demo-planner"},
                    {
                        "name": "sleeper",
                        "provider": "subprocess",
                        "command": "sh",
                        "args": ["-c", AGENT],
                        "env": {"MARK": str(mark)},
                        "timeout_secs": 900,
                    },
                ],
                "agent_tools": [{"agent": "sleeper", "description": "Sleeps.", "approval": "auto"}],
            }
        )
    )
    return path


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(condition, what: str):
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.parametrize("shell", ["ask", "mcp"])
def test_agents_die_with_a_shell_killed_by_sigkill(tmp_path, shell):
    mark = tmp_path / "group"
    path = config(tmp_path, mark)
    base = [str(BINARY), "--config", str(path), "--data-dir", str(tmp_path / "data")]
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    if shell == "ask":
        process = subprocess.Popen(
            [*base, "ask", "go"], env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        victim = process.pid
    else:
        client = mcp_client(tmp_path, "agent_sleeper")
        process = subprocess.Popen(
            [PYTHON, str(client), *base, "mcp"], env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for(lambda: mark.exists(), "the agent did not start")
        victim = int(
            subprocess.run(
                ["pgrep", "-P", str(process.pid), "-f", "switchboard"], capture_output=True, text=True
            ).stdout.split()[0]
        )
    wait_for(lambda: mark.exists(), "the agent did not start")
    group = int(mark.read_text())
    assert group_alive(group)
    os.kill(victim, signal.SIGKILL)
    try:
        wait_for(lambda: not group_alive(group), "the agent's group outlived the killed shell")
    finally:
        if group_alive(group):
            os.killpg(group, signal.SIGKILL)
        process.kill()
        process.wait(timeout=WAIT)
