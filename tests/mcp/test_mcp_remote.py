"""The `mcp` provider: a remote MCP server's tool as a tool-agent. A demo primary
delegates to it in a `switchboard ask` turn (events as JSON lines); the remote's
progress arrives as the call's progress while it runs, its text is the answer,
`isError` is a `remote` error, a cancel (SIGTERM to `ask`) reaches the server as
`notifications/cancelled` and ends its process, a dead endpoint is a clear error.
And a chain across processes: a Switchboard whose tool-agent is another
Switchboard's `switchboard mcp`, the remote's text streaming and its usage
counted in the parent's total."""

import json
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import pytest

from aimock_peer import aimock, delegating_fixtures
from conftest import BINARY, ROOT
from loopback import free_port, wait_for_port
from test_mcp_server import WAIT, process_alive

PYTHON = str(ROOT / ".venv" / "bin" / "python")
SERVER = str(pathlib.Path(__file__).with_name("remote_server.py"))


def remote_config(folder: pathlib.Path, remote: dict) -> pathlib.Path:
    config = {
        "primary": "assistant",
        "agents": [
            {"name": "assistant", "provider": "demo", "model": "demo-planner"},
            {"name": "remote", "provider": "mcp", **remote},
        ],
        "agent_tools": [{"agent": "remote", "description": "A remote agent.", "approval": "auto"}],
    }
    path = folder / "config.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def ask(config: pathlib.Path, folder: pathlib.Path, message: str, env: dict | None = None):
    environment = {"PATH": os.environ["PATH"], "HOME": str(folder)} | (env or {})
    finished = subprocess.run(
        [str(BINARY), "--config", str(config), "--data-dir", str(folder / "data"), "ask", "--events", "jsonl", message],
        capture_output=True,
        text=True,
        timeout=WAIT * 2,
        env=environment,
    )
    events = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    return finished, events


def remote_call(events: list) -> tuple[list, dict]:
    started = next(event for event in events if event["type"] == "call_started" and event["agent"] == "remote")
    mine = [event for event in events if event["call_id"] == started["call_id"]]
    return mine, mine[-1]


def answered_by_an_http_primary(config: pathlib.Path, model: str) -> None:
    """Makes the config's primary an HTTP agent on aimock at `model`, as `primary-m`."""
    data = json.loads(config.read_text())
    data["agents"][0] = {"name": "assistant", "provider": "local", "url": model, "model": "primary-m"}
    config.write_text(json.dumps(data))


QUESTION = "Please find out everything about how otters sleep in the wild and why"


def test_an_http_primary_delegates_to_a_remote_tool_over_stdio(tmp_path):
    config = remote_config(tmp_path, {"command": PYTHON, "args": [SERVER], "tool": "research"})
    fixtures = delegating_fixtures("primary-m", "agent_remote", QUESTION, "The remote agent found it.")
    with aimock(fixtures) as model:
        answered_by_an_http_primary(config, model)
        finished, events = ask(config, tmp_path, QUESTION)
    assert "The remote agent found it." in finished.stdout
    assert finished.returncode == 0, finished.stderr
    mine, last = remote_call(events)
    progress = [event["message"] for event in mine if event["type"] == "tool_progress"]
    assert progress[0].startswith(f"remote {PYTHON}: connected in ")
    assert [line.split(" about")[0] for line in progress[1:-1]] == ["reading", "comparing", "writing"]
    latency = [event for event in mine if event["type"] == "tool_progress"][-1]["data"]["remote"]
    assert latency["endpoint"] == PYTHON and latency["total_ms"] >= latency["first_event_ms"] >= latency["connect_ms"]
    kinds = [event["type"] for event in mine]
    assert kinds.index("tool_progress") < kinds.index("call_finished"), "progress while it runs"
    assert last["type"] == "call_finished" and last["status"] == "ok"
    assert last["result"].startswith("Remote findings on ") and "otters hold hands" in last["result"]


