"""An A2A 1.0 agent built with the Python `a2a-sdk` (no model: answers from a
script), for Switchboard's `a2a` provider tests. The message decides:
  "slow"   streams chunks for minutes (to be cancelled; the cancel is logged)
  "input"  asks a question (input-required); the answer, sent to the same task,
           comes back as "Facts about <answer>."
  "fail"   raises (the task fails)
  "quiet"  says it works, then nothing for a minute (to be timed out; the cancel is logged)
  "quick"  one artifact and completed at once (the benchmark's trivial call)
  "dig"    streams chunks for minutes, reading the messages sent on its task
           meanwhile: one that says "stop and summarise" ends it with a summary
  "busy"   streams chunks until a message arrives on its task (the handler saw
           it; the default handler keeps it for after this one), then completes
  "hold"   works until the file $A2A_GO exists, then answers "held answer" (a
           task that outlives its caller; its execution is logged)
  else     a working status, four artifact chunks, completed
A message on a task that is working is a steer: logged, acknowledged with a
working status, and handed to the running execution; its own execution then waits
for the task to end (the legacy handler closes a task's event queue when any of
its executions returns).

Env: PORT, STREAMING=0 (the card says it does not stream: clients poll),
     HANDLER=legacy (the SDK's LegacyRequestHandler, which runs a message on a
     working task at once, beside the running one, as 0.3 servers and the JS SDK
     do; the default handler runs messages on a task one after another),
     ONLY_V03=1 (the card offers A2A 0.3 only, served by the SDK's compatibility mode),
     A2A_TOKEN (require `Authorization: Bearer $A2A_TOKEN`), A2A_LOG (executor log), A2A_GO (what "hold" waits for).
"""

import asyncio
import os

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, LegacyRequestHandler
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


# Messages sent on a working task, by task id, for its running execution; and
# whether that execution has ended.
STEERS: dict[str, asyncio.Queue] = {}
ENDED: dict[str, asyncio.Event] = {}
# Tasks a message was sent on (as the request handler received it).
SENT_ON: set[str] = set()


async def dig(context: RequestContext, updater: TaskUpdater) -> None:
    """Streams chunks until a message on the task says to stop and summarise."""
    steers = STEERS.setdefault(context.task_id, asyncio.Queue())
    log(f"execute {context.task_id}")
    try:
        await read_and_dig(steers, updater)
    finally:
        ENDED.setdefault(context.task_id, asyncio.Event()).set()


async def read_and_dig(steers: asyncio.Queue, updater: TaskUpdater) -> None:
    for index in range(6000):
        while not steers.empty():
            steer = steers.get_nowait()
            if "stop and summarise" in steer:
                summary = f"Summary: {index} chunks read, then stopped as asked."
                await updater.add_artifact(parts=[Part(text=summary)], artifact_id="summary", name="summary")
                await updater.complete()
                return
        await updater.add_artifact(
            parts=[Part(text=f"chunk{index} ")], artifact_id="answer", name="answer", append=index > 0
        )
        await asyncio.sleep(0.05)
    await updater.complete()


class Scripted(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        working = context.current_task is not None and context.current_task.status.state == TaskState.TASK_STATE_WORKING
        if working:
            log(f"steered {context.task_id} {text}")
            STEERS.setdefault(context.task_id, asyncio.Queue()).put_nowait(text)
            updater = TaskUpdater(event_queue=event_queue, task_id=context.task_id, context_id=context.context_id)
            await updater.start_work(message=updater.new_agent_message(parts=[Part(text="taking the new message")]))
            await ENDED.setdefault(context.task_id, asyncio.Event()).wait()
            return
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
        if "dig" in text:
            await dig(context, updater)
            return
        if "busy" in text:
            index = 0
            while context.task_id not in SENT_ON:
                await updater.add_artifact(
                    parts=[Part(text=f"chunk{index} ")], artifact_id="answer", name="answer", append=index > 0
                )
                index += 1
                await asyncio.sleep(0.05)
            await updater.complete()
            return
        if "hold" in text:
            log(f"execute {context.task_id}")
            await updater.start_work(message=updater.new_agent_message(parts=[Part(text="holding")]))
            while not os.path.exists(os.environ["A2A_GO"]):
                await asyncio.sleep(0.05)
            await updater.add_artifact(parts=[Part(text="held answer")], artifact_id="answer", name="answer")
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


Handler = LegacyRequestHandler if os.environ.get("HANDLER") == "legacy" else DefaultRequestHandler


class Noting(Handler):
    """Notes the task each message is sent on, then handles it as the SDK does."""

    async def on_message_send(self, params, context):
        if params.message.task_id:
            SENT_ON.add(params.message.task_id)
        return await super().on_message_send(params, context)


handler = Noting(agent_executor=Scripted(), task_store=InMemoryTaskStore(), agent_card=card)
routes = create_agent_card_routes(agent_card=card) + create_jsonrpc_routes(
    handler, rpc_url="/a2a", enable_v0_3_compat=ONLY_V03
)
app = Starlette(routes=routes, middleware=[Middleware(BearerAuth)])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
