"""`switchboard mcp` driven by a real MCP client: the Python `mcp` package (2.x),
over stdio and streamable HTTP. Each test runs the built binary with a fresh
config of demo agents and a subprocess agent, and asserts what a client sees:
the tool list, progress that arrives while the call runs, the structured result
with usage, approvals by elicitation (or a clear denial), cancellation that leaves
no process behind, and the list changing when the config file does."""

import asyncio
import json
import os
import re
import subprocess
import urllib.error
import urllib.request

import jsonschema
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

WAIT = 30  # seconds any awaited event may take on a loaded machine before the test fails


def stdio(workspace, *extra):
    command = workspace.command(*extra)
    return StdioServerParameters(command=command[0], args=command[1:], env=workspace.env(), cwd=str(workspace.folder))


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, timeout=120))


class Recorder:
    """Keeps what the client saw, in arrival order."""

    def __init__(self):
        self.seen = []
        self.list_changed = asyncio.Event()
        self.elicitations = []

    async def progress(self, progress, total, message):
        self.seen.append(("progress", progress, message))

    async def message(self, message):
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed.set()

    def elicit_with(self, action, content=None):
        async def answer(context, params):
            self.elicitations.append(params.message)
            return types.ElicitResult(action=action, content=content)

        return answer

    def messages(self):
        return [entry[2] for entry in self.seen if entry[0] == "progress" and entry[2]]


def test_lists_the_tool_agents_with_the_dispatchers_schema(workspace):
    async def scenario():
        async with Client(stdio(workspace), mode="legacy") as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            return client.protocol_version, client.server_info, tools

    version, server, tools = run(scenario())
    assert server.name == "switchboard"
    assert version in ("2025-06-18", "2025-11-25")
    assert sorted(tools) == ["agent_planner", "agent_quiet", "agent_researcher", "agent_slow"]
    schema = tools["agent_researcher"].input_schema
    assert schema["required"] == ["request"]
    assert set(schema["properties"]) == {"request", "context"}
    assert tools["agent_researcher"].description == "Research agent: returns findings."
    output = tools["agent_planner"].output_schema
    assert {"status", "usage", "usage_total", "cost", "cost_total", "steps"} <= set(output["required"])


def test_a_nested_call_streams_progress_and_returns_usage_and_cost(workspace):
    recorder = Recorder()
    request = "Plan a short survey of otter habitats along the northern coast, with sources and open questions"

    async def scenario():
        async with Client(stdio(workspace), mode="legacy") as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            result = await client.call_tool("agent_planner", {"request": request}, progress_callback=recorder.progress)
            recorder.seen.append(("result", None, None))
            return result, tools["agent_planner"].output_schema

    result, output_schema = run(scenario())
    assert not result.is_error, result.content
    structured = result.structured_content
    assert structured["agent"] == "planner" and structured["status"] == "ok"
    # The planner delegated to the priced researcher: the subtree's usage and cost
    # are more than the planner's own.
    assert structured["usage_total"]["total_tokens"] > structured["usage"]["total_tokens"] > 0
    assert structured["cost"] is None and structured["cost_total"] > 0
    assert structured["steps"] >= 2
    text = result.content[0].text
    assert text.startswith("<<<AGENT_RESULT ") and 'agent="planner"' in text, "the answer comes fenced"
    # Clients that give their model only the structured content (Claude Code, Codex)
    # get the same answer there; the content conforms to the declared output schema.
    assert structured["result"] == text
    jsonschema.validate(structured, output_schema)
    messages = recorder.messages()
    assert "researcher started as agent_researcher on demo-researcher" in messages
    assert any(message.startswith("researcher finished: ok") for message in messages)
    assert any(message.startswith("researcher: ") for message in messages), "nested text is relayed"
    kinds = [entry[0] for entry in recorder.seen]
    assert kinds[-1] == "result" and kinds.count("progress") > 5, "progress arrives before the result"