def test_the_delegates_context_reaches_the_remote_tool_as_text_and_as_data(tmp_path):
    """The caller's structured context is not dropped on the way to a remote tool: it is
    in the request text, labelled, and in `context_argument` as data when named."""
    context = {"file": "otters.md", "lines": [3, 9]}
    call = {"id": "call_1", "name": "agent_remote", "arguments": {"request": QUESTION, "context": context}}
    fixtures = {
        "fixtures": [
            {"match": {"model": "primary-m", "hasToolResult": False}, "response": {"toolCalls": [call]}},
            {"match": {"model": "primary-m", "hasToolResult": True}, "response": {"content": "Done."}},
        ]
    }
    received = {}
    with aimock(fixtures) as model:
        for how, extra in (("as data", {"context_argument": "context"}), ("as text", {})):
            remote = {"command": PYTHON, "args": [SERVER], "tool": "inspect", "cwd": str(tmp_path), **extra}
            config = remote_config(tmp_path, remote)
            answered_by_an_http_primary(config, model)
            finished, events = ask(config, tmp_path, QUESTION)
            assert finished.returncode == 0, finished.stderr
            last = remote_call(events)[1]
            assert last["status"] == "ok", last
            received[how] = json.loads(last["result"])
    for how, arguments in received.items():
        text = arguments["request"]
        assert text.endswith(QUESTION), (how, text)
        assert '"file": "otters.md"' in text and "Context from the calling agent" in text, (how, text)
    assert received["as data"]["context"] == context
    assert received["as text"]["cwd"] == str(tmp_path), "the stdio server runs in the agent's cwd"
    assert received["as text"]["context"] is None


def test_a_remote_tool_over_streamable_http_with_a_bearer_token_and_its_failure(tmp_path):
    """Over streamable HTTP: the bearer token comes from the variable `api_key_env`
    names (unset, or refused with a 401, said in words), progress streams as over stdio, and an
    `isError` result is a `remote` error in the server's words."""
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, SERVER, "http", str(port)], env=os.environ | {"REMOTE_TOKEN": "t0ken-7"}, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, server, "the MCP server", WAIT)
        url = f"http://127.0.0.1:{port}/mcp"
        config = remote_config(tmp_path, {"url": url, "tool": "research", "api_key_env": "REMOTE_KEY"})
        _, events = ask(config, tmp_path, QUESTION)
        unset = remote_call(events)[1]
        assert unset["status"] == "error" and "REMOTE_KEY is not set" in unset["error"]["message"], unset
        _, events = ask(config, tmp_path, QUESTION, env={"REMOTE_KEY": "wr0ng-key"})
        refused = remote_call(events)[1]
        assert refused["status"] == "error" and "401" in refused["error"]["message"], refused
        assert "wr0ng-key" not in json.dumps(events), "the key is never in an event"
        finished, events = ask(config, tmp_path, QUESTION, env={"REMOTE_KEY": "t0ken-7"})
        assert finished.returncode == 0, finished.stderr
        mine, last = remote_call(events)
        assert last["status"] == "ok", last
        progress = [event["message"] for event in mine if event["type"] == "tool_progress"]
        assert [line.split(" about")[0] for line in progress[1:-1]] == ["reading", "comparing", "writing"], progress
        broken = remote_config(tmp_path, {"url": url, "tool": "broken", "api_key_env": "REMOTE_KEY"})
        finished, events = ask(broken, tmp_path, QUESTION, env={"REMOTE_KEY": "t0ken-7"})
        last = remote_call(events)[1]
        assert last["status"] == "error" and last["error"]["kind"] == "remote", last
        assert "Error executing tool broken" in last["error"]["message"], "the server's own words"
    finally:
        server.terminate()
        server.wait(timeout=WAIT)


