/** The waiting calls: found in trees and in outside calls' events, counted in the title, new ones told apart. */
import { describe, expect, it } from "vitest";
import type { CallEvent_Serialize as CallEvent } from "../bindings";
import { applyEvent, emptyTree } from "../lib/tree/model";
import {
  allWaiting,
  followWaiting,
  forgetTurn,
  keyOf,
  newlyWaiting,
  notificationOf,
  waitingInTurns,
  windowTitle,
  type WaitingCall,
} from "./attention";

let seq = 0;
function event(callId: string, agent: string, kind: Record<string, unknown>): CallEvent {
  seq += 1;
  return {
    seq,
    ts_ms: seq,
    call_id: callId,
    parent_id: callId === "c1" ? null : "c1",
    agent,
    depth: 1,
    ...kind,
  } as CallEvent;
}
const started = (callId: string, agent: string, request: string | null) =>
  event(callId, agent, {
    type: "call_started",
    role: "tool",
    tool_name: `agent_${agent}`,
    input: request ? { request } : null,
    tools: [],
    model: null,
  });
const limits = { may_delegate: false, depth: 1, max_depth: 1, calls_left: 5, timeout_secs: null };
const asked = (callId: string, agent: string) =>
  event(callId, agent, { type: "approval_requested", tool_name: `agent_${agent}`, input: { request: "Go" }, limits });
const question = (callId: string, agent: string, text: string) =>
  event(callId, agent, { type: "input_requested", question: text });
const resolved = (callId: string, agent: string) =>
  event(callId, agent, { type: "approval_resolved", decision: "approve_once", by: "user" });

describe("waitingInTurns", () => {
  it("finds approvals and questions in every turn, in order", () => {
    const first = emptyTree();
    const second = emptyTree();
    for (const each of [
      started("c1", "assistant", null),
      started("c2", "researcher", "Find it"),
      asked("c2", "researcher"),
    ])
      applyEvent(first, each);
    for (const each of [
      started("c1", "assistant", null),
      started("c3", "remote", null),
      question("c3", "remote", "Which?"),
    ])
      applyEvent(second, each);
    const calls = waitingInTurns(
      [
        { turnId: "t1", label: "one", tree: first },
        { turnId: "t2", label: "two", tree: second },
      ],
      "s1",
    );
    expect(calls).toEqual([
      { sessionId: "s1", turnId: "t1", callId: "c2", agent: "researcher", question: null, request: "Find it" },
      { sessionId: "s1", turnId: "t2", callId: "c3", agent: "remote", question: "Which?", request: null },
    ]);
  });
});

describe("followWaiting", () => {
  it("adds a call when it asks and removes it when answered or ended, saying when it changed", () => {
    const waiting = new Map<string, WaitingCall>();
    expect(followWaiting(waiting, "mcp-calls", "t1", started("c2", "researcher", "Go"))).toBe(false);
    expect(followWaiting(waiting, "mcp-calls", "t1", asked("c2", "researcher"))).toBe(true);
    expect([...waiting.values()]).toEqual([
      { sessionId: "mcp-calls", turnId: "t1", callId: "c2", agent: "researcher", question: null, request: "Go" },
    ]);
    expect(followWaiting(waiting, "mcp-calls", "t1", resolved("c2", "researcher"))).toBe(true);
    expect(waiting.size).toBe(0);
    followWaiting(waiting, "mcp-calls", "t2", question("c2", "remote", "Which river?"));
    expect(forgetTurn(waiting, "t2")).toBe(true);
    expect(forgetTurn(waiting, "t2")).toBe(false);
  });
});

describe("allWaiting", () => {
  const call = (sessionId: string, turnId: string): WaitingCall => ({
    sessionId,
    turnId,
    callId: "c2",
    agent: "researcher",
    question: null,
    request: null,
  });
  it("counts the open session's calls once and other sessions' outside calls", () => {
    const open = [call("mcp-calls", "t1")];
    const outside = [call("mcp-calls", "t1"), call("mcp-calls", "t2"), call("other", "t3")];
    // The open session's outside calls are in its trees already.
    expect(allWaiting(open, outside, "mcp-calls").map(keyOf)).toEqual(["t1/c2", "t3/c2"]);
    expect(allWaiting([], outside, "s1").map(keyOf)).toEqual(["t1/c2", "t2/c2", "t3/c2"]);
  });
});

describe("what the user is told", () => {
  it("titles the window with the count", () => {
    expect(windowTitle(0)).toBe("Switchboard");
    expect(windowTitle(2)).toBe("Switchboard — 2 waiting");
  });

  it("notifies only calls that were not waiting at the last look", () => {
    const a = { sessionId: "s", turnId: "t", callId: "a", agent: "x", question: null, request: null };
    const b = { ...a, callId: "b" };
    expect(newlyWaiting([a, b], new Set([keyOf(a)]))).toEqual([b]);
  });

  it("says who waits and for what", () => {
    const base = { sessionId: "s", turnId: "t", callId: "a", agent: "researcher" };
    expect(notificationOf({ ...base, question: null, request: "Find the facts" })).toEqual({
      title: "researcher waits for your approval",
      body: "Find the facts",
    });
    expect(notificationOf({ ...base, question: "Which river?", request: null })).toEqual({
      title: "researcher asks a question",
      body: "Which river?",
    });
    expect(notificationOf({ ...base, question: null, request: "x".repeat(300) }).body).toHaveLength(140);
  });
});
