"""The `a2a` provider against a real A2A 1.0 agent built with the Python
`a2a-sdk`: a demo primary delegates to it in a `switchboard ask` turn. Status
updates arrive as progress and artifact chunks as the call's text while it runs;
a card without streaming is polled; an A2A 0.3 agent (the SDK's compatibility
mode) works both ways; a failed task is a `remote` error in its words; a task
that needs input asks the user at the terminal and the answer continues the same
task (with no one to answer, the call is a `remote` error and the task
cancelled); a cancel (SIGTERM to `ask`) cancels the remote task; a bearer token
goes by its variable's name; a dead URL is a clear error; `agent probe` shows the
card and a tool description made from it."""

import json
import os
import pathlib
import pty
import select
import signal
import subprocess
import threading
import time

import pytest

from aimock_peer import aimock, delegating_fixtures
from loopback import free_port, wait_for_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"
PYTHON = str(ROOT / ".venv" / "bin" / "python")
SERVER = str(pathlib.Path(__file__).with_name("a2a_server.py"))
WAIT = 30
QUESTION = "Please find out everything about the river Thames and its otters"


@pytest.fixture
def agent(tmp_path):
    """Starts the A2A agent; yields a function taking extra server env."""
    started = []

    def start(**env) -> str:
        port = int(env.pop("PORT", 0)) or free_port()
        environment = dict(os.environ, PORT=str(port), A2A_LOG=str(tmp_path / "a2a.log"), **env)
        process = subprocess.Popen([PYTHON, SERVER], env=environment, stderr=subprocess.DEVNULL)
        started.append(process)
        wait_for_port(port, process, "the A2A agent", WAIT)
        return f"http://127.0.0.1:{port}"

    start.started = started  # a test may stop one (to start the agent again on its port)
    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=WAIT)


def config_for(folder: pathlib.Path, url: str, **extra) -> pathlib.Path:
    config = {
        "primary": "assistant",
        "agents": [
            {"name": "assistant", "provider": "demo", "model": "demo-planner"},
            {"name": "scout", "provider": "a2a", "url": url, **extra},
        ],
        "agent_tools": [{"agent": "scout", "description": "A remote agent.", "approval": "auto"}],
    }
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return path


def command(config, folder, *arguments):
    return [str(BINARY), "--config", str(config), "--data-dir", str(folder / "data"), *arguments]


def environment_for(folder, env=None) -> dict:
    """What `ask` runs with: PATH, a HOME of the test's own, and `env`."""
    return {"PATH": os.environ["PATH"], "HOME": str(folder)} | (env or {})


def jsonl(stdout: str) -> list:
    """The events `ask --events jsonl` printed."""
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def run_ask(config, folder, message, *, agent=None, env=None, stdin=None):
    """One `switchboard ask --events jsonl` to its end (as `agent` when given): the
    finished process and its events."""
    chosen = ["--agent", agent] if agent else []
    finished = subprocess.run(
        command(config, folder, "ask", *chosen, "--events", "jsonl", message),
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=WAIT * 2,
        env=environment_for(folder, env),
    )
    return finished, jsonl(finished.stdout)


def ask(config, folder, env=None):
    """The primary asked QUESTION: the finished process and the scout call's events."""
    finished, events = run_ask(config, folder, QUESTION, env=env)
    started = next(e for e in events if e["type"] == "call_started" and e["agent"] == "scout")
    mine = [e for e in events if e["call_id"] == started["call_id"]]
    return finished, mine


def test_an_http_primary_delegates_to_a_streaming_agent_live(agent, tmp_path):
    url = agent()
    fixtures = delegating_fixtures("primary-m", "agent_scout", QUESTION, "The scout came back with four chunks.")
    with aimock(fixtures) as model:
        config = config_for(tmp_path, url)
        data = json.loads(config.read_text())
        data["agents"][0] = {"name": "assistant", "provider": "local", "url": model, "model": "primary-m"}
        config.write_text(json.dumps(data))
        finished, mine = ask(config, tmp_path)
    assert "The scout came back with four chunks." in finished.stdout
    assert finished.returncode == 0, finished.stderr
    kinds = [event["type"] for event in mine]
    texts = [event["text"] for event in mine if event["type"] == "text_delta"]
    assert texts == ["chunk0 ", "chunk1 ", "chunk2 ", "chunk3 "], "each artifact chunk streams as text"
    progress = [event["message"] for event in mine if event["type"] == "tool_progress"]
    assert "working: reading the sources" in progress
    assert kinds.index("text_delta") < kinds.index("call_finished")
    last = mine[-1]
    assert last["status"] == "ok" and last["result"] == "chunk0 chunk1 chunk2 chunk3 "


