"""An MCP server built with the Python `mcp` package, for Switchboard's `mcp`
provider tests: `research(question)` streams progress and answers; `slow(task)`
reports progress until it is cancelled (it records its start and its
interruption in $REMOTE_LOG); `broken(task)` fails (isError); `fragile(task)`
answers with the server's pid, or exits the whole server mid-call when the task
says "crash"; `inspect(request, context)` answers with the arguments it was given
(and the folder it runs in);
`silent(task)` works a minute without a word unless cancelled (logged like `slow`);
`big(task)` answers $REMOTE_BIG_BYTES bytes at once; `chatty(task)` sends 200 progress
notifications back to back (each padded by $REMOTE_PROGRESS_PAD bytes) and answers;
`priced(task)` answers with the usage ($REMOTE_TOKENS input and output tokens each)
and cost ($REMOTE_COST) it claims.

  python remote_server.py              # stdio (REMOTE_STUBBORN=1: it ignores SIGTERM and
                                       # outlives its stdin, logging its pid in $REMOTE_LOG)
  python remote_server.py http PORT    # streamable HTTP at http://127.0.0.1:PORT/mcp
                                       # (REMOTE_TOKEN: require `Authorization: Bearer` it)
"""

import os
import sys
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent

server = MCPServer("remote-test", version="0.0.1")
LOG = os.environ.get("REMOTE_LOG")


def log(line: str) -> None:
    if LOG:
        with open(LOG, "a") as handle:
            handle.write(f"{time.time():.3f} {line}\n")


@server.tool()
async def research(question: str, ctx: Context = None) -> str:  # type: ignore[assignment]
    """Looks a question up, reporting each step."""
    for step, what in enumerate(["reading", "comparing", "writing"], start=1):
        await ctx.report_progress(step, 3, f"{what} about {question[:40]}")
        await anyio.sleep(0.05)
    return f"Remote findings on {question!r}: otters hold hands while sleeping."


@server.tool()
async def slow(task: str, ctx: Context = None) -> str:  # type: ignore[assignment]
    """Works until cancelled, reporting progress."""
    log(f"slow start pid={os.getpid()}")
    try:
        for step in range(2000):
            await ctx.report_progress(step + 1, None, f"working on {task[:20]} ({step + 1})")
            await anyio.sleep(0.05)
    except BaseException as error:
        log(f"slow interrupted {type(error).__name__}")
        raise
    return "finished"


@server.tool()
async def silent(task: str) -> str:
    """Works for a minute without a word (no progress) unless cancelled."""
    log(f"silent start pid={os.getpid()}")
    try:
        await anyio.sleep(60)
    except BaseException as error:
        log(f"silent interrupted {type(error).__name__}")
        raise
    return "finished"


@server.tool()
def broken(task: str) -> str:
    """Always fails."""
    raise ValueError(f"the remote tool could not do {task[:30]!r}")


@server.tool()
async def fragile(task: str) -> str:
    """Answers with this server's pid; crashes the server on "crash"."""
    if "crash" in task:
        os._exit(3)
    return f"served by pid {os.getpid()}"


@server.tool()
def inspect(request: str, context: dict | None = None) -> str:
    """Answers with the arguments it was called with, as JSON."""
    import json

    return json.dumps({"request": request, "context": context, "cwd": os.getcwd()})


@server.tool()
def big(task: str) -> str:
    """Answers $REMOTE_BIG_BYTES bytes of text at once (a result too large for some caps)."""
    return "x" * int(os.environ.get("REMOTE_BIG_BYTES", "1000"))


@server.tool()
def priced(task: str):
    tokens = int(os.environ.get("REMOTE_TOKENS", "10"))
    usage = {"input_tokens": tokens, "output_tokens": tokens, "total_tokens": tokens}
    return CallToolResult(
        content=[TextContent(type="text", text=f"priced: {task}")],
        structured_content={"usage_total": usage, "cost_total": float(os.environ.get("REMOTE_COST", "0.01"))},
    )


@server.tool()
async def chatty(task: str, ctx: Context = None) -> str:  # type: ignore[assignment]
    """Reports 200 steps of progress as fast as it can (each message padded with
    $REMOTE_PROGRESS_PAD bytes), then answers at once."""
    pad = "x" * int(os.environ.get("REMOTE_PROGRESS_PAD", "0"))
    for step in range(1, 201):
        await ctx.report_progress(step, 200, f"step {step}{pad}")
    return f"chatty done with {task[:20]}"


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        import uvicorn

        app = server.streamable_http_app()
        token = os.environ.get("REMOTE_TOKEN")
        if token:
            served = app

            async def app(scope, receive, send):
                headers = dict(scope.get("headers", []))
                if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b"a bearer token is needed"})
                    return
                await served(scope, receive, send)

        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        if os.environ.get("REMOTE_STUBBORN") == "1":
            import signal

            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            log(f"stubborn pid={os.getpid()}")
            server.run()
            time.sleep(600)  # its client went away: a well-behaved server would exit now
        else:
            server.run()
