"""An A2A 1.0 agent built with the Python `a2a-sdk` (no model: answers from a
script), for Switchboard's `a2a` provider tests. The message decides:
  "slow"   streams chunks for minutes (to be cancelled; the cancel is logged)
  "input"  asks a question (input-required); the answer, sent to the same task,
           comes back as "Facts about <answer>."
  "fail"   raises (the task fails)
  "quiet"  says it works, then nothing for a minute (to be timed out; the cancel is logged)
  "quick"  one artifact and completed at once (the benchmark's trivial call)
  else     a working status, four artifact chunks, completed

Env: PORT, STREAMING=0 (the card says it does not stream: clients poll),
     ONLY_V03=1 (the card offers A2A 0.3 only, served by the SDK's compatibility mode),
     A2A_TOKEN (require `Authorization: Bearer $A2A_TOKEN`), A2A_LOG (executor log).
"""

import asyncio
import os

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, Task, TaskState, TaskStatus
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse

PORT = int(os.environ["PORT"])
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = os.environ.get("A2A_TOKEN")
ONLY_V03 = os.environ.get("ONLY_V03") == "1"
LOG = os.environ.get("A2A_LOG")


def log(line: str) -> None:
    if LOG:
        with open(LOG, "a") as handle:
            handle.write(line + "\n")


class Scripted(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )
        updater = TaskUpdater(event_queue=event_queue, task_id=context.task_id, context_id=context.context_id)
        asked = (
            context.current_task is not None
            and context.current_task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        )
        if asked:
            log(f"answered {context.task_id} {text}")
            await updater.add_artifact(parts=[Part(text=f"Facts about {text}.")], artifact_id="answer", name="answer")
            await updater.complete()
            return
        if "input" in text:
            await updater.requires_input(message=updater.new_agent_message(parts=[Part(text="Which river?")]))
            return
        if "quick" in text:
            await updater.add_artifact(parts=[Part(text="quick answer")], artifact_id="answer", name="answer")
            await updater.complete()
            return
        await updater.start_work(message=updater.new_agent_message(parts=[Part(text="reading the sources")]))
        if "fail" in text:
            raise RuntimeError("the scripted agent could not finish")
        if "quiet" in text:
            log(f"execute {context.task_id}")
            await asyncio.sleep(60)
            await updater.complete()
            return
        slow = "slow" in text
        chunks = [f"chunk{index} " for index in range(4000 if slow else 4)]
        log(f"execute {context.task_id}")
        try:
            for index, chunk in enumerate(chunks):
                await asyncio.sleep(0.05)
                await updater.add_artifact(
                    parts=[Part(text=chunk)],
                    artifact_id="answer",
                    name="answer",
                    append=index > 0,
                    last_chunk=index == len(chunks) - 1,
                )
        except asyncio.CancelledError:
            log(f"interrupted {context.task_id}")
            raise
        await updater.complete(message=updater.new_agent_message(parts=[Part(text="done")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        log(f"cancel {context.task_id}")
        updater = TaskUpdater(event_queue=event_queue, task_id=context.task_id, context_id=context.context_id or "")
        await updater.cancel(message=updater.new_agent_message(parts=[Part(text="cancelled by request")]))


card = AgentCard(
    name="River Scout",
    description="Finds facts about rivers.",
    version="0.1.0",
    supported_interfaces=[
        AgentInterface(protocol_binding="JSONRPC", protocol_version="0.3" if ONLY_V03 else "1.0", url=f"{BASE}/a2a")
    ],
    capabilities=AgentCapabilities(streaming=os.environ.get("STREAMING", "1") == "1"),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="facts", name="River facts", description="Short facts about a river.", tags=["rivers"])],
)


class BearerAuth:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if TOKEN and scope["type"] == "http" and scope["path"] != AGENT_CARD_WELL_KNOWN_PATH:
            if dict(scope["headers"]).get(b"authorization", b"").decode() != f"Bearer {TOKEN}":
                response = JSONResponse({"error": "unauthorized"}, status_code=401)
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


handler = DefaultRequestHandler(agent_executor=Scripted(), task_store=InMemoryTaskStore(), agent_card=card)
routes = create_agent_card_routes(agent_card=card) + create_jsonrpc_routes(
    handler, rpc_url="/a2a", enable_v0_3_compat=ONLY_V03
)
app = Starlette(routes=routes, middleware=[Middleware(BearerAuth)])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