def test_a_dead_endpoint_and_a_missing_tool_say_what_and_where(tmp_path):
    config = remote_config(tmp_path, {"url": f"http://127.0.0.1:{free_port()}/mcp"})
    _, events = ask(config, tmp_path, QUESTION)
    last = remote_call(events)[1]
    assert last["error"]["kind"] == "unreachable" and "127.0.0.1" in last["error"]["message"], last
    config = remote_config(tmp_path, {"command": PYTHON, "args": [SERVER], "tool": "nope"})
    _, events = ask(config, tmp_path, QUESTION)
    last = remote_call(events)[1]
    assert last["error"]["kind"] == "config", last
    assert (
        'has no tool "nope" (it has: research, slow, silent, broken, fragile, inspect, big, priced, chatty)'
        in last["error"]["message"]
    )
    config = remote_config(
        tmp_path, {"command": PYTHON, "args": [SERVER], "tool": "research", "context_argument": "ctx"}
    )
    _, events = ask(config, tmp_path, QUESTION)
    last = remote_call(events)[1]
    assert last["error"]["kind"] == "config", last
    assert 'tool "research" has no argument "ctx" for the context' in last["error"]["message"], last


def test_a_remote_tool_obeys_the_call_and_idle_timeouts_and_is_told_to_stop(tmp_path):
    """The limits of an HTTP agent hold for a remote tool: `timeout_secs` ends a call
    that keeps reporting progress, `idle_timeout_secs` one that goes silent; either way
    the server (over HTTP, so it outlives the call) hears `notifications/cancelled`
    and its tool stops."""
    log = tmp_path / "remote.log"
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, SERVER, "http", str(port)], env=os.environ | {"REMOTE_LOG": str(log)}, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, server, "the MCP server", WAIT)
        url = f"http://127.0.0.1:{port}/mcp"
        cases = (
            ("slow", {"timeout_secs": 2}, "no answer within 2 s"),
            ("silent", {"idle_timeout_secs": 1}, "was silent for 1 s"),
        )
        for tool, limit, words in cases:
            config = remote_config(tmp_path, {"url": url, "tool": tool, **limit})
            finished, events = ask(config, tmp_path, QUESTION)
            assert finished.returncode == 0, finished.stderr
            last = remote_call(events)[1]
            assert last["error"]["kind"] == "timeout" and words in last["error"]["message"], last
            deadline = time.monotonic() + WAIT
            while f"{tool} interrupted" not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert f"{tool} interrupted" in log.read_text(), f"{tool}: the server was not told to stop"
        assert server.poll() is None, "the HTTP server outlives the calls"
    finally:
        server.terminate()
        server.wait(timeout=WAIT)


def test_a_kept_stdio_server_that_ignores_sigterm_does_not_outlive_the_program(tmp_path):
    """The runner cache keeps a stdio server between calls; when `ask` exits, the
    server goes too, even one that ignores SIGTERM and its closed stdin. (`ask` drops
    its runner cache on the way out, and rmcp kills the child it was given; the app,
    which exits without dropping it, is tested on the real window.)"""
    log = tmp_path / "remote.log"
    config = remote_config(tmp_path, {"command": PYTHON, "args": [SERVER], "tool": "research"})
    data = json.loads(config.read_text())
    data["agents"][1]["env"] = {"REMOTE_LOG": str(log), "REMOTE_STUBBORN": "1"}
    config.write_text(json.dumps(data))
    finished, events = ask(config, tmp_path, QUESTION)
    assert finished.returncode == 0, finished.stderr
    assert remote_call(events)[1]["status"] == "ok"
    pid = int(log.read_text().split("stubborn pid=")[1].split()[0])
    deadline = time.monotonic() + WAIT
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(pid), "the stubborn server outlived the program that started it"


