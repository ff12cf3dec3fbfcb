"""Trace export read back through a real OpenTelemetry backend: Arize Phoenix on
loopback (offline, its own working folder). A nested turn on aimock's models
with two delegates, one denied by the config, is run by `switchboard ask` with
only the standard variable set; Phoenix's REST API must then hold the same tree: agents,
tools and model steps as its AGENT, TOOL and LLM spans, tokens where it counts
them, the denied call as an error, the session as its session. A stored session
sent with `sessions export --otlp` arrives the same way."""

import json
import os
import pathlib
import signal
import subprocess
import time
import urllib.request

import pytest

from aimock_peer import aimock
from loopback import free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"
PHOENIX = os.environ.get("PHOENIX", str(ROOT / ".venv-phoenix" / "bin" / "phoenix"))
WAIT = 120  # seconds Phoenix may take to start or to file spans on a loaded machine


def get(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read() or b"null")


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    folder = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    environment = dict(
        os.environ,
        PHOENIX_WORKING_DIR=str(folder),
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(port),
        PHOENIX_GRPC_PORT=str(free_port()),
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
        PHOENIX_DISABLE_AGENT_ASSISTANT="true",
        PHOENIX_ENABLE_MCP_SERVER="false",
    )
    log = open(folder / "phoenix.log", "w")
    process = subprocess.Popen(
        [PHOENIX, "serve"], env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                get(f"{base}/readyz")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"Phoenix did not start: {(folder / 'phoenix.log').read_text()[-2000:]}")
                time.sleep(0.25)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        log.close()


FIXTURES = {
    "fixtures": [
        {
            "match": {"model": "primary-m", "hasToolResult": False},
            "response": {
                "toolCalls": [
                    {"id": "call_1", "name": "agent_researcher", "arguments": {"request": "find the facts"}},
                    {"id": "call_2", "name": "agent_summariser", "arguments": {"request": "summarise them"}},
                ]
            },
        },
        {"match": {"model": "primary-m", "hasToolResult": True}, "response": {"content": "Here is what came back."}},
        {"match": {"model": "researcher-m"}, "response": {"content": "Three facts about delegation."}},
    ]
}


