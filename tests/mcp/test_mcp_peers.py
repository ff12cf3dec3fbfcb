"""`switchboard mcp` against the MCP ecosystem's own tools: the MCP Inspector CLI
(stdio, streamable HTTP, and launched from a Claude Code style `mcpServers` file,
unchanged) and the official conformance suite, whose scenarios that apply must
pass and whose others must fail exactly as `conformance-baseline.yml` says."""

import json
import pathlib
import subprocess

from conftest import ROOT, node22
from test_mcp_server import WAIT, HttpServer

PEERS = ROOT / "tests" / "peers" / "node_modules"
INSPECTOR = PEERS / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js"
CONFORMANCE = PEERS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = pathlib.Path(__file__).with_name("conformance-baseline.yml")


def inspector(*arguments, env=None):
    finished = subprocess.run(
        ["node", str(INSPECTOR), "--cli", *arguments], capture_output=True, text=True, timeout=WAIT * 4, env=env
    )
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout)


def test_the_inspector_lists_and_calls_over_stdio(workspace):
    listed = inspector("--", *workspace.command("--approve", "all"), "--method", "tools/list")
    assert {tool["name"] for tool in listed["tools"]} == {
        "agent_planner",
        "agent_quiet",
        "agent_researcher",
        "agent_slow",
    }
    called = inspector(
        "--",
        *workspace.command("--approve", "all"),
        "--method",
        "tools/call",
        "--tool-name",
        "agent_researcher",
        "--tool-arg",
        "request=otters",
    )
    assert called["isError"] is False
    assert called["structuredContent"]["status"] == "ok"
    assert called["structuredContent"]["usage"]["total_tokens"] > 0
    assert 'agent="researcher"' in called["content"][0]["text"]


def test_the_inspector_cannot_approve_so_the_call_is_denied_with_a_reason(workspace):
    called = inspector(
        "--",
        *workspace.command(),
        "--method",
        "tools/call",
        "--tool-name",
        "agent_researcher",
        "--tool-arg",
        "request=x",
    )
    assert called["isError"] is True and called["structuredContent"]["status"] == "denied"
    assert "does not support MCP elicitation" in called["content"][0]["text"]


def test_the_inspector_over_streamable_http(workspace):
    server = HttpServer(workspace)
    try:
        listed = inspector(server.url, "--transport", "http", "--method", "tools/list")
    finally:
        server.stop()
    assert "agent_planner" in {tool["name"] for tool in listed["tools"]}


def test_a_claude_code_mcp_servers_entry_launches_it_unchanged(workspace):
    """The `mcpServers` format of Claude Code (and the Inspector): a command and args."""
    command = workspace.command("--approve", "all")
    entry = {"mcpServers": {"switchboard": {"command": command[0], "args": command[1:]}}}
    servers = workspace.folder / ".mcp.json"
    servers.write_text(json.dumps(entry, indent=2))
    listed = inspector("--config", str(servers), "--server", "switchboard", "--method", "tools/list")
    assert "agent_researcher" in {tool["name"] for tool in listed["tools"]}


def test_the_conformance_suite_passes_every_scenario_that_applies(workspace):
    server = HttpServer(workspace)
    try:
        finished = subprocess.run(
            [node22(), str(CONFORMANCE), "server", "--url", server.url, "--expected-failures", str(BASELINE)],
            capture_output=True,
            text=True,
            timeout=WAIT * 4,
        )
    finally:
        server.stop()
    summary = [line for line in finished.stdout.splitlines() if line.startswith(("✓", "✗", "Total"))]
    print("\n".join(summary))
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-2000:]
    passed = {line.split()[1].rstrip(":") for line in summary if line.startswith("✓")}
    assert {
        "server-initialize",
        "ping",
        "tools-list",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
    } <= passed
