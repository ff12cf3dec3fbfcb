"""`switchboard mcp` for clients of MCP 2026-07-28: a long call made as a task
(the `io.modelcontextprotocol/tasks` extension) that the client leaves and comes
back to, cancels, or answers an approval on; approvals for a stateless client
asked in rounds of its own request (`input_required`), through the real Python
`mcp` client; and stateless clients that never share an "approve always".

The task tests speak the protocol's JSON-RPC over HTTP themselves, one connection
per request, as a client that goes away and comes back does (no SDK here speaks
the tasks extension yet)."""

import json
import os
import time
import urllib.error
import urllib.request

import pytest
from mcp import Client

from test_mcp_server import WAIT, HttpServer, Recorder, run, stdio

TASKS = "io.modelcontextprotocol/tasks"


def rpc(url, method, params, capabilities=None, name=None):
    """One stateless 2026-07-28 request on its own connection: its result, or its
    error (an error may come with HTTP 400, as the protocol says)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    # The routing header: the tool's name on tools/call, the task's id on tasks/*.
    name = name or params.get("name") or params.get("taskId")
    if name:
        headers["Mcp-Name"] = name
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            text = response.read().decode()
            streamed = "event-stream" in response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        text, streamed = error.read().decode(), False
    messages = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    answer = [message for message in messages if message.get("id") == 1][-1] if streamed else json.loads(text)
    return answer.get("result", answer.get("error"))


def tasks_capabilities(elicitation=False):
    capabilities = {"extensions": {TASKS: {}}}
    if elicitation:
        capabilities["elicitation"] = {"form": {}}
    return capabilities


def call_as_task(url, tool, request, **capabilities):
    created = rpc(
        url, "tools/call", {"name": tool, "arguments": {"request": request}}, tasks_capabilities(**capabilities), tool
    )
    assert created["resultType"] == "task", created
    return created


def poll(url, task_id, until, capabilities=None):
    """`tasks/get` until its status is one of `until` (each poll a new connection)."""
    deadline = time.monotonic() + WAIT
    while True:
        task = rpc(url, "tasks/get", {"taskId": task_id}, capabilities or tasks_capabilities(), task_id)
        if task.get("status") in until:
            return task
        assert time.monotonic() < deadline, f"task {task_id} still {task.get('status')}: {task}"
        time.sleep(0.1)


@pytest.fixture
def server(workspace):
    running = HttpServer(workspace)
    yield running
    running.stop()


def test_a_long_call_is_a_task_the_client_leaves_and_comes_back_to(server):
    created = call_as_task(server.url, "agent_quiet", "work in silence")
    # The handle says how long the task is kept and how often to ask.
    assert created["status"] == "working" and created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] > 0
    assert "result" not in created and "requestState" not in created
    # The request that made it has ended; another connection finds it working, then done.
    assert rpc(server.url, "tasks/get", {"taskId": created["taskId"]}, tasks_capabilities())["status"] == "working"
    done = poll(server.url, created["taskId"], {"completed", "failed", "cancelled"})
    assert done["status"] == "completed", done
    result = done["result"]
    assert result["isError"] is False and result["structuredContent"]["status"] == "ok"
    assert "done" in result["content"][0]["text"]


def test_a_cancelled_task_ends_its_program(server, workspace):
    created = call_as_task(server.url, "agent_slow", "work until stopped")
    pid_file = workspace.folder / "slow.pid"
    deadline = time.monotonic() + WAIT
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline, "the slow agent never started"
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    ack = rpc(server.url, "tasks/cancel", {"taskId": created["taskId"]}, tasks_capabilities(), created["taskId"])
    assert ack == {"resultType": "complete"}, ack
    ended = poll(server.url, created["taskId"], {"completed", "failed", "cancelled"})
    assert ended["status"] == "cancelled", ended
    assert (workspace.folder / "slow.exit").read_text().strip() == "terminated"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # Cancelling an ended task is acknowledged alike; an unknown one is refused.
    again = rpc(server.url, "tasks/cancel", {"taskId": created["taskId"]}, tasks_capabilities(), created["taskId"])
    assert again == {"resultType": "complete"}
    unknown = rpc(server.url, "tasks/get", {"taskId": "no-such-task"}, tasks_capabilities(), "no-such-task")
    assert unknown["code"] == -32602, unknown


def test_a_task_waits_for_its_approval_and_goes_on_when_the_client_answers(server):
    created = call_as_task(server.url, "agent_researcher", "otters", elicitation=True)
    asking = poll(server.url, created["taskId"], {"input_required", "completed", "failed", "cancelled"})
    assert asking["status"] == "input_required", asking
    [(key, question)] = asking["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    assert "allow researcher (agent_researcher) to run?" in question["params"]["message"]
    assert "Request: otters" in question["params"]["message"]
    answer = {key: {"action": "accept", "content": {"always": False}}}
    ack = rpc(server.url, "tasks/update", {"taskId": created["taskId"], "inputResponses": answer}, tasks_capabilities())
    assert ack == {"resultType": "complete"}, ack
    done = poll(server.url, created["taskId"], {"completed", "failed", "cancelled"})
    assert done["status"] == "completed" and done["result"]["structuredContent"]["status"] == "ok", done


def test_a_client_that_declares_nothing_gets_the_answer_and_cannot_use_tasks(server):
    plain = rpc(
        server.url, "tools/call", {"name": "agent_planner", "arguments": {"request": "hi"}}, {}, "agent_planner"
    )
    assert "taskId" not in plain and plain.get("resultType", "complete") == "complete", plain
    assert plain["structuredContent"]["status"] == "ok"
    refused = rpc(server.url, "tasks/get", {"taskId": "anything"}, {}, "anything")
    assert refused["code"] == -32021, refused
    # The server says it speaks the extension.
    discovered = rpc(server.url, "server/discover", {}, {})
    assert TASKS in discovered["capabilities"]["extensions"], discovered


def test_a_stateless_client_approves_in_rounds_of_its_request(workspace):
    """The Python `mcp` client speaks 2026-07-28 by default: it is asked through an
    `input_required` result and answers by retrying, over stdio and HTTP."""
    accepted, declined, over_http = Recorder(), Recorder(), Recorder()
    server = HttpServer(workspace)

    async def scenario():
        async with Client(stdio(workspace), elicitation_callback=accepted.elicit_with("accept", {})) as client:
            version = client.protocol_version
            yes = await client.call_tool("agent_researcher", {"request": "otters"})
        async with Client(stdio(workspace), elicitation_callback=declined.elicit_with("decline")) as client:
            no = await client.call_tool("agent_researcher", {"request": "otters"})
        async with Client(server.url, elicitation_callback=over_http.elicit_with("accept", {})) as client:
            http = await client.call_tool("agent_researcher", {"request": "seals"})
        return version, yes, no, http

    try:
        version, yes, no, http = run(scenario())
    finally:
        server.stop()
    assert version == "2026-07-28"
    assert not yes.is_error and yes.structured_content["status"] == "ok"
    assert len(accepted.elicitations) == 1 and "Request: otters" in accepted.elicitations[0]
    assert no.structured_content["status"] == "denied" and "the MCP client declined" in no.content[0].text
    assert not http.is_error and over_http.elicitations and "Request: seals" in over_http.elicitations[0]


def test_two_stateless_clients_never_share_an_approve_always(server):
    first, second = Recorder(), Recorder()

    async def scenario():
        async with Client(server.url, elicitation_callback=first.elicit_with("accept", {"always": True})) as client:
            once = await client.call_tool("agent_researcher", {"request": "otters"})
        async with Client(server.url, elicitation_callback=second.elicit_with("decline")) as client:
            other = await client.call_tool("agent_researcher", {"request": "otters"})
        return once, other

    once, other = run(scenario())
    assert once.structured_content["status"] == "ok" and len(first.elicitations) == 1
    # The second client is asked itself; the first one's "always" is not its answer.
    assert len(second.elicitations) == 1, "the second client was never asked"
    assert other.structured_content["status"] == "denied"
