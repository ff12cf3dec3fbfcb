/**
 * What needs the user: the calls waiting for an approval or for an answer to a
 * remote agent's question (a node with status "waiting" is either), in the open
 * session's trees and in MCP clients' calls of other sessions; the window title
 * that counts them; what a notification about one says; and which of them are new
 * since the last look (those are worth a notification). Pure; the window wires it.
 */
import type { CallEvent_Serialize as CallEvent } from "../bindings";
import { waitingNodes, type TurnTree } from "../lib/tree/model";

export interface WaitingCall {
  /** The session the call runs in (null: the open chat before its session exists). */
  sessionId: string | null;
  turnId: string;
  callId: string;
  agent: string;
  /** A remote agent's question; null when the call waits for approval. */
  question: string | null;
  /** What the call would be asked, for an approval. */
  request: string | null;
}

/** One key per waiting call (a call that waits again later is a new wait only if it stopped waiting). */
export function keyOf(call: Pick<WaitingCall, "turnId" | "callId">): string {
  return `${call.turnId}/${call.callId}`;
}

/** The waiting calls of the open session's turns, in turn order. */
export function waitingInTurns(turns: TurnTree[], sessionId: string | null): WaitingCall[] {
  return turns.flatMap(({ turnId, tree }) =>
    waitingNodes(tree).map((node) => ({
      sessionId,
      turnId,
      callId: node.callId,
      agent: node.agent,
      question: node.question,
      request: node.input?.request ?? null,
    })),
  );
}

/**
 * Follows one event of an outside call into `waiting` (by key): a request or a
 * question adds the call, an answer or its end removes it. Says whether anything changed.
 */
export function followWaiting(
  waiting: Map<string, WaitingCall>,
  sessionId: string,
  turnId: string,
  event: CallEvent,
): boolean {
  const key = keyOf({ turnId, callId: event.call_id });
  switch (event.type) {
    case "approval_requested": {
      const input = event.input as { request?: unknown } | null;
      const request = typeof input?.request === "string" ? input.request : null;
      waiting.set(key, { sessionId, turnId, callId: event.call_id, agent: event.agent, question: null, request });
      return true;
    }
    case "input_requested":
      waiting.set(key, {
        sessionId,
        turnId,
        callId: event.call_id,
        agent: event.agent,
        question: event.question,
        request: null,
      });
      return true;
    case "approval_resolved":
    case "input_answered":
    case "call_finished":
      return waiting.delete(key);
    default:
      return false;
  }
}

/** Forgets every waiting call of a turn (it ended); says whether there was one. */
export function forgetTurn(waiting: Map<string, WaitingCall>, turnId: string): boolean {
  let changed = false;
  for (const [key, call] of waiting) if (call.turnId === turnId) changed = waiting.delete(key) || changed;
  return changed;
}

/** Every waiting call once: the open session's own, then other sessions' outside calls. */
export function allWaiting(inOpenSession: WaitingCall[], outside: WaitingCall[], openSessionId: string | null) {
  const seen = new Set(inOpenSession.map(keyOf));
  const others = outside.filter((call) => call.sessionId !== openSessionId && !seen.has(keyOf(call)));
  return [...inOpenSession, ...others];
}

/** "Switchboard", or "Switchboard — 2 waiting" while calls wait for the user. */
export function windowTitle(waitingCount: number): string {
  return waitingCount > 0 ? `Switchboard — ${waitingCount} waiting` : "Switchboard";
}

/** The calls of `calls` not in `seen` (the keys of the last look): each is worth a notification. */
export function newlyWaiting(calls: WaitingCall[], seen: ReadonlySet<string>): WaitingCall[] {
  return calls.filter((call) => !seen.has(keyOf(call)));
}

/** What a notification about a waiting call says. */
export function notificationOf(call: WaitingCall): { title: string; body: string } {
  const cut = (text: string) => (text.length > 140 ? `${text.slice(0, 139)}…` : text);
  if (call.question !== null) return { title: `${call.agent} asks a question`, body: cut(call.question) };
  return {
    title: `${call.agent} waits for your approval`,
    body: call.request ? cut(call.request) : "Open Switchboard to approve or deny the call.",
  };
}
