"""`switchboard mcp` used by the real agent CLIs users connect to it, offline
against aimock: Claude Code 2.1.197, Gemini CLI 0.61.0 and Qwen Code 0.15.10 (from
tests/peers), each set up the way a user would, by `switchboard mcp connect
CLIENT --write` into its own config (beside its offline settings), over stdio and
over the streamable HTTP endpoint. The client's model calls `agent_echo`; the
model's next request carries the echo agent's answer (aimock answers that request
with a confirmation only when the tool result contains the answer, and with
"NO ANSWER" otherwise), and Claude Code's tool result carries the usage. Codex
0.171.0 the same way, its model a scripted Responses server (responses_server.py:
Codex calls MCP tools only in their namespace, which aimock cannot emit), whose
recorded request bodies show what Codex handed its model."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from aimock_peer import aimock
from loopback import free_port, wait_for_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"
PEERS = ROOT / "tests" / "peers" / "node_modules" / ".bin"
WAIT = 120
ANSWER = "Echo: ping, from the echo agent."

# Each client names the tool its own way.
TOOL = {
    "claude-code": "mcp__switchboard__agent_echo",
    "gemini": "mcp_switchboard_agent_echo",
    "qwen": "mcp__switchboard__agent_echo",
}


def fixtures() -> dict:
    listed = []
    for client, tool in TOOL.items():
        model = f"{client}-m"
        listed += [
            {
                "match": {"model": model, "toolResultContains": ANSWER},
                "response": {"content": "The echo agent said ping."},
            },
            {
                "match": {"model": model, "hasToolResult": True},
                "response": {"content": "NO ANSWER in the tool result."},
            },
            {
                "match": {"model": model, "hasToolResult": False},
                "response": {"toolCalls": [{"id": "call_echo", "name": tool, "arguments": {"request": "ping"}}]},
            },
        ]
    listed.append(
        {
            "match": {"model": "echo-m"},
            "response": {"content": ANSWER, "usage": {"input_tokens": 120, "output_tokens": 8}},
        }
    )
    return {"fixtures": listed}


class World:
    """One client's HOME, working folder and Switchboard config."""

    def __init__(self, folder: pathlib.Path, model_base: str):
        self.home = folder / "home"
        self.work = folder / "work"
        self.work.mkdir(parents=True)
        self.home.mkdir()
        self.config = folder / "switchboard.json"
        config = {
            "primary": "echo",
            "agents": [{"name": "echo", "provider": "local", "url": model_base, "model": "echo-m"}],
            "agent_tools": [{"agent": "echo", "description": "Echoes what it is sent.", "approval": "auto"}],
        }
        self.config.write_text(json.dumps(config))
        self.model_base = model_base
        # What a user of each client keeps in its settings to run it here.
        self.settings(
            ".gemini/settings.json",
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "telemetry": {"enabled": False},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            },
        )
        self.settings(
            ".qwen/settings.json",
            {
                "security": {"auth": {"selectedType": "openai"}},
                "telemetry": {"enabled": False},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"disableAutoUpdate": True},
                "memory": {"enableManagedAutoMemory": False},
            },
        )

    def settings(self, relative: str, value: dict) -> None:
        path = self.home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))

    def environment(self) -> dict:
        return {
            "PATH": f"{PEERS}:{os.environ['PATH']}",
            "HOME": str(self.home),
            "TMPDIR": str(self.home),
            "ANTHROPIC_BASE_URL": self.model_base,
            "ANTHROPIC_API_KEY": "test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "GEMINI_API_KEY": "test-key",
            "GOOGLE_GEMINI_BASE_URL": self.model_base,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "OPENAI_BASE_URL": f"{self.model_base}/v1",
            "OPENAI_API_KEY": "test-key",
        }

    def connect(self, client: str, *extra: str) -> str:
        """`switchboard mcp connect CLIENT --write`, as a user runs it in the project folder."""
        done = subprocess.run(
            [str(BINARY), "--config", str(self.config), "mcp", "connect", client, "--write", *extra],
            cwd=self.work,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def run_client(self, client: str) -> subprocess.CompletedProcess:
        prompt = "Ask the echo agent to say ping."
        model = f"{client}-m"
        program = {
            "claude-code": [
                "claude",
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                model,
                "--allowedTools",
                TOOL[client],
                "--",
                prompt,
            ],
            "gemini": ["gemini", "-m", model, "-o", "stream-json", f"--prompt={prompt}"],
            "qwen": ["qwen", "--model", model, "--output-format", "stream-json", f"--prompt={prompt}"],
        }[client]
        return subprocess.run(
            program,
            cwd=self.work,
            env=self.environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WAIT,
        )


def lines(stdout: str) -> list:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def final_text(client: str, stdout: str) -> str:
    events = lines(stdout)
    if client == "gemini":
        return "".join(
            e.get("content", "") for e in events if e.get("type") == "message" and e.get("role") == "assistant"
        )
    return next((e.get("result") or "" for e in events if e.get("type") == "result"), "")


@pytest.fixture(scope="module")
def model():
    with aimock(fixtures()) as base:
        yield base


@pytest.fixture
def http_server(tmp_path):
    """`switchboard mcp --http` on a free loopback port, for `world`; yields its URL."""
    started = []

    def start(world: World) -> str:
        port = free_port()
        process = subprocess.Popen(
            [str(BINARY), "--config", str(world.config), "mcp", "--http", f"127.0.0.1:{port}"],
            env={"PATH": os.environ["PATH"], "HOME": str(world.home)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        wait_for_port(port, process, "switchboard mcp --http")
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("client", ["claude-code", "gemini", "qwen"])
def test_a_real_client_calls_a_tool_agent_and_its_model_reads_the_answer(
    client, transport, model, http_server, tmp_path
):
    world = World(tmp_path, model)
    extra = ("--url", http_server(world)) if transport == "http" else ()
    said = world.connect(client, *extra)
    assert "switchboard" in said
    if client != "claude-code":
        # The client's own settings were kept beside the new entry.
        settings = json.loads(
            (world.home / f".{'gemini' if client == 'gemini' else 'qwen'}" / "settings.json").read_text()
        )
        assert "switchboard" in settings["mcpServers"] and settings["security"]["auth"]["selectedType"]
    finished = world.run_client(client)
    text = final_text(client, finished.stdout)
    assert "NO ANSWER" not in text, (
        f"{client} over {transport}: its model never saw the answer\n{finished.stdout[-3000:]}"
    )
    assert text == "The echo agent said ping.", f"{client} over {transport}: {text!r}\n{finished.stderr[-2000:]}"
    if client == "claude-code":
        # What Claude Code handed its model: the structured result, answer and usage in it.
        results = [
            block
            for event in lines(finished.stdout)
            if event.get("type") == "user"
            for block in event["message"]["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        handed = json.dumps(results)
        assert ANSWER in handed and "total_tokens" in handed, handed[:2000]


# The offline switches every Codex config in the tests has, with the scripted
# server as its model provider.
CODEX_PROVIDER = """model = "codex-m"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{base}/v1"
env_key = "SCRIPTED_KEY"
wire_api = "responses"
"""
CODEX_OFFLINE = (ROOT / "tests" / "peers" / "codex-offline.toml").read_text()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_codex_calls_a_tool_agent_in_its_namespace_and_its_model_reads_the_answer(
    transport, model, http_server, tmp_path
):
    world = World(tmp_path, model)
    port = free_port()
    bodies = tmp_path / "bodies.jsonl"
    server = subprocess.Popen(
        [sys.executable, str(pathlib.Path(__file__).with_name("responses_server.py")), str(port), str(bodies), ANSWER]
    )
    try:
        wait_for_port(port, server, "the scripted Responses server")
        # Codex refuses to make its helpers under the system's temporary folder.
        codex_home = ROOT / "target" / f"codex-home-{transport}-{os.getpid()}"
        shutil.rmtree(codex_home, ignore_errors=True)
        codex_home.mkdir(parents=True)
        provider = CODEX_PROVIDER.format(base=f"http://127.0.0.1:{port}")
        # Top-level keys first, then every table.
        top, tables = provider.split("\n\n", 1)
        (codex_home / "config.toml").write_text(f"{top}\n{CODEX_OFFLINE}\n{tables}")
        extra = ("--url", http_server(world)) if transport == "http" else ()
        connect = subprocess.run(
            [str(BINARY), "--config", str(world.config), "mcp", "connect", "codex", "--write", *extra],
            env={**world.environment(), "CODEX_HOME": str(codex_home)},
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert connect.returncode == 0, connect.stderr
        written = (codex_home / "config.toml").read_text()
        assert 'default_tools_approval_mode = "approve"' in written and 'model_provider = "scripted"' in written
        finished = subprocess.run(
            ["codex", "exec", "--json", "--skip-git-repo-check", "Ask the echo agent to say ping."],
            cwd=world.work,
            env={**world.environment(), "CODEX_HOME": str(codex_home), "SCRIPTED_KEY": "test-key"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        messages = [
            event["item"]["text"]
            for event in lines(finished.stdout)
            if event.get("type") == "item.completed" and event["item"].get("type") == "agent_message"
        ]
        assert messages and messages[-1] == "The echo agent said ping.", (
            f"{finished.stdout[-3000:]}\n{finished.stderr[-2000:]}"
        )
        handed = [json.loads(line) for line in bodies.read_text().splitlines()]
        outputs = [
            item for body in handed for item in body.get("input", []) if item.get("type") == "function_call_output"
        ]
        assert outputs and ANSWER in json.dumps(outputs), "the model's next request carries the answer"
        assert "usage_total" in json.dumps(outputs), "and the call's usage"
        shutil.rmtree(codex_home, ignore_errors=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
