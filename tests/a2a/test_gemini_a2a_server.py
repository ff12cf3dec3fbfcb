"""The `a2a` provider against Google's own A2A agent, `@google/gemini-cli-a2a-server`
(A2A 0.3, from tests/peers), backed by aimock's Gemini API: an HTTP primary on
aimock delegates to it in a `switchboard ask` turn. The server streams its answer
as `working` status messages and ends each turn `input-required` with `final:
true` and no artifacts; the call's answer is that text, streamed live, and the
turn is over (nobody is asked anything). An error of its model, which it reports
beside a status rather than as a failed task, fails the call in its words. A
message the call is steered with goes on its task, and the server hands it to its
model beside the running turn.

The server binds every interface and would fetch ripgrep and send usage
statistics: it gets a world that reaches loopback only (proxies to a closed
loopback port, its ripgrep already in place); `strace` checks it connects to
nothing else."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import urllib.request

import pytest
from test_a2a_remote import steered_at_the_terminal

from aimock_peer import aimock
from loopback import free_port, wait_for_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"
PEERS = ROOT / "tests" / "peers" / "node_modules"
SERVER = PEERS / "@google" / "gemini-cli-a2a-server" / "dist" / "a2a-server.mjs"
RIPGREP = PEERS / "@qwen-code" / "qwen-code" / "vendor" / "ripgrep" / "x64-linux" / "rg"
WAIT = 60

FIXTURES = {
    "fixtures": [
        # The primary, an OpenAI-compatible model: delegates, then sums up.
        {
            "match": {"model": "primary-m", "userMessage": "greet", "hasToolResult": False},
            "response": {
                "toolCalls": [{"id": "c1", "name": "agent_coder", "arguments": {"request": "PLAIN_HELLO Say hello."}}]
            },
        },
        {
            "match": {"model": "primary-m", "userMessage": "break", "hasToolResult": False},
            "response": {
                "toolCalls": [{"id": "c2", "name": "agent_coder", "arguments": {"request": "FAIL_400 Say hello."}}]
            },
        },
        {"match": {"model": "primary-m", "hasToolResult": True}, "response": {"content": "The coder came back."}},
        # The A2A server's Gemini model.
        {"match": {"userMessage": "PLAIN_HELLO"}, "response": {"content": "Hello from Google's agent, offline."}},
        {
            "match": {"userMessage": "FAIL_400"},
            "response": {"error": {"message": "Simulated bad request", "type": "invalid_request_error"}, "status": 400},
        },
    ]
}


@pytest.fixture
def google_agent(tmp_path):
    """Google's A2A server on a free port, pointed at `start(model_base)`'s Gemini
    API; yields the start function, and ends the server with the test."""
    started = []

    def start(model_base: str, trace: pathlib.Path | None = None) -> str:
        home = tmp_path / "server-home"
        (home / ".gemini" / "tmp" / "bin").mkdir(parents=True)
        shutil.copy(RIPGREP, home / ".gemini" / "tmp" / "bin" / "rg")
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "telemetry": {"enabled": False},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        }
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        port = free_port()
        closed = f"http://127.0.0.1:{free_port()}"
        environment = {
            "PATH": f"{PEERS / '.bin'}:{os.environ['PATH']}",
            "HOME": str(home),
            "TMPDIR": str(tmp_path),
            "CODER_AGENT_PORT": str(port),
            "CODER_AGENT_WORKSPACE_PATH": str(workspace),
            "GEMINI_API_KEY": "test-key",
            "GOOGLE_GEMINI_BASE_URL": model_base,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "HTTPS_PROXY": closed,
            "HTTP_PROXY": closed,
            "NO_PROXY": "127.0.0.1,localhost",
        }
        program = ["node", str(SERVER)]
        if trace:
            program = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace), *program]
        log = open(tmp_path / "server.log", "w")
        process = subprocess.Popen(
            program, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        started.append(process)
        wait_for_port(port, process, "Google's A2A server", WAIT)
        url = f"http://127.0.0.1:{port}"
        # It listens before its card is ready (tool discovery): wait for the card.
        deadline_card(url, process)
        return url

    yield start
    for process in started:
        os.killpg(process.pid, 15)
        process.wait(timeout=WAIT)


def deadline_card(url: str, process: subprocess.Popen) -> None:
    import time

    deadline = time.monotonic() + WAIT
    while True:
        try:
            with urllib.request.urlopen(f"{url}/.well-known/agent-card.json", timeout=5) as answer:
                if json.load(answer).get("name"):
                    return
        except OSError:
            pass
        assert process.poll() is None, "Google's A2A server exited before its card answered"
        assert time.monotonic() < deadline, "Google's A2A server's card did not answer in time"
        time.sleep(0.2)


def ask(tmp_path: pathlib.Path, model: str, agent_url: str, message: str):
    config = {
        "primary": "primary",
        "agents": [
            {"name": "primary", "provider": "local", "url": model, "model": "primary-m"},
            {"name": "coder", "provider": "a2a", "url": agent_url, "timeout_secs": 60},
        ],
        "agent_tools": [{"agent": "coder", "description": "Google's coding agent.", "approval": "auto"}],
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    finished = subprocess.run(
        [str(BINARY), "--config", str(path), "--data-dir", str(tmp_path / "data"), "ask", "--events", "jsonl", message],
        capture_output=True,
        text=True,
        timeout=WAIT * 2,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    events = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    started = next(e for e in events if e["type"] == "call_started" and e["agent"] == "coder")
    mine = [e for e in events if e["call_id"] == started["call_id"]]
    return finished, mine


def test_googles_agent_answers_in_status_messages_and_its_turn_ends(google_agent, tmp_path):
    with aimock(FIXTURES) as model:
        url = google_agent(model)
        finished, mine = ask(tmp_path, model, url, "Please greet.")
        assert finished.returncode == 0, finished.stderr
        end = mine[-1]
        assert end["type"] == "call_finished" and end["status"] == "ok", end
        assert end["result"] == "Hello from Google's agent, offline."
        texts = [e for e in mine if e["type"] == "text_delta"]
        assert texts and "".join(e["text"] for e in texts) == end["result"], "streamed live as text"
        assert not any(e["type"] == "input_requested" for e in mine), "nobody is asked anything"
        assert "The coder came back." in finished.stdout

        failed, mine = ask(tmp_path, model, url, "Please break.")
        end = mine[-1]
        assert end["status"] == "error", end
        assert end["error"]["kind"] == "remote"
        assert "Simulated bad request" in end["error"]["message"], end["error"]


def test_googles_agent_reaches_only_loopback(google_agent, tmp_path):
    trace = tmp_path / "connects.trace"
    with aimock(FIXTURES) as model:
        url = google_agent(model, trace=trace)
        finished, mine = ask(tmp_path, model, url, "Please greet.")
        assert mine[-1]["status"] == "ok", mine[-1]
    connects = [line for line in trace.read_text().splitlines() if "connect(" in line]
    outside = [
        line
        for line in connects
        if "AF_UNIX" not in line and not re.search(r'inet_addr\("127\.|"::1"|"::ffff:127\.', line)
    ]
    assert any('inet_addr("127.0.0.1")' in line for line in connects), "the trace saw its model calls"
    assert outside == [], outside


def test_a_message_steered_into_the_call_reaches_googles_model(google_agent, tmp_path):
    """A line typed at `ask` while Google's agent streams goes on its task; the
    server passes it to its model at once, beside the running turn (whose answer
    it does not change: the server keeps that reply in its history), and the
    call reports it taken and ends as usual."""
    steps = " ".join(f"step{index} of the dig" for index in range(60))
    fixtures = {
        "fixtures": [
            {"match": {"userMessage": "stop and summarise"}, "response": {"content": "Summary of the dig."}},
            {"match": {"userMessage": "DIG_SLOWLY"}, "response": {"content": steps}, "latency": 25},
        ]
    }
    with aimock(fixtures) as model:
        url = google_agent(model)
        config = {"primary": "coder", "agents": [{"name": "coder", "provider": "a2a", "url": url, "timeout_secs": 60}]}
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        arguments = ["--config", str(path), "--data-dir", str(tmp_path / "data"), "ask", "--events", "jsonl"]
        program = [str(BINARY), *arguments, "DIG_SLOWLY please"]
        environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
        code, events = steered_at_the_terminal(program, environment, b"stop and summarise\n", 3)
        with urllib.request.urlopen(f"{model}/__aimock/journal", timeout=5) as answer:
            journal = json.dumps(json.load(answer))
    assert code == 0, events[-3:]
    assert events[0]["steering"] == {"way": "on_task"}
    steered = [event for event in events if event["type"] == "call_steered"]
    assert [(event["message"], event["taken"]) for event in steered] == [("stop and summarise", True)], steered
    assert events[-1]["status"] == "ok" and events[-1]["result"] == steps, events[-1]
    assert "stop and summarise" in journal, "Google's model was sent the message"
