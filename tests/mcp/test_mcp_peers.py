"""`switchboard mcp` against the MCP ecosystem's own tools: the MCP Inspector CLI
(stdio, streamable HTTP, and launched from a Claude Code style `mcpServers` file,
unchanged) and the official conformance suite: its active scenarios, whose ones
that apply must pass and whose others must fail exactly as
`conformance-baseline.yml` says, and every check MCP 2026-07-28 requires (the
stateless core, HTTP headers, multi round-trip results, the tasks extension),
which must pass but for exactly those `conformance-2026-07-28.txt` names, with why."""

import json
import pathlib
import re
import subprocess

from conftest import ROOT, node22
from test_mcp_server import WAIT, HttpServer

PEERS = ROOT / "tests" / "peers" / "node_modules"
INSPECTOR = PEERS / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js"
CONFORMANCE = PEERS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = pathlib.Path(__file__).with_name("conformance-baseline.yml")
BASELINE_2026 = pathlib.Path(__file__).with_name("conformance-2026-07-28.txt")


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


def fixture_agents() -> tuple[list, list]:
    """Tool-agents standing for the suite's own fixture tools (`greet`,
    `slow_compute`, `failing_job`, `confirm_delete`), served under those names with
    their arguments (an entry's `serve`): small programs that do what each fixture
    is described to do, run as any subprocess agent is."""
    python = str(ROOT / ".venv" / "bin" / "python")

    def program(name: str, script: str) -> dict:
        return {"name": name, "provider": "subprocess", "command": python, "args": ["-c", script]}

    def schema(**properties) -> dict:
        return {"type": "object", "properties": properties, "required": list(properties)}

    agents = [
        program("greeter", "import json,sys; print('Hello, %s!' % json.loads(sys.argv[-1])['name'])"),
        program(
            "computer",
            "import json,sys,time; a=json.loads(sys.argv[-1]); time.sleep(float(a.get('seconds', 0)));"
            " print('computed', a.get('label', ''))",
        ),
        program("failer", "import sys; sys.exit('the job failed')"),
        program("deleter", "import json,sys; print('deleted', json.loads(sys.argv[-1])['filename'])"),
    ]
    entries = [
        {
            "agent": "greeter",
            "description": "Greets by name.",
            "approval": "auto",
            "serve": {"name": "greet", "arguments": schema(name={"type": "string"}), "task": "forbidden"},
        },
        {
            "agent": "computer",
            "description": "Computes for a while.",
            "approval": "auto",
            "serve": {
                "name": "slow_compute",
                "arguments": {
                    "type": "object",
                    "properties": {"seconds": {"type": "number"}, "label": {"type": "string"}},
                },
            },
        },
        {
            "agent": "failer",
            "description": "A job that fails.",
            "approval": "auto",
            "serve": {"name": "failing_job", "arguments": {"type": "object"}, "task": "required"},
        },
        {
            "agent": "deleter",
            "description": "Deletes a file, once confirmed.",
            "approval": "ask",
            "serve": {"name": "confirm_delete", "arguments": schema(filename={"type": "string"})},
        },
    ]
    return agents, entries


def test_every_check_mcp_2026_07_28_requires_passes_but_those_named_with_why(workspace, tmp_path):
    config = workspace.config()
    agents, entries = fixture_agents()
    config["agents"] += agents
    config["agent_tools"] += entries
    workspace.write(config)
    server = HttpServer(workspace)
    try:
        finished = subprocess.run(
            [node22(), str(CONFORMANCE), "server", "--url", server.url, "--requirements", "2026-07-28"]
            + ["--output-dir", str(tmp_path / "results")],
            capture_output=True,
            text=True,
            timeout=WAIT * 4,
        )
    finally:
        server.stop()
    results = sorted((tmp_path / "results").glob("*/checks.json"))
    assert len(results) >= 40, finished.stdout[-3000:] + finished.stderr[-2000:]
    passed, failed = set(), {}
    for result in results:
        scenario = re.sub(r"^server-(.*)-\d{4}-\d\d-\d\dT.*$", r"\1", result.parent.name)
        for check in json.loads(result.read_text()):
            name = f"{scenario} {check['id']}"
            if check["status"] == "SUCCESS":
                passed.add(name)
            elif check["status"] == "FAILURE":
                failed[name] = check.get("errorMessage", "")
    expected = {
        line.strip() for line in BASELINE_2026.read_text().splitlines() if line.strip() and not line.startswith("#")
    }
    print(f"{len(passed)} checks passed, {len(failed)} failed as expected")
    unexpected = {name: why for name, why in failed.items() if name not in expected}
    assert not unexpected, f"checks that fail and are not in {BASELINE_2026.name}: {unexpected}"
    now_passing = expected - set(failed)
    assert not now_passing, f"checks in {BASELINE_2026.name} that no longer fail (take them out): {now_passing}"
    # What this server does for 2026-07-28 clients, checked by name.
    assert {
        "server-stateless sep-2575-http-server-method-not-found-404-initialize",
        "tasks-capability-negotiation tasks-extension-advertised",
        "tasks-capability-negotiation sep-2663-tasks-methods-non-declaring",
        "input-required-result-validate-input sep-2322-validate-input-responses",
        "http-header-validation sep-2243-server-reject-invalid-headers",
        # Through the tool-agents standing for the suite's fixtures.
        "tasks-lifecycle sep-2663-result-type-task-on-create",
        "tasks-lifecycle tasks-sync-tool-call",
        "tasks-lifecycle sep-2663-cancel-ack-empty-result",
        "tasks-lifecycle sep-2663-tool-error-uses-completed-status",
        "tasks-required-task-error sep-2663-server-returns-missing-capability-when-required",
        "tasks-mrtr-input tasks-mrtr-tasks-update-resumes",
        "tasks-wire-fields tasks-wire-field-renames",
    } <= passed - set(failed), sorted(passed)
