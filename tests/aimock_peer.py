"""aimock (@copilotkit/aimock, from tests/peers) as the OpenAI-compatible model of a
test's primary agent: fixtures matched in order, on a free loopback port, stopped
with the test. Used by the Python suites whose primary must be a real HTTP model."""

import contextlib
import json
import pathlib
import subprocess
import tempfile

from loopback import free_port, wait_for_port

ROOT = pathlib.Path(__file__).resolve().parents[1]
AIMOCK = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "aimock"


def delegating_fixtures(model: str, tool: str, request: str, summary: str) -> dict:
    """The primary calls `tool` once with `request`, then answers `summary`."""
    return {
        "fixtures": [
            {
                "match": {"model": model, "hasToolResult": False},
                "response": {"toolCalls": [{"id": "call_1", "name": tool, "arguments": {"request": request}}]},
            },
            {"match": {"model": model, "hasToolResult": True}, "response": {"content": summary}},
        ]
    }


@contextlib.contextmanager
def aimock(fixtures: dict):
    """Yields the base URL of an aimock serving `fixtures`."""
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        fixtures_path = pathlib.Path(folder) / "fixtures.json"
        fixtures_path.write_text(json.dumps(fixtures))
        config_path = pathlib.Path(folder) / "aimock.json"
        llm = {"fixtures": str(fixtures_path), "chunkSize": 4, "latency": 0}
        config_path.write_text(json.dumps({"port": port, "host": "127.0.0.1", "llm": llm}))
        process = subprocess.Popen(
            [str(AIMOCK), "--config", str(config_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            wait_for_port(port, process, "aimock")
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(timeout=30)
