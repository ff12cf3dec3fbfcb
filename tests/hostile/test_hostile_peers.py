"""Hostile peers through `switchboard ask`, as the engine meets them: servers that
echo the caller's key back (in an error, in an answer spelled out in chunks),
an A2A card or a redirect that points to another origin, a card that never
ends, an A2A agent that floods artifacts, an MCP server whose one line is over
the cap. Each ends with a clear error inside its timeout, no secret in any
output (events, stderr, the session log, `sessions export`, the next request to
the primary model) and no request to an origin the config did not name."""

import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

from aimock_peer import aimock
from hostile_common import mcp_client
from loopback import free_port, wait_for_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"
PYTHON = str(ROOT / ".venv" / "bin" / "python")
HOSTILE = str(pathlib.Path(__file__).with_name("hostile_server.py"))
REMOTE = str(ROOT / "tests" / "mcp" / "remote_server.py")
KEY = "sk-hostile-0123456789abcdef"
WAIT = 60


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The hostile server: its URL, and the log of what reached the other origin."""
    folder = tmp_path_factory.mktemp("hostile")
    port, other = free_port(), free_port()
    log = folder / "other-origin.log"
    process = subprocess.Popen([PYTHON, HOSTILE, str(port), str(other)], env=dict(os.environ, HOSTILE_LOG=str(log)))
    wait_for_port(port, process, "the hostile server")
    yield f"http://127.0.0.1:{port}", log, other
    process.terminate()
    process.wait(timeout=WAIT)


def primary_fixtures(tool: str) -> dict:
    """An aimock primary that calls `tool` once and says whether the key reached it."""
    return {
        "fixtures": [
            {
                "match": {"model": "boss-m", "hasToolResult": False},
                "response": {"toolCalls": [{"id": "call_1", "name": tool, "arguments": {"request": "go"}}]},
            },
            {"match": {"model": "boss-m", "toolResultContains": KEY}, "response": {"content": "THE KEY LEAKED"}},
            {"match": {"model": "boss-m", "hasToolResult": True}, "response": {"content": "The primary saw no key."}},
        ]
    }


def run(folder: pathlib.Path, primary_url: str, agent: dict, *more):
    """`ask` with an aimock primary delegating to `agent` (named "peer"), the key
    in HOSTILE_KEY: the finished process, its events and every byte it left."""
    config = {
        "primary": "boss",
        "agents": [
            {"name": "boss", "provider": "local", "url": primary_url, "model": "boss-m"},
            {"name": "peer", "timeout_secs": 30, "idle_timeout_secs": 20, **agent},
        ],
        "agent_tools": [{"agent": "peer", "description": "A peer.", "approval": "auto"}],
    }
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    data = folder / "data"
    base = [str(BINARY), "--config", str(path), "--data-dir", str(data)]
    environment = {"PATH": os.environ["PATH"], "HOME": str(folder), "HOSTILE_KEY": KEY}
    started = time.monotonic()
    finished = subprocess.run(
        [*base, "ask", "--session", "hostile", "--events", "jsonl", "go", *more],
        capture_output=True,
        text=True,
        timeout=WAIT * 2,
        env=environment,
    )
    took = time.monotonic() - started
    events = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    exported = subprocess.run(
        [*base, "sessions", "export", "hostile"], capture_output=True, text=True, timeout=WAIT, env=environment
    )
    logs = "".join(path.read_text(errors="replace") for path in data.rglob("*") if path.is_file())
    everything = finished.stdout + finished.stderr + exported.stdout + exported.stderr + logs
    return finished, events, everything, took


def peer_end(events: list) -> dict:
    started = next(event for event in events if event["type"] == "call_started" and event.get("agent") == "peer")
    return [event for event in events if event["call_id"] == started["call_id"]][-1]


def answer_of(events: list) -> str:
    return "".join(
        event.get("text", "") for event in events if event["type"] == "text_delta" and event.get("parent_id") is None
    )


# A subprocess agent given the key that prints it, in its answer and, failing, on stderr.
ECHO_AGENT = 'echo "my key is $HOSTILE_KEY" >&2; echo "token=$HOSTILE_KEY"; exit 3'


@pytest.mark.parametrize(
    "kind, path", [("local", "/echo-model"), ("mcp", "/mcp-echo"), ("a2a", "/echo-a2a"), ("subprocess", None)]
)
def test_a_server_that_echoes_the_key_in_its_error_leaks_it_nowhere(hostile, tmp_path, kind, path):
    url, _, _ = hostile
    agent = {"provider": kind, "url": url + (path or ""), "api_key_env": "HOSTILE_KEY"}
    if kind == "local":
        agent["model"] = "m"
    if kind == "subprocess":
        agent = {"provider": kind, "command": "sh", "args": ["-c", ECHO_AGENT], "api_key_env": "HOSTILE_KEY"}
    with aimock(primary_fixtures("agent_peer")) as model:
        finished, events, everything, _ = run(tmp_path, model, agent)
    end = peer_end(events)
    assert end["status"] == "error", end
    assert "[redacted]" in json.dumps(end), end
    assert "rmcp::" not in json.dumps(end), "an error names a Rust type"
    assert KEY not in everything
    assert "The primary saw no key." in answer_of(events), answer_of(events)


def test_an_answer_that_spells_the_key_out_in_chunks_reaches_no_one(hostile, tmp_path):
    url, _, _ = hostile
    agent = {"provider": "local", "url": url + "/echo-stream", "model": "m", "api_key_env": "HOSTILE_KEY"}
    with aimock(primary_fixtures("agent_peer")) as model:
        finished, events, everything, _ = run(tmp_path, model, agent)
    assert peer_end(events)["status"] == "ok"
    streamed = "".join(event["text"] for event in events if event["type"] == "text_delta" and event["parent_id"])
    assert streamed.count("[redacted]") == 2, streamed
    assert KEY not in everything
    assert "The primary saw no key." in answer_of(events)


@pytest.mark.parametrize("path, what", [("/elsewhere", "endpoint"), ("/redirect", "redirect")])
def test_an_a2a_agent_cannot_steer_the_call_or_its_token_to_another_origin(hostile, tmp_path, path, what):
    url, log, other = hostile
    before = log.read_text() if log.exists() else ""
    agent = {"provider": "a2a", "url": url + path, "api_key_env": "HOSTILE_KEY"}
    with aimock(primary_fixtures("agent_peer")) as model:
        finished, events, everything, _ = run(tmp_path, model, agent)
    end = peer_end(events)
    message = end["error"]["message"]
    here = url.rsplit(":", 1)[1]
    assert end["status"] == "error" and f"localhost:{other}" in message and f"localhost:{here}" in message, message
    assert "allowed_origins" in message and what in message, message
    after = log.read_text() if log.exists() else ""
    assert after == before, f"the other origin was reached: {after[len(before) :]}"
    assert KEY not in everything


def test_an_endless_card_and_an_artifact_flood_end_inside_the_cap(hostile, tmp_path):
    url, _, _ = hostile
    with aimock(primary_fixtures("agent_peer")) as model:
        _, events, _, _ = run(tmp_path, model, {"provider": "a2a", "url": url + "/huge-card"})
        card = peer_end(events)
        (tmp_path / "flood").mkdir()
        _, events, _, took = run(
            tmp_path / "flood", model, {"provider": "a2a", "url": url + "/flood", "max_output_bytes": 200000}
        )
        flood = peer_end(events)
    assert card["status"] == "error" and "agent card" in card["error"]["message"], card
    assert "1 MiB" in card["error"]["message"], card
    assert flood["status"] == "error" and "200000 bytes (max_output_bytes)" in flood["error"]["message"], flood
    assert took < 30, f"the flood was ended by the cap, not the 30 s timeout ({took:.1f} s)"


def test_an_mcp_line_over_the_cap_is_too_large_at_once_and_a_result_under_it_is_cut(tmp_path):
    stdio = {
        "provider": "mcp",
        "command": PYTHON,
        "args": [REMOTE],
        "tool": "big",
        "max_output_bytes": 20000,
        "env": {"REMOTE_BIG_BYTES": "200000"},
        "timeout_secs": 600,
    }
    with aimock(primary_fixtures("agent_peer")) as model:
        _, events, _, took = run(tmp_path, model, stdio)
        over = peer_end(events)
        (tmp_path / "cut").mkdir()
        stdio["env"] = {"REMOTE_BIG_BYTES": "30000"}
        _, events, _, _ = run(tmp_path / "cut", model, stdio)
        cut = peer_end(events)
    assert over["status"] == "error" and "too large" in over["error"]["message"], over
    assert took < 60, f"the call waited for its 600 s timeout ({took:.1f} s)"
    assert cut["status"] == "ok", cut
    finished = next(
        event for event in events if event["type"] == "call_finished" and event["call_id"] == cut["call_id"]
    )
    assert "output cut at 20000 bytes (max_output_bytes): 10000 more bytes" in json.dumps(finished), finished


@pytest.mark.parametrize(
    "claim",
    [
        {"REMOTE_COST": "-1e9", "REMOTE_TOKENS": "5"},
        {"REMOTE_COST": "0.5", "REMOTE_TOKENS": str(2**64 - 1)},
    ],
    ids=["negative-cost", "tokens-2^64-1"],
)
def test_a_peers_numbers_neither_lower_the_turns_cost_nor_crash_it(tmp_path, claim):
    stdio = {"provider": "mcp", "command": PYTHON, "args": [REMOTE], "tool": "priced", "env": claim}
    with aimock(primary_fixtures("agent_peer")) as model:
        finished, events, _, _ = run(tmp_path, model, stdio)
    assert finished.returncode == 0, finished.stderr
    assert "panicked" not in finished.stderr, finished.stderr
    peer = peer_end(events)
    root = [event for event in events if event["type"] == "call_finished" and event.get("parent_id") is None][-1]
    if claim["REMOTE_COST"].startswith("-"):
        # The claim is dropped: the call is unpriced, and the turn's cost is not lowered.
        assert peer.get("cost_total") is None, peer
        assert (root.get("cost_total") or 0) >= 0, root
    else:
        # A count past u64 saturates: "at least this much", which any token budget stops.
        assert peer["usage_total"]["total_tokens"] == 2**64 - 1, peer
        assert root["usage_total"]["input_tokens"] == 2**64 - 1, root
        assert peer["cost_total"] == 0.5, peer


def test_a_progress_flood_leaves_a_small_session_log(tmp_path):
    # 200 progress notifications of 1 MiB each: each is cut before it is shown or logged.
    stdio = {"provider": "mcp", "command": PYTHON, "args": [REMOTE], "tool": "chatty"}
    stdio["env"] = {"REMOTE_PROGRESS_PAD": str(1 << 20)}
    with aimock(primary_fixtures("agent_peer")) as model:
        finished, events, _, _ = run(tmp_path, model, stdio)
    assert finished.returncode == 0, finished.stderr[-2000:]
    end = peer_end(events)
    assert end["status"] == "ok", end
    progress = [
        e
        for e in events
        if e["type"] == "tool_progress" and e["call_id"] == end["call_id"] and e["message"].startswith("step ")
    ]
    assert len(progress) == 200 and all(len(e["message"]) < 5000 for e in progress), len(progress)
    assert len(json.dumps(progress[0].get("data"))) < 5000, "the notification's data was cut too"
    logged = sum(path.stat().st_size for path in (tmp_path / "data").rglob("*") if path.is_file())
    assert logged < 4 << 20, f"the session log holds {logged} bytes"


def test_an_agents_stderr_flood_is_kept_as_a_bounded_tail(tmp_path):
    # 300 MiB on stderr, then the reason, then a failure: the reason is said, memory stays small.
    script = "head -c 314572800 /dev/zero | tr '\\0' x >&2; echo; echo 'the real reason' >&2; exit 3"
    config = tmp_path / "config.json"
    agent = {"name": "noisy", "provider": "subprocess", "command": "sh", "args": ["-c", script]}
    config.write_text(json.dumps({"agents": [agent]}))
    measure = (
        "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(done.stderr[-3000:])"
    )
    command = [str(BINARY), "--config", str(config), "--data-dir", str(tmp_path / "data"), "ask", "hi"]
    measured = subprocess.run([PYTHON, "-c", measure, *command], capture_output=True, text=True, timeout=WAIT * 2)
    status, peak_kib = measured.stdout.split("\n", 1)[0].split()
    assert status == "1", measured.stdout[-3000:]
    assert "the real reason" in measured.stdout, measured.stdout[-3000:]
    assert int(peak_kib) < 100 * 1024, f"the CLI (or the agent) peaked at {int(peak_kib) // 1024} MiB"


def test_progress_sent_just_before_the_answer_arrives_whole_and_in_order(tmp_path):
    stdio = {"provider": "mcp", "command": PYTHON, "args": [REMOTE], "tool": "chatty"}
    with aimock(primary_fixtures("agent_peer")) as model:
        _, events, _, _ = run(tmp_path, model, stdio)
    end = peer_end(events)
    assert end["status"] == "ok", end
    steps = [
        event["message"]
        for event in events
        if event["type"] == "tool_progress"
        and event["call_id"] == end["call_id"]
        and event["message"].startswith("step ")
    ]
    assert steps == [f"step {step}" for step in range(1, 201)], steps[:5]


def test_an_endless_line_through_switchboard_mcp_ends_inside_the_cap(hostile, tmp_path):
    url, _, _ = hostile
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "agents": [
                    {
                        "name": "peer",
                        "provider": "local",
                        "url": url + "/endless",
                        "model": "m",
                        "max_output_bytes": 100000,
                        "timeout_secs": 30,
                    }
                ],
                "agent_tools": [{"agent": "peer", "description": "A peer.", "approval": "auto"}],
            }
        )
    )
    client = mcp_client(tmp_path, "agent_peer")
    started = time.monotonic()
    finished = subprocess.run(
        [PYTHON, str(client), str(BINARY), "--config", str(config), "--data-dir", str(tmp_path / "data"), "mcp"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    took = time.monotonic() - started
    assert finished.returncode == 0, finished.stderr
    outcome = json.loads(finished.stdout.splitlines()[-1])
    assert outcome["status"] == "error" and "over 100000 bytes" in json.dumps(outcome), outcome
    assert took < 30, f"ended by the 30 s timeout, not the cap ({took:.1f} s)"


def test_sigterm_during_an_endless_line_ends_ask_at_once(hostile, tmp_path):
    url, _, _ = hostile
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "primary": "peer",
                "agents": [
                    {
                        "name": "peer",
                        "provider": "local",
                        "url": url + "/endless",
                        "model": "m",
                        "max_output_bytes": 10_000_000_000,
                        "timeout_secs": 600,
                        "idle_timeout_secs": 600,
                    }
                ],
            }
        )
    )
    process = subprocess.Popen(
        [str(BINARY), "--config", str(config), "--data-dir", str(tmp_path / "data"), "ask", "--events", "jsonl", "go"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    # Once the stream has begun (the call's first event), the line is being read.
    first = process.stdout.readline()
    assert '"call_started"' in first, first
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=WAIT)
    assert process.returncode == 143, (process.returncode, stderr)
    assert "cancelled" in stderr, stderr


def test_an_mcp_http_answer_over_the_cap_closes_the_call_at_once_and_says_why(tmp_path):
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, REMOTE, "http", str(port)], env=dict(os.environ, REMOTE_BIG_BYTES="200000"), stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, server, "the MCP server")
        agent = {
            "provider": "mcp",
            "url": f"http://127.0.0.1:{port}/mcp",
            "tool": "big",
            "max_output_bytes": 20000,
            "timeout_secs": 600,
        }
        with aimock(primary_fixtures("agent_peer")) as model:
            _, events, _, took = run(tmp_path, model, agent)
    finally:
        server.terminate()
        server.wait(timeout=WAIT)
    end = peer_end(events)
    assert end["status"] == "error" and "over 85536 bytes" in end["error"]["message"], end
    assert took < 60, f"the call waited for its 600 s timeout ({took:.1f} s)"