def test_approval_is_asked_through_elicitation(workspace):
    accepted, declined = Recorder(), Recorder()

    async def scenario():
        async with Client(
            stdio(workspace), mode="legacy", elicitation_callback=accepted.elicit_with("accept", {})
        ) as client:
            yes = await client.call_tool("agent_researcher", {"request": "otters"})
        async with Client(
            stdio(workspace), mode="legacy", elicitation_callback=declined.elicit_with("decline")
        ) as client:
            no = await client.call_tool("agent_researcher", {"request": "otters"})
        return yes, no

    yes, no = run(scenario())
    assert not yes.is_error and yes.structured_content["status"] == "ok"
    assert len(accepted.elicitations) == 1 and "allow researcher (agent_researcher) to run?" in accepted.elicitations[0]
    assert "Request: otters" in accepted.elicitations[0]
    assert no.is_error and no.structured_content["status"] == "denied"
    assert no.structured_content["error"]["kind"] == "denied"
    # A client's "no" may be its own (`claude -p` declines by itself): said as such.
    words = no.structured_content["error"]["message"]
    assert "the MCP client declined" in words and "user denied" not in words, words
    assert no.structured_content["result"] == no.content[0].text


def test_a_client_that_cannot_be_asked_gets_a_clear_denial_unless_approve_all(workspace):
    async def scenario(*extra):
        async with Client(stdio(workspace, *extra), mode="legacy") as client:
            return await client.call_tool("agent_researcher", {"request": "otters"})

    denied = run(scenario())
    assert denied.is_error and denied.structured_content["status"] == "denied"
    assert "does not support MCP elicitation" in denied.content[0].text
    assert "--approve all" in denied.content[0].text
    allowed = run(scenario("--approve", "all"))
    assert not allowed.is_error and allowed.structured_content["status"] == "ok"
    refused = run(scenario("--approve", "none"))
    assert refused.is_error and refused.structured_content["status"] == "denied"


def test_bad_arguments_are_a_tool_error_and_an_unknown_tool_a_protocol_error(workspace):
    async def scenario():
        async with Client(stdio(workspace), mode="legacy") as client:
            bad = await client.call_tool("agent_planner", {"request": 7})
            try:
                await client.call_tool("agent_nobody", {"request": "x"})
                unknown = None
            except Exception as error:  # the SDK raises the JSON-RPC error
                unknown = str(error)
            return bad, unknown

    bad, unknown = run(scenario())
    assert bad.is_error and bad.structured_content["error"]["kind"] == "bad_arguments"
    assert "must be a string" in bad.content[0].text
    assert unknown is not None and "agent_nobody" in unknown


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has ended; only its parent's wait is missing. (It may also be reaped
    # between the two looks: then it is gone.)
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


async def wait_until(condition, what):
    for _ in range(WAIT * 20):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting until {what}")


def test_cancelling_a_call_ends_its_process_and_the_server_keeps_serving(workspace):
    recorder = Recorder()
    pid_file = workspace.folder / "slow.pid"

    async def scenario():
        async with Client(stdio(workspace), mode="legacy") as client:
            call = asyncio.create_task(
                client.call_tool("agent_slow", {"request": "work"}, progress_callback=recorder.progress)
            )
            await wait_until(lambda: any("working 3" in m for m in recorder.messages()), "the agent's output streams")
            pid = int(pid_file.read_text())
            assert process_alive(pid)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await wait_until(lambda: not process_alive(pid), f"the agent (pid {pid}) has ended")
            after = await client.call_tool("agent_planner", {"request": "hi"})
            return pid, after

    pid, after = run(scenario())
    assert (workspace.folder / "slow.exit").read_text().strip() == "terminated", "it was asked to stop (SIGTERM)"
    assert not after.is_error


def test_a_silent_call_sends_keepalive_progress(workspace):
    recorder = Recorder()

    async def scenario():
        async with Client(stdio(workspace, "--keepalive", "1"), mode="legacy") as client:
            result = await client.call_tool("agent_quiet", {"request": "x"}, progress_callback=recorder.progress)
            recorder.seen.append(("result", None, None))
            return result

    result = run(scenario())
    assert not result.is_error
    kinds = [entry[0] if entry[0] == "result" else entry[2] or "" for entry in recorder.seen]
    keepalives = [index for index, message in enumerate(kinds) if message.startswith("still working")]
    assert keepalives, f"no keep-alive while the agent was silent: {kinds}"
    assert keepalives[0] < kinds.index("result")