def test_cancelling_reaches_the_remote_and_leaves_nothing_running(tmp_path):
    log = tmp_path / "remote.log"
    config = remote_config(tmp_path, {"command": PYTHON, "args": [SERVER], "tool": "slow"})
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    config_data = json.loads(config.read_text())
    config_data["agents"][1]["env"] = {"REMOTE_LOG": str(log)}
    config.write_text(json.dumps(config_data))
    process = subprocess.Popen(
        [
            str(BINARY),
            "--config",
            str(config),
            "--data-dir",
            str(tmp_path / "data"),
            "ask",
            "--events",
            "jsonl",
            QUESTION,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    progress_seen = 0
    for line in process.stdout:
        if '"tool_progress"' in line:
            progress_seen += 1
            if progress_seen == 3:
                break
    assert progress_seen == 3, "the remote's progress streams"
    pid = int(log.read_text().split("pid=")[1].split()[0])
    assert process_alive(pid)
    process.send_signal(signal.SIGTERM)
    rest, _ = process.communicate(timeout=WAIT)
    assert process.returncode == 143
    deadline = time.monotonic() + WAIT
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(pid), "the stdio server's process group was ended"
    finished = [json.loads(line) for line in rest.splitlines() if '"call_finished"' in line]
    assert any(event["agent"] == "remote" and event["status"] == "cancelled" for event in finished)


def test_a_chain_across_processes_streams_the_remote_subtree_and_counts_its_usage(tmp_path):
    """Switchboard A's tool-agent is Switchboard B, reached through `switchboard mcp`;
    A's primary is an HTTP model (aimock) that delegates to it."""
    remote_folder = tmp_path / "b"
    remote_folder.mkdir()
    b_config = remote_folder / "config.json"
    b_config.write_text(
        json.dumps(
            {
                "primary": "writer",
                "agents": [
                    {"name": "writer", "provider": "demo", "model": "demo-researcher", "delay_ms": 2},
                ],
                "agent_tools": [{"agent": "writer", "description": "Writes.", "approval": "auto"}],
            }
        )
    )
    config = remote_config(
        tmp_path,
        {"command": str(BINARY), "args": ["--config", str(b_config), "mcp"], "tool": "agent_writer"},
    )
    fixtures = delegating_fixtures("primary-m", "agent_remote", QUESTION, "B's writer answered.")
    with aimock(fixtures) as model:
        answered_by_an_http_primary(config, model)
        finished, events = ask(config, tmp_path, QUESTION)
    assert finished.returncode == 0, finished.stderr
    assert "B's writer answered." in finished.stdout
    mine, last = remote_call(events)
    assert last["status"] == "ok"
    deltas = [event for event in mine if event["type"] == "text_delta"]
    assert len(deltas) > 3, "the remote Switchboard's text streams as the call's text"
    remote_progress = [event for event in mine if event["type"] == "tool_progress"]
    assert any(event["message"].startswith("writer started") for event in remote_progress)
    assert any((event.get("data") or {}).get("type") == "call_finished" for event in remote_progress)
    # B's usage is the remote call's usage, and A's total includes it.
    assert last["usage"]["total_tokens"] > 0
    root = [event for event in events if event["type"] == "call_finished" and event["parent_id"] is None][-1]
    assert root["usage_total"]["total_tokens"] >= last["usage"]["total_tokens"] + root["usage"]["total_tokens"]
    assert "<<<AGENT_RESULT" in last["result"], "B's answer came fenced by B (untrusted for A too)"


def processes_naming(text: str) -> list[int]:
    """The processes whose command line holds `text`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if text.encode() in pathlib.Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


def test_cancelling_a_chain_ends_the_remote_switchboard_and_its_agent(tmp_path):
    """A stop reaches across processes: Switchboard A's call into Switchboard B (over
    `switchboard mcp`), where B runs a subprocess agent, is cancelled; B's process
    and B's agent are both gone afterwards."""
    remote_folder = tmp_path / "b"
    remote_folder.mkdir()
    pid_file = tmp_path / "sleeper.pid"
    b_config = remote_folder / "config.json"
    sleeper = {
        "name": "sleeper",
        "provider": "subprocess",
        "command": "sh",
        "args": ["-c", f"echo $$ > {pid_file}; exec sleep 60"],
    }
    b_config.write_text(
        json.dumps(
            {
                "primary": "writer",
                "agents": [{"name": "writer", "provider": "demo", "model": "demo-researcher"}, sleeper],
                "agent_tools": [{"agent": "sleeper", "description": "Sleeps.", "approval": "auto"}],
            }
        )
    )
    config = remote_config(
        tmp_path,
        {"command": str(BINARY), "args": ["--config", str(b_config), "mcp"], "tool": "agent_sleeper"},
    )
    process = subprocess.Popen(
        [
            str(BINARY),
            "--config",
            str(config),
            "--data-dir",
            str(tmp_path / "data"),
            "ask",
            "--events",
            "jsonl",
            QUESTION,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    deadline = time.monotonic() + WAIT
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), "B started its agent"
    agent_pid = int(pid_file.read_text())
    b_pids = processes_naming(str(b_config))
    assert b_pids and process_alive(agent_pid)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=WAIT)
    assert process.returncode == 143
    deadline = time.monotonic() + WAIT
    while any(process_alive(pid) for pid in [agent_pid, *b_pids]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(agent_pid), "B's agent was ended"
    assert not any(process_alive(pid) for pid in b_pids), "B was ended"


def test_probe_lists_the_servers_tools_even_when_the_configured_one_is_missing(tmp_path):
    config = remote_config(tmp_path, {"command": PYTHON, "args": [SERVER], "tool": "nope"})
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    probe = [str(BINARY), "--config", str(config), "agent", "probe", "remote"]
    listed = subprocess.run([*probe, "--json"], capture_output=True, text=True, env=environment, timeout=WAIT)
    assert listed.returncode == 0, listed.stderr
    tools = {tool["name"]: tool for tool in json.loads(listed.stdout)["tools"]}
    assert set(tools) == {"research", "slow", "silent", "broken", "fragile", "inspect", "big", "priced", "chatty"}
    assert tools["research"]["input_schema"]["required"] == ["question"]
    config = remote_config(tmp_path, {"command": PYTHON, "args": [SERVER], "tool": "research"})
    shown = subprocess.run(probe, capture_output=True, text=True, env=environment, timeout=WAIT)
    assert "* research(question)" in shown.stdout and "  slow(task)" in shown.stdout, shown.stdout
    # The form's connection test (and `agent test`) offers the tool's own description for its entry.
    tested = [str(BINARY), "--config", str(config), "agent", "test", "remote", "--json"]
    report = json.loads(subprocess.run(tested, capture_output=True, text=True, env=environment, timeout=WAIT).stdout)
    assert report["ok"] and report["description"] == "Looks a question up, reporting each step.", report


def test_a_crashed_stdio_server_is_restarted_on_the_next_call(tmp_path):
    """One process, two calls: `switchboard mcp` keeps its runner cache between an
    MCP client's calls, so the second call finds the stdio server the first one
    crashed and must start it again."""
    import asyncio

    from mcp import Client, StdioServerParameters

    config = remote_config(tmp_path, {"command": PYTHON, "args": [SERVER], "tool": "fragile"})
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    params = StdioServerParameters(command=str(BINARY), args=["--config", str(config), "mcp"], env=environment)

    async def scenario():
        async with Client(params, mode="legacy") as client:
            first = await client.call_tool("agent_remote", {"request": "hello"})
            crashed = await client.call_tool("agent_remote", {"request": "crash now"})
            again = await client.call_tool("agent_remote", {"request": "hello again"})
            return first, crashed, again

    first, crashed, again = asyncio.run(asyncio.wait_for(scenario(), timeout=120))
    assert not first.is_error, first.content
    assert crashed.is_error and "MCP session ended" in crashed.content[0].text, crashed.content
    assert not again.is_error, again.content

    def pid(result):
        return int(result.content[0].text.split("served by pid ")[1].split()[0].rstrip(".\"'"))

    assert pid(first) != pid(again), "a new server process answered the call after the crash"


def switchboard_b(folder: pathlib.Path, config: dict, port: int = 0) -> tuple[subprocess.Popen, str]:
    """Switchboard B: `switchboard mcp --http` on loopback (`port`, or a free one)
    with `config` in `folder` (its HOME): the process and the URL it serves on."""
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    b = subprocess.Popen(
        [str(BINARY), "--config", str(folder / "config.json"), "mcp", "--http", f"127.0.0.1:{port}"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(folder)},
    )
    return b, re.search(r"serving on (http://\S+)", b.stderr.readline()).group(1)


def watchdog(processes: list, go: pathlib.Path) -> threading.Timer:
    """Bounds a test that reads processes' output line by line: after WAIT * 4 the
    agent waiting on `go` is let go and the processes are killed, so a missing line
    fails the test instead of hanging it to the call's own timeout."""

    def fire():
        go.write_text("")
        for process in processes:
            process.kill()

    timer = threading.Timer(WAIT * 4, fire)
    timer.start()
    return timer


@pytest.mark.parametrize("b_restarted", [False, True], ids=["task-kept", "b-restarted"])
def test_a_turn_killed_while_its_remote_task_runs_is_resumed_following_that_task(tmp_path, b_restarted):
    """Switchboard A's `mcp` agent with `tasks: true` calls Switchboard B over HTTP; A
    is killed with SIGKILL while B's task runs, and B's task runs on. `sessions
    resume` follows that task (`tasks/get` by the id A's log holds) instead of
    asking B again: B's agent program ran once, and its answer ends the turn. When
    B was restarted meanwhile (the task is gone with it), the call is asked again,
    and says why."""
    runs, go = tmp_path / "worker.runs", tmp_path / "worker.go"
    worker = {
        "name": "worker",
        "provider": "subprocess",
        "command": "sh",
        "args": ["-c", f"echo run >> {runs}; while [ ! -e {go} ]; do sleep 0.05; done; echo worked it out"],
    }
    b_config = {
        "primary": "worker",
        "agents": [worker],
        "agent_tools": [{"agent": "worker", "description": "Works.", "approval": "auto"}],
    }
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    data = ["--data-dir", str(tmp_path / "data")]
    port = free_port()
    b, url = switchboard_b(tmp_path / "b", b_config, port)
    processes = [b]
    timer = watchdog(processes, go)
    try:
        config = remote_config(tmp_path, {"url": url, "tool": "agent_worker", "tasks": True})
        a = subprocess.Popen(
            [str(BINARY), "--config", str(config), *data, "ask", "--events", "jsonl", "--session", "work", QUESTION],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=environment,
        )
        processes.append(a)
        # Killed once its log names B's task (the progress line is logged before it
        # is shown) and B's agent runs.
        task = None
        for line in a.stdout:
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("type") == "tool_progress" and "task" in (event.get("data") or {}):
                task = event["data"]["task"]["id"]
                break
        assert task, "A's call never became a task"
        while not runs.exists() and a.poll() is None:
            time.sleep(0.05)
        a.kill()
        a.wait(timeout=WAIT)
        if b_restarted:
            b.terminate()
            b.wait(timeout=WAIT)
            b, _ = switchboard_b(tmp_path / "b", b_config, port)
            processes.append(b)
        shown = subprocess.run(
            [str(BINARY), "--config", str(config), *data, "sessions", "show", "work"],
            capture_output=True,
            text=True,
            env=environment,
            timeout=WAIT,
        )
        assert "[interrupted]" in shown.stdout, shown.stdout

        resumed = subprocess.Popen(
            [str(BINARY), "--config", str(config), *data, "sessions", "resume", "work", "--events", "jsonl"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        processes.append(resumed)
        events = []
        for line in resumed.stdout:
            event = json.loads(line) if line.startswith("{") else {}
            events.append(event)
            if "reattached" in (event.get("data") or {}):
                go.write_text("")
        resumed.wait(timeout=WAIT)
        assert resumed.returncode == 0, resumed.stderr.read()
        mine, last = remote_call(events)
        followed = [event["data"]["reattached"] for event in mine if "reattached" in (event.get("data") or {})]
        assert followed and followed[0]["task"] == task, mine
        assert last["status"] == "ok" and "worked it out" in last["result"], last
        said = [event["message"] for event in mine if event.get("type") == "tool_progress"]
        if b_restarted:
            assert any(f"no longer has task {task}" in line for line in said), said
            assert runs.read_text().splitlines() == ["run", "run"], "asked again: the task was gone"
        else:
            assert not any("no longer has" in line for line in said), said
            assert runs.read_text().splitlines() == ["run"], "B's agent ran once: the resumed call followed its task"
    finally:
        timer.cancel()
        go.write_text("")
        for process in processes:
            process.terminate()
            process.wait(timeout=WAIT)


def test_an_agent_with_tasks_has_its_call_run_as_a_task_polled_to_the_end_and_cancelled_with_it(tmp_path):
    """Switchboard A's `mcp` agent with `tasks: true` calls Switchboard B over HTTP
    (`switchboard mcp --http`, which makes a task of a call that declares the
    extension): the call is a task, polled to B's answer; then a call stopped while
    its task runs sends `tasks/cancel`, and B ends its subprocess agent."""
    pid_file, exit_file = tmp_path / "sleeper.pid", tmp_path / "sleeper.exit"
    sleeper = {
        "name": "sleeper",
        "provider": "subprocess",
        "command": "sh",
        "args": ["-c", f"echo $$ > {pid_file}; trap 'echo terminated > {exit_file}; exit 0' TERM; sleep 60 & wait"],
    }
    b_config = {
        "primary": "writer",
        "agents": [{"name": "writer", "provider": "demo", "model": "demo-researcher"}, sleeper],
        "agent_tools": [
            {"agent": "writer", "description": "Writes.", "approval": "auto"},
            {"agent": "sleeper", "description": "Sleeps.", "approval": "auto"},
        ],
    }
    b, url = switchboard_b(tmp_path / "b", b_config)
    try:
        config = remote_config(tmp_path, {"url": url, "tool": "agent_writer", "tasks": True})
        finished, events = ask(config, tmp_path, QUESTION)
        assert finished.returncode == 0, finished.stderr
        mine, last = remote_call(events)
        assert last["status"] == "ok", last
        assert "Findings on" in last["result"], last["result"]
        made = [event for event in mine if event["type"] == "tool_progress" and "task" in (event.get("data") or {})]
        assert made and made[0]["message"].startswith("the server runs the call as task"), mine

        data = json.loads(config.read_text())
        data["agents"][1] |= {"tool": "agent_sleeper"}
        config.write_text(json.dumps(data))
        process = subprocess.Popen(
            [str(BINARY), "--config", str(config), "--data-dir", str(tmp_path / "data"), "ask", "--events", "jsonl"]
            + [QUESTION],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        )
        # Stopped once A holds the task's handle (its first progress line says so)
        # and B's agent runs: from then on, dropping the call sends tasks/cancel.
        for line in process.stdout:
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("type") == "tool_progress" and "task" in (event.get("data") or {}):
                break
        deadline = time.monotonic() + WAIT
        while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=WAIT)
        assert process.returncode == 143, process.returncode
        agent_pid = int(pid_file.read_text())
        deadline = time.monotonic() + WAIT
        while process_alive(agent_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process_alive(agent_pid), "B's agent outlived the cancelled task"
        assert exit_file.read_text().strip() == "terminated", "B ended its agent with SIGTERM"
    finally:
        b.terminate()
        b.wait(timeout=WAIT)