def model_config(folder: pathlib.Path, model: str) -> pathlib.Path:
    """Agents on aimock's models; the summariser denied by the config."""

    def agent(name: str, model_name: str) -> dict:
        return {"name": name, "provider": "local", "url": model, "model": model_name, "timeout_secs": 30}

    config = {
        "primary": "assistant",
        "agents": [
            agent("assistant", "primary-m") | {"prices": {"input_per_million": 1.0, "output_per_million": 2.0}},
            agent("researcher", "researcher-m") | {"prices": {"input_per_million": 3.0, "output_per_million": 15.0}},
            agent("summariser", "summariser-m"),
        ],
        "agent_tools": [
            {"agent": "researcher", "description": "Finds facts.", "approval": "auto"},
            {"agent": "summariser", "description": "Summarises.", "approval": "deny"},
        ],
    }
    path = folder / "config.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def switchboard(config, data_dir, *arguments, **variables):
    environment = {"PATH": os.environ["PATH"], "HOME": str(data_dir)} | variables
    return subprocess.run(
        [str(BINARY), "--config", str(config), "--data-dir", str(data_dir), *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


def spans_of(base: str, project: str, at_least: int) -> list:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            spans = get(f"{base}/v1/projects/{project}/spans?limit=200")["data"]
        except OSError:
            spans = []  # the project appears with its first span
        if len(spans) >= at_least or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


def check_tree(spans: list, session: str) -> None:
    by_name = {span["name"]: span for span in spans}
    names = sorted(by_name)
    for expected in [
        "invoke_agent assistant",
        "execute_tool agent_researcher",
        "invoke_agent researcher",
        "chat researcher-m",
        "execute_tool agent_summariser",
        "invoke_agent summariser",
        "chat primary-m",
    ]:
        assert expected in by_name, f"{expected} missing from {names}"

    def span_id(name):
        return by_name[name]["context"]["span_id"]

    def parent(name):
        return by_name[name]["parent_id"]

    assert parent("invoke_agent assistant") is None
    assert parent("execute_tool agent_researcher") == span_id("invoke_agent assistant")
    assert parent("invoke_agent researcher") == span_id("execute_tool agent_researcher")
    assert parent("chat researcher-m") == span_id("invoke_agent researcher")
    assert parent("invoke_agent summariser") == span_id("execute_tool agent_summariser")
    assert len({span["context"]["trace_id"] for span in spans}) == 1, "one trace per turn"
    # Where Phoenix shows them: kinds, tokens on the model spans, agent names, the session.
    assert by_name["invoke_agent researcher"]["span_kind"] == "AGENT"
    assert by_name["execute_tool agent_researcher"]["span_kind"] == "TOOL"
    chat = by_name["chat researcher-m"]
    assert chat["span_kind"] == "LLM"
    assert chat["attributes"]["llm.token_count.prompt"] > 0
    assert chat["attributes"]["llm.token_count.completion"] > 0
    assert by_name["invoke_agent researcher"]["attributes"]["gen_ai.agent.name"] == "researcher"
    assert by_name["invoke_agent assistant"]["attributes"]["session.id"] == session
    # The denied call is visible as an error, with why.
    denied = by_name["invoke_agent summariser"]
    assert denied["status_code"] == "ERROR" and denied["status_message"].startswith("denied")
    assert denied["attributes"]["error.type"] == "denied"
    assert "switchboard.refused" in [event["name"] for event in denied["events"]]


def test_a_nested_turn_shows_in_phoenix_as_in_the_app(phoenix, tmp_path):
    with aimock(FIXTURES) as model:
        asked = run_turn(phoenix, model, tmp_path)
    assert asked.returncode == 0, asked.stderr
    assert "warning" not in asked.stderr, asked.stderr
    spans = spans_of(phoenix, "sb-live", 7)
    check_tree(spans, "traced")
    cost = next(span for span in spans if span["name"] == "invoke_agent researcher")["attributes"][
        "switchboard.cost_usd"
    ]
    assert cost > 0, "our own cost, from the agent's prices, is on its span"


def run_turn(phoenix, model, tmp_path):
    config = model_config(tmp_path, model)
    return switchboard(
        config,
        tmp_path / "data",
        "ask",
        "--session",
        "traced",
        "--events",
        "none",
        "Explain how agents call agents as tools, with an example",
        OTEL_EXPORTER_OTLP_ENDPOINT=phoenix,
        OTEL_SERVICE_NAME="sb-live",
    )


def test_a_stored_session_is_exported_after_the_fact(phoenix, tmp_path):
    data = tmp_path / "data"
    with aimock(FIXTURES) as model:
        config = model_config(tmp_path, model)
        asked = switchboard(config, data, "ask", "--session", "later", "--events", "none", "Explain delegation")
    assert asked.returncode == 0, asked.stderr
    exported = switchboard(
        config,
        data,
        "sessions",
        "export",
        "later",
        "--otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT=phoenix,
        OTEL_SERVICE_NAME="sb-export",
    )
    assert exported.returncode == 0, exported.stderr
    assert "exported 1 turn(s)" in exported.stdout
    check_tree(spans_of(phoenix, "sb-export", 7), "later")


def test_export_without_an_endpoint_says_where_to_set_one(tmp_path):
    data = tmp_path / "data"
    with aimock(FIXTURES) as model:
        config = model_config(tmp_path, model)
        switchboard(config, data, "ask", "--session", "s", "--events", "none", "hi")
    refused = switchboard(config, data, "sessions", "export", "s", "--otlp")
    assert refused.returncode == 1
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in refused.stderr
