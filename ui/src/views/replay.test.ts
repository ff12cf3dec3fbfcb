/** Replaying a session log: messages, trees, retractions, an interrupted turn, a failed one, one still running. */
import { describe, expect, it } from "vitest";
import type { SessionRecord } from "../bindings";
import { replaySession } from "./replay";

const event = (
  turnId: string,
  seq: number,
  kind: Record<string, unknown>,
  callId = "c1",
  parentId: string | null = null,
) =>
  ({
    type: "event",
    turn_id: turnId,
    event: {
      seq,
      ts_ms: seq,
      call_id: callId,
      parent_id: parentId,
      agent: parentId ? "researcher" : "assistant",
      depth: parentId ? 1 : 0,
      ...kind,
    },
  }) as SessionRecord;
const started = { type: "call_started", role: "turn", tool_name: null, input: null, tools: [], model: null };

describe("replaySession", () => {
  it("rebuilds messages and trees, drops retracted turns and marks an interrupted one", () => {
    const records: SessionRecord[] = [
      { type: "created", title: "Chat", created_ms: 1 },
      { type: "user_message", turn_id: "t1", text: "first question", agent: null, ts_ms: 2 },
      event("t1", 1, started),
      event("t1", 2, { ...started, role: "tool", tool_name: "agent_researcher" }, "c2", "c1"),
      event("t1", 3, { type: "text_delta", text: "Answer one" }),
      { type: "turn_ended", turn_id: "t1", status: "ok", text: "Answer one", answered_by: "assistant" },
      { type: "user_message", turn_id: "t2", text: "taken back", agent: null, ts_ms: 3 },
      { type: "retracted", turn_id: "t2" },
      { type: "renamed", title: "Renamed chat" },
      { type: "user_message", turn_id: "t3", text: "@expert killed midway", agent: "expert", ts_ms: 4 },
      event("t3", 1, started),
      event("t3", 2, { type: "text_delta", text: "Half an ans" }),
    ];
    const replayed = replaySession(records);
    expect(replayed.title).toBe("Renamed chat");
    expect(replayed.entries.map((entry) => [entry.role, entry.content, entry.status])).toEqual([
      ["user", "first question", "done"],
      ["assistant", "Answer one", "done"],
      ["user", "@expert killed midway", "done"],
      ["assistant", "Half an ans", "interrupted"],
    ]);
    expect(replayed.turns.map((turn) => turn.turnId)).toEqual(["t1", "t3"]);
    expect([...replayed.trees.keys()]).toEqual(["t1", "t3"]);
    expect(replayed.trees.get("t1")?.nodes.get("c1")?.children).toEqual(["c2"]);
  });

  it("marks a turn the core found interrupted as resumable, saying what finished, and drops one that was resumed", () => {
    const records: SessionRecord[] = [
      { type: "created", title: "Chat", created_ms: 1 },
      { type: "user_message", turn_id: "t1", text: "do both", agent: null, ts_ms: 2 },
      event("t1", 1, started),
      { type: "user_message", turn_id: "t2", text: "again", agent: null, ts_ms: 3 },
      event("t2", 1, started),
      { type: "user_message", turn_id: "t3", text: "do both", agent: null, ts_ms: 4 },
      { type: "resumed", turn_id: "t3", of_turn: "t1" },
      { type: "turn_ended", turn_id: "t3", status: "ok", text: "both done", answered_by: "assistant" },
    ];
    const waiting = [{ call_id: "c3", agent: "slow", asked_by: "assistant", depth: 1, request: "take your time" }];
    const replayed = replaySession(records, new Set(), [
      { turn_id: "t2", finished: ["fast"], running: ["slow"], waiting },
    ]);
    expect(replayed.entries.map((entry) => [entry.turnId, entry.role, entry.status, entry.resumable ?? false])).toEqual(
      [
        ["t2", "user", "done", false],
        ["t2", "assistant", "interrupted", true],
        ["t3", "user", "done", false],
        ["t3", "assistant", "done", false],
      ],
    );
    expect(replayed.entries[1].error).toContain("Finished: fast. Was running: slow.");
    expect(replayed.entries[1].error).toContain(
      'slow was waiting for your approval (asked by assistant, depth 1): "take your time"; Resume asks again.',
    );
    expect([...replayed.trees.keys()]).toEqual(["t2", "t3"]);
    // Nothing runs the interrupted turn's calls now: the tree says so, its clock stopped.
    const root = replayed.trees.get("t2")?.nodes.get("c1");
    expect([root?.status, root?.finishedMs]).toEqual(["interrupted", 1]);
  });

  it("keeps a handoff's @agent on the message and every step of the answer, as the chat showed them", () => {
    const records: SessionRecord[] = [
      { type: "created", title: "Chat", created_ms: 1 },
      // The engine logs the message without its handoff prefix, and the agent beside it.
      { type: "user_message", turn_id: "t1", text: "say hi", agent: "assistant", ts_ms: 2 },
      event("t1", 1, started),
      event("t1", 2, { type: "text_delta", text: "Let me ask the echo agent." }),
      event("t1", 3, { ...started, role: "tool", tool_name: "agent_echo" }, "c2", "c1"),
      event("t1", 4, { type: "text_delta", text: "The echo said hi." }),
      { type: "turn_ended", turn_id: "t1", status: "ok", text: "The echo said hi.", answered_by: "assistant" },
    ];
    const { entries } = replaySession(records);
    expect(entries.map((entry) => entry.content)).toEqual([
      "@assistant say hi",
      "Let me ask the echo agent.\n\nThe echo said hi.",
    ]);
  });

  it("shows a message sent to an agent picked in the window as it was typed: without an @agent", () => {
    const records: SessionRecord[] = [
      { type: "created", title: "Chat", created_ms: 1 },
      {
        type: "user_message",
        turn_id: "t1",
        text: "Tell me about mock models",
        agent: "mock",
        handoff: false,
        ts_ms: 2,
      },
      { type: "user_message", turn_id: "t2", text: "and now", agent: "mock", handoff: true, ts_ms: 3 },
    ];
    const { entries } = replaySession(records);
    expect(entries.filter((entry) => entry.role === "user").map((entry) => entry.content)).toEqual([
      "Tell me about mock models",
      "@mock and now",
    ]);
    expect(entries[1].agent).toBe("mock");
  });

  it("shows a slash command's note where it was typed, as the chat showed it", () => {
    const records: SessionRecord[] = [
      { type: "created", title: "Chat", created_ms: 1 },
      {
        type: "command_note",
        command: "/agent switch boss",
        outcome: "done",
        text: "boss is now the primary agent.",
        ts_ms: 2,
      },
      { type: "user_message", turn_id: "t1", text: "hello", agent: null, ts_ms: 3 },
      { type: "turn_ended", turn_id: "t1", status: "ok", text: "hi", answered_by: "boss" },
      { type: "command_note", command: "/agent nope", outcome: "strange", text: "Unknown command.", ts_ms: 4 },
    ];
    const { entries } = replaySession(records);
    expect(entries.map((entry) => [entry.role, entry.note?.command ?? null, entry.note?.outcome ?? null])).toEqual([
      ["command", "/agent switch boss", "done"],
      ["user", null, null],
      ["assistant", null, null],
      ["command", "/agent nope", "done"],
    ]);
    expect(entries[0].content).toBe("boss is now the primary agent.");
  });

  it("marks a call run again as a turn the user did not type (no retry, no edit)", () => {
    const records: SessionRecord[] = [
      { type: "user_message", turn_id: "t1", text: "hello", agent: null, ts_ms: 1 },
      { type: "turn_ended", turn_id: "t1", status: "ok", text: "hi", answered_by: "boss" },
      {
        type: "user_message",
        turn_id: "r1",
        text: "Run again: worker (call c2 of turn t1): x",
        agent: "worker",
        ts_ms: 2,
      },
      { type: "rerun", turn_id: "r1", of_turn: "t1", of_call: "c2" },
      { type: "turn_ended", turn_id: "r1", status: "ok", text: "done", answered_by: "worker" },
    ];
    const { entries } = replaySession(records);
    expect(entries.map((entry) => [entry.turnId, entry.role, entry.outside ?? false])).toEqual([
      ["t1", "user", false],
      ["t1", "assistant", false],
      ["r1", "user", true],
      ["r1", "assistant", true],
    ]);
  });

  it("shows a failed turn with its root call's error, or its status when the root has none", () => {
    const failed = {
      type: "call_finished",
      status: "error",
      result: null,
      usage: null,
      usage_total: null,
      cost: null,
      cost_total: null,
      steps: 1,
      error: { kind: "unreachable", message: "the model server did not answer" },
      delivered: null,
    };
    const records: SessionRecord[] = [
      { type: "created", title: "Chat", created_ms: 1 },
      { type: "user_message", turn_id: "t1", text: "one", agent: null, ts_ms: 2 },
      event("t1", 1, started),
      event("t1", 2, failed),
      { type: "turn_ended", turn_id: "t1", status: "error", text: "", answered_by: "assistant" },
      { type: "user_message", turn_id: "t2", text: "two", agent: null, ts_ms: 3 },
      { type: "turn_ended", turn_id: "t2", status: "limited", text: "", answered_by: "assistant" },
    ];
    const replies = replaySession(records).entries.filter((entry) => entry.role === "assistant");
    expect(replies.map((entry) => [entry.status, entry.error])).toEqual([
      ["error", "the model server did not answer"],
      ["error", "the turn ended with status limited"],
    ]);
  });

  it("shows a turn that is still running elsewhere as streaming, not interrupted", () => {
    const records: SessionRecord[] = [
      { type: "created", title: "MCP calls", created_ms: 1 },
      {
        type: "user_message",
        turn_id: "mcp-1",
        text: "MCP client x → agent_researcher: otters",
        agent: "researcher",
        ts_ms: 2,
      },
      event("mcp-1", 1, started),
      event("mcp-1", 2, { type: "text_delta", text: "Otters" }),
    ];
    const [, reply] = replaySession(records, new Set(["mcp-1"])).entries;
    expect([reply.status, reply.error, reply.agent]).toEqual(["streaming", null, "researcher"]);
  });
});
