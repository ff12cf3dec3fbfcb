"""What the hostile-peer tests share: the demo config they start from, and a
real MCP client (the Python `mcp` package) that calls one tool of a stdio server."""

import json
import pathlib

DEMO = {
    "primary": "assistant",
    "agents": [
        {"name": "assistant", "provider": "demo", "model": "demo-planner"},
        {"name": "helper", "provider": "demo", "model": "demo-echo"},
    ],
    "agent_tools": [{"agent": "helper", "description": "Echoes.", "approval": "auto"}],
}


def demo_config(folder: pathlib.Path) -> pathlib.Path:
    """A demo primary and a demo helper it may call unasked, written to `folder`."""
    path = folder / "config.json"
    path.write_text(json.dumps(DEMO))
    return path


def mcp_client(folder: pathlib.Path, tool: str) -> pathlib.Path:
    """A client script: `python SCRIPT COMMAND ARGS...` starts the server, prints
    "ready", calls `tool` with a request and prints the structured result."""
    script = folder / "client.py"
    script.write_text(f"""
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            print("ready", flush=True)
            result = await session.call_tool({tool!r}, {{"request": "go"}})
            print(json.dumps(result.structured_content), flush=True)

asyncio.run(main())
""")
    return script