@pytest.mark.parametrize("streaming", ["1", "0"])
def test_an_agent_of_a2a_0_3_streams_or_is_polled_too(agent, tmp_path, streaming):
    url = agent(ONLY_V03="1", STREAMING=streaming)
    card = json.loads(subprocess.run(["curl", "-s", f"{url}/.well-known/agent-card.json"], capture_output=True).stdout)
    assert card.get("protocolVersion", "").startswith("0.3"), card
    finished, mine = ask(config_for(tmp_path, url), tmp_path)
    assert finished.returncode == 0, finished.stderr
    assert mine[-1]["status"] == "ok" and mine[-1]["result"] == "chunk0 chunk1 chunk2 chunk3 ", mine[-1]
    assert any(event["type"] == "text_delta" for event in mine)
    if streaming == "1":  # (polling sees the states that last past a poll)
        assert "working: reading the sources" in [e["message"] for e in mine if e["type"] == "tool_progress"]


def test_a_card_without_streaming_is_polled(agent, tmp_path):
    """Polled, and found through a `url` that names the card itself."""
    url = agent(STREAMING="0")
    finished, mine = ask(config_for(tmp_path, f"{url}/.well-known/agent-card.json"), tmp_path)
    assert finished.returncode == 0, finished.stderr
    assert mine[-1]["status"] == "ok" and mine[-1]["result"] == "chunk0 chunk1 chunk2 chunk3 "
    assert any(event["type"] == "text_delta" for event in mine)


def test_failures_input_required_tokens_and_dead_urls_say_what_and_where(agent, tmp_path):
    url = agent(A2A_TOKEN="t0ken-42")
    _, mine = ask(config_for(tmp_path, url), tmp_path)
    assert mine[-1]["error"]["kind"] == "http" and "401" in mine[-1]["error"]["message"]
    with_token = config_for(tmp_path, url, api_key_env="SCOUT_TOKEN")
    finished, mine = ask(with_token, tmp_path, {"SCOUT_TOKEN": "t0ken-42"})
    assert mine[-1]["status"] == "ok", mine[-1]
    assert "t0ken-42" not in finished.stdout + finished.stderr, "the token is never printed"

    plain = agent()
    config = config_for(tmp_path, plain)
    for message, expected in [("fail", "the scripted agent could not finish"), ("input", "the task needs input")]:
        _, events = run_ask(config, tmp_path, f"please {message} now", agent="scout")
        root = [event for event in events if event["type"] == "call_finished"][-1]
        assert root["error"]["kind"] == "remote" and expected in root["error"]["message"], root
    assert "Which river?" in root["error"]["message"]

    _, mine = ask(config_for(tmp_path, f"http://127.0.0.1:{free_port()}"), tmp_path)
    assert mine[-1]["error"]["kind"] == "unreachable" and "agent-card.json" in mine[-1]["error"]["message"]


@pytest.mark.parametrize("streaming", ["1", "0"])
def test_a_silent_task_is_ended_by_the_idle_timeout_and_cancelled(agent, tmp_path, streaming):
    """`idle_timeout_secs` holds for an A2A agent as for an HTTP model, streamed or
    polled (a task whose state and artifacts stay as they are is silent), and the
    remote task is cancelled."""
    url = agent(STREAMING=streaming)
    config = config_for(tmp_path, url, idle_timeout_secs=1)
    finished, events = run_ask(config, tmp_path, "quiet please", agent="scout")
    ended = [event for event in events if event["type"] == "call_finished" and event["agent"] == "scout"]
    assert ended, finished.stderr
    error = ended[-1]["error"]
    assert error["kind"] == "timeout" and "was silent for 1 s" in error["message"], error
    log = tmp_path / "a2a.log"
    deadline = time.monotonic() + WAIT
    while "cancel " not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "cancel " in log.read_text(), "the remote task got CancelTask"


def test_cancelling_the_call_cancels_the_remote_task(agent, tmp_path):
    url = agent()
    config = config_for(tmp_path, url)
    process = subprocess.Popen(
        command(config, tmp_path, "ask", "--agent", "scout", "--events", "jsonl", "slow please"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment_for(tmp_path),
    )
    deltas = 0
    for line in process.stdout:
        deltas += '"text_delta"' in line
        if deltas == 3:
            break
    assert deltas == 3
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=WAIT)
    assert process.returncode == 143
    log = tmp_path / "a2a.log"
    deadline = time.monotonic() + WAIT
    while "cancel " not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "cancel " in log.read_text(), "the remote task got CancelTask"