def test_the_list_follows_the_config_file(workspace):
    recorder = Recorder()

    async def scenario():
        async with Client(stdio(workspace), mode="legacy", message_handler=recorder.message) as client:
            before = [tool.name for tool in (await client.list_tools()).tools]
            config = workspace.config()
            config["agent_tools"] = [entry for entry in config["agent_tools"] if entry["agent"] != "slow"]
            workspace.write(config)
            await asyncio.wait_for(recorder.list_changed.wait(), WAIT)
            after = [tool.name for tool in (await client.list_tools()).tools]
            # A broken file keeps the last good list (and the server running).
            workspace.config_path.write_text("{ not json")
            still = [tool.name for tool in (await client.list_tools()).tools]
            return before, after, still

    before, after, still = run(scenario())
    assert "agent_slow" in before and "agent_slow" not in after
    assert still == after


def test_the_stateless_revision_lists_and_calls(workspace):
    """A client on the newest revision (no `initialize`, per-request metadata)."""

    async def scenario():
        async with Client(stdio(workspace), mode="auto") as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("agent_planner", {"request": "hi"})
            asked = await client.call_tool("agent_researcher", {"request": "otters"})
            return client.protocol_version, names, result, asked

    version, names, result, asked = run(scenario())
    assert "agent_planner" in names
    assert not result.is_error and result.structured_content["status"] == "ok"
    assert asked.structured_content["status"] == "denied" and "--approve all" in asked.content[0].text
    print("negotiated", version)


class HttpServer:
    def __init__(self, workspace, *extra, env=None):
        environment = workspace.env() | (env or {})
        self.process = subprocess.Popen(
            workspace.command("--http", "127.0.0.1:0", *extra),
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=environment,
            text=True,
        )
        line = self.process.stderr.readline()
        found = re.search(r"serving on (http://\S+)", line)
        assert found, f"no address line: {line!r}"
        self.url = found.group(1)

    def stop(self):
        self.process.terminate()
        assert self.process.wait(timeout=WAIT) == 0


def raw_post(url, headers):
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
    ).encode()
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    request = urllib.request.Request(url, data=body, headers=base | headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_streamable_http_serves_calls_with_progress(workspace):
    server = HttpServer(workspace)
    recorder = Recorder()
    try:

        async def scenario():
            async with Client(server.url, mode="legacy") as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                result = await client.call_tool(
                    "agent_planner", {"request": "hello there"}, progress_callback=recorder.progress
                )
                return names, result

        names, result = run(scenario())
    finally:
        server.stop()
    assert "agent_planner" in names
    assert not result.is_error and result.structured_content["status"] == "ok"
    assert any(message.startswith("planner started") for message in recorder.messages())


def test_http_refuses_foreign_origins_hosts_paths_and_missing_tokens(workspace):
    server = HttpServer(workspace, "--token-env", "MCP_TOKEN", env={"MCP_TOKEN": "s3cret-token"})
    try:
        good = {"Authorization": "Bearer s3cret-token"}
        assert raw_post(server.url, {}) == 401
        assert raw_post(server.url, {"Authorization": "Bearer wrong"}) == 401
        assert raw_post(server.url, good) == 200
        assert raw_post(server.url, good | {"Origin": "http://evil.example"}) == 403
        assert raw_post(server.url, good | {"Origin": "http://localhost:5173"}) == 200
        assert raw_post(server.url, good | {"Host": "evil.example"}) == 403
        assert raw_post(server.url.replace("/mcp", "/other"), good) == 404
    finally:
        server.stop()


def test_a_non_loopback_address_is_refused(workspace):
    finished = subprocess.run(
        workspace.command("--http", "0.0.0.0:0"), capture_output=True, text=True, env=workspace.env(), timeout=WAIT
    )
    assert finished.returncode == 1
    assert "not a loopback address" in finished.stderr
