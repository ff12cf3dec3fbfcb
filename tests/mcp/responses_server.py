"""A scripted OpenAI Responses server for Codex as an MCP client: Codex offers MCP
tools to its model as a `namespace` tool and accepts a call only with that
namespace, which aimock's fixtures cannot emit. The first request is answered with
a call of `agent_echo` in the `mcp__switchboard` namespace; a request holding its
`function_call_output` with the echo agent's answer (argv[3]) is answered "The echo
agent said ping.", any other with "NO ANSWER". Every request body is appended, as
one JSON line, to the file argv[2]. Usage: responses_server.py PORT BODIES ANSWER."""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, BODIES, ANSWER = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def events(output_item: dict, usage: dict) -> bytes:
    response = {"id": "resp_1", "object": "response", "model": "codex-m", "status": "in_progress", "output": []}
    stream = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": output_item},
        {"type": "response.output_item.done", "output_index": 0, "item": output_item},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [output_item], "usage": usage},
        },
    ]
    return b"".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in stream)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(BODIES, "a") as log:
            log.write(body.decode("utf-8", "replace").replace("\n", " ") + "\n")
        request = json.loads(body)
        outputs = [item for item in request.get("input", []) if item.get("type") == "function_call_output"]
        usage = {"input_tokens": 50, "output_tokens": 5, "total_tokens": 55}
        if not outputs:
            item = {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_echo",
                "namespace": "mcp__switchboard",
                "name": "agent_echo",
                "arguments": json.dumps({"request": "ping"}),
                "status": "completed",
            }
        else:
            said = json.dumps(outputs)
            text = "The echo agent said ping." if ANSWER in said else "NO ANSWER in the tool result."
            item = {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        payload = events(item, usage)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