def test_probe_and_the_connection_test_show_the_card_and_a_description_made_from_it(agent, tmp_path):
    url = agent()
    config = config_for(tmp_path, url)
    shown = subprocess.run(
        [str(BINARY), "--config", str(config), "agent", "probe", "scout", "--json"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert shown.returncode == 0, shown.stderr
    card = json.loads(shown.stdout)
    assert card["name"] == "River Scout" and card["streaming"] is True
    assert card["endpoint"] == f"{url}/a2a"
    assert (
        card["description"]
        == "River Scout: Finds facts about rivers. Skills: River facts (Short facts about a river.)."
    )
    # The form's connection test (and `agent test`) offers the same description for the tool entry.
    tested = subprocess.run(
        [str(BINARY), "--config", str(config), "agent", "test", "scout", "--json"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    report = json.loads(tested.stdout)
    assert report["ok"] and report["description"] == card["description"], report


def test_a_question_of_the_remote_task_is_asked_at_the_terminal_and_the_answer_continues_it(agent, tmp_path):
    url = agent()
    config = config_for(tmp_path, url)
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        command(config, tmp_path, "ask", "--agent", "scout", "--events", "jsonl", "please input now"),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=terminal,
        text=True,
        env=environment_for(tmp_path),
    )
    os.close(terminal)
    seen = ""
    deadline = time.monotonic() + WAIT
    while "your answer" not in seen:
        assert time.monotonic() < deadline, f"no question was asked; the terminal showed: {seen!r}"
        ready, _, _ = select.select([controller], [], [], 1)
        if ready:
            seen += os.read(controller, 4096).decode(errors="replace")
    assert "scout asks: Which river?" in seen, seen
    os.write(controller, b"the Rhine\n")
    stdout, _ = process.communicate(timeout=WAIT)
    os.close(controller)
    assert process.returncode == 0, stdout
    events = jsonl(stdout)
    kinds = [event["type"] for event in events]
    assert kinds.index("input_requested") < kinds.index("input_answered") < kinds.index("call_finished")
    answered = next(event for event in events if event["type"] == "input_answered")
    assert answered["answer"] == "the Rhine" and answered["by"] == "user"
    assert events[-1]["status"] == "ok" and events[-1]["result"] == "Facts about the Rhine.", events[-1]
    log = (tmp_path / "a2a.log").read_text()
    assert "answered" in log and "the Rhine" in log, "the answer went to the same task"


def test_with_no_one_to_answer_the_question_is_declined_and_the_task_cancelled(agent, tmp_path):
    url = agent()
    config = config_for(tmp_path, url)
    _, events = run_ask(config, tmp_path, "please input now", agent="scout", stdin=subprocess.DEVNULL)
    answered = [event for event in events if event["type"] == "input_answered"]
    assert answered == [dict(answered[0], answer=None, by="policy")], answered
    assert events[-1]["error"]["kind"] == "remote"
    assert "the task needs input that was not given: Which river?" in events[-1]["error"]["message"]
    # The CLI waits for its CancelTask requests before it exits (finish_pending_cancels).
    assert "cancel " in (tmp_path / "a2a.log").read_text(), "the remote task was cancelled"


def steered_at_the_terminal(program: list, env: dict, line: bytes, after_deltas: int) -> tuple[int, list]:
    """Runs `program` (an `ask --events jsonl`) on a terminal; once it printed
    `after_deltas` text deltas, `line` is typed. Its exit code and events."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(program, stdin=terminal, stdout=subprocess.PIPE, stderr=terminal, text=True, env=env)
    os.close(terminal)
    lines = []
    for printed in process.stdout:
        lines.append(printed)
        if sum('"text_delta"' in seen for seen in lines) == after_deltas:
            break
    os.write(controller, line)
    rest, _ = process.communicate(timeout=WAIT * 2)
    os.close(controller)
    return process.returncode, jsonl("".join(lines) + rest)


@pytest.mark.parametrize("streaming", ["1", "0"])
def test_a_running_task_is_steered_from_the_terminal_with_a_message_on_the_task(agent, tmp_path, streaming):
    """A line typed while the call runs goes to the remote task as a message on it
    (its id and context), streamed or polled: the agent, which reads messages on its
    task as it works, stops and summarises; the call reports the message as taken.
    The server is the SDK's LegacyRequestHandler, which runs a message on a working
    task at once."""
    url = agent(HANDLER="legacy", STREAMING=streaming)
    program = command(config_for(tmp_path, url), tmp_path, "ask", "--agent", "scout", "--events", "jsonl", "dig in")
    code, events = steered_at_the_terminal(program, environment_for(tmp_path), b"stop and summarise\n", 3)
    assert code == 0, events[-3:]
    steered = [event for event in events if event["type"] == "call_steered"]
    assert steered == [dict(steered[0], message="stop and summarise", by="user", taken=True)], steered
    assert "why" not in steered[0]
    started = next(event for event in events if event["type"] == "call_started")
    assert started["steering"] == {"way": "on_task"}
    finished = events[-1]
    assert finished["type"] == "call_finished" and finished["status"] == "ok", finished
    assert "then stopped as asked." in finished["result"], finished["result"][-200:]
    assert finished["result"].startswith("chunk0 chunk1 chunk2 ")
    log = (tmp_path / "a2a.log").read_text()
    task = next(line.split()[1] for line in log.splitlines() if line.startswith("execute "))
    assert f"steered {task} stop and summarise" in log, "the message went on the same task"


def test_a_message_the_task_ends_without_reading_is_reported_as_not_taken(agent, tmp_path):
    """The SDK's default handler runs messages on a task one after another: a task
    that completes first never reads the message, and the call says so, and why.
    (The agent works until the message reaches its server, then completes.)"""
    url = agent()
    program = command(config_for(tmp_path, url), tmp_path, "ask", "--agent", "scout", "--events", "jsonl", "busy now")
    code, events = steered_at_the_terminal(program, environment_for(tmp_path), b"also the otters\n", 1)
    assert code == 0, events[-3:]
    steered = [event for event in events if event["type"] == "call_steered"]
    assert len(steered) == 1 and steered[0]["message"] == "also the otters", steered
    assert steered[0]["taken"] is False and steered[0]["why"] == "the task had ended (completed)", steered
    assert events[-1]["status"] == "ok" and events[-1]["result"].startswith("chunk0 ")
    assert "steered" not in (tmp_path / "a2a.log").read_text()


@pytest.mark.parametrize(
    "streaming, restarted", [("1", False), ("0", False), ("1", True)], ids=["streamed", "polled", "agent-restarted"]
)
def test_a_turn_killed_while_its_a2a_task_runs_is_resumed_following_that_task(agent, tmp_path, streaming, restarted):
    """`ask` killed with SIGKILL while the agent's task works; the task runs on there.
    `sessions resume` follows it by the id the log holds (`GetTask`) instead of
    sending the message again: the agent executed it once, and its answer ends the
    turn. An agent started again meanwhile (the task gone with it, TaskNotFound) has
    the message sent again, and the call says why."""
    go = tmp_path / "a2a.go"
    port = free_port()
    url = agent(STREAMING=streaming, A2A_GO=str(go), PORT=str(port))
    config = config_for(tmp_path, url)
    asking = subprocess.Popen(
        command(config, tmp_path, "ask", "--events", "jsonl", "--session", "work", "hold on to the Thames"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=environment_for(tmp_path),
    )
    processes = [asking]
    # A line that never comes fails the test instead of hanging it.
    timer = threading.Timer(WAIT * 4, lambda: [go.write_text("")] + [process.kill() for process in processes])
    timer.start()
    try:
        task = None
        for line in asking.stdout:
            event = json.loads(line) if line.startswith("{") else {}
            task = (event.get("data") or {}).get("a2a_task")
            if task:
                break
        assert task, "the call never named its task"
        asking.kill()
        asking.wait(timeout=WAIT)
        if restarted:
            first = agent.started.pop()
            first.terminate()
            first.wait(timeout=WAIT)
            agent(STREAMING=streaming, A2A_GO=str(go), PORT=str(port))

        resumed = subprocess.Popen(
            command(config, tmp_path, "sessions", "resume", "work", "--events", "jsonl"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment_for(tmp_path),
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
    finally:
        timer.cancel()
        go.write_text("")
    started = next(e for e in events if e.get("type") == "call_started" and e["agent"] == "scout")
    mine = [e for e in events if e.get("call_id") == started["call_id"]]
    followed = [e["data"]["reattached"]["task"] for e in mine if "reattached" in (e.get("data") or {})]
    assert followed == [task], mine
    said = [e["message"] for e in mine if e.get("type") == "tool_progress"]
    assert mine[-1]["status"] == "ok" and mine[-1]["result"] == "held answer", mine[-1]
    executed = [line for line in (tmp_path / "a2a.log").read_text().splitlines() if line.startswith("execute ")]
    if restarted:
        assert any(f"no longer has task {task} (Task not found)" in line for line in said), said
        assert len(executed) == 2 and executed[0] == f"execute {task}", "sent again: the task was gone"
    else:
        assert f"following task {task} again" in said and not any("no longer has" in line for line in said), said
        assert executed == [f"execute {task}"], "the agent executed the message once"
