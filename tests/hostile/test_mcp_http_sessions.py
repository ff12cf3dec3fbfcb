"""`switchboard mcp --http` under a client that opens sessions and never closes
them: past `--max-sessions` the oldest is closed (its id is refused), and the
server's memory stays flat across 1,000 `initialize`s and hostile calls (a
`tools/call` with arguments that are not an object, a progress token of its
own, the first answered `invalid params` naming `arguments`)."""

import json
import os
import pathlib
import subprocess
import urllib.error
import urllib.request

from hostile_common import demo_config
from loopback import free_port, wait_for_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "switchboard"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}},
}


def post(url: str, body: dict, session: str | None = None):
    headers = dict(HEADERS, **({"Mcp-Session-Id": session} if session else {}))
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.headers.get("Mcp-Session-Id"), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, None, error.read()


def rss_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_sessions_are_capped_and_memory_stays_flat_across_a_thousand_hostile_clients(tmp_path):
    config = demo_config(tmp_path)
    port = free_port()
    server = subprocess.Popen(
        [
            str(BINARY),
            "--config",
            str(config),
            "--data-dir",
            str(tmp_path / "data"),
            "mcp",
            "--http",
            f"127.0.0.1:{port}",
            "--max-sessions",
            "16",
        ],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server, "switchboard mcp --http")
        url = f"http://127.0.0.1:{port}/mcp"

        def hostile_client(n: int) -> str:
            status, session, _ = post(url, INITIALIZE)
            assert status == 200 and session, status
            post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
            _, _, refused = post(
                url,
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "agent_helper", "arguments": f"not an object {n}"},
                },
                session,
            )
            assert b"-32602" in refused and b"arguments" in refused, refused
            post(
                url,
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {
                        "name": "agent_helper",
                        "arguments": {"request": f"echo {n}"},
                        "_meta": {"progressToken": f"mine-{n}"},
                    },
                },
                session,
            )
            return session

        first = hostile_client(0)
        for n in range(1, 200):
            hostile_client(n)
        warm = rss_kib(server.pid)
        for n in range(200, 1000):
            hostile_client(n)
        after = rss_kib(server.pid)
        status, _, _ = post(url, {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, first)
        assert status == 404, f"the oldest session was not closed past the cap (HTTP {status})"
        print(f"RSS after 200 clients {warm} KiB, after 1,000 {after} KiB")
        assert after - warm < 16 * 1024, f"memory grew {after - warm} KiB over 800 clients"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_blank_or_guessable_token_is_refused_in_words(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"agents": [{"name": "a", "provider": "demo"}]}))
    for weak in [" ", "abc", " padded-token-value "]:
        finished = subprocess.run(
            [str(BINARY), "--config", str(config), "mcp", "--http", "127.0.0.1:0", "--token-env", "WEAK"],
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "WEAK": weak},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert finished.returncode == 1 and "too weak" in finished.stderr, (weak, finished.stderr)


def test_a_body_that_is_not_json_rpc_is_a_parse_error_not_a_wrong_media_type(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"agents": [{"name": "a", "provider": "demo"}]}))
    port = free_port()
    server = subprocess.Popen(
        [str(BINARY), "--config", str(config), "mcp", "--http", f"127.0.0.1:{port}"],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server, "switchboard mcp --http")
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp", data=b"{not json", headers=HEADERS, method="POST"
        )
        try:
            urllib.request.urlopen(request, timeout=30)
            raise AssertionError("a broken body was accepted")
        except urllib.error.HTTPError as error:
            assert error.code == 400 and json.loads(error.read())["error"]["code"] == -32700
    finally:
        server.terminate()
        server.wait(timeout=30)
