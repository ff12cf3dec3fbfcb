/**
 * Calls that MCP clients make through the app's endpoint, as the window hears them
 * (`outside-call` updates): which are running, what each has said so far, and how
 * that joins a session's log when the session is opened while they run (the log
 * may not yet hold what the window already heard, or the reverse). Pure; the session
 * flow moves the stores.
 */
import type {
  CallEvent_Serialize as CallEvent,
  OutsideCall_Serialize as OutsideCall,
  SessionRecord,
} from "../bindings";

/** The session the calls of MCP clients are kept in (the Rust side creates it on the first call). */
export const OUTSIDE_SESSION_ID = "mcp-calls";

/** An outside call the window has heard of, until it ends (or, while its session is being opened, a little longer). */
export interface HeardCall {
  sessionId: string;
  /** Who asked which tool-agent what ("MCP client claude-code → agent_x: …"); empty if the start was missed. */
  line: string;
  /** What the log should hold of it, as the window heard it: its message, its events, its end. */
  records: SessionRecord[];
  /** The greatest `seq` of its events the open session's tree already has (0 when it has none). */
  shownSeq: number;
  ended: boolean;
}

/** The outside calls heard of, by turn id. */
export type HeardCalls = Map<string, HeardCall>;

/** Records one update of an outside call, as the log holds it (Rust logs every update before it sends it). */
export function hearCall(heard: HeardCalls, call: OutsideCall, nowMs: number): HeardCall {
  let entry = heard.get(call.turn_id);
  if (!entry) {
    entry = { sessionId: call.session_id, line: "", records: [], shownSeq: 0, ended: false };
    heard.set(call.turn_id, entry);
  }
  const update = call.update;
  switch (update.phase) {
    case "started":
      entry.line = update.line;
      entry.records.push({
        type: "user_message",
        turn_id: call.turn_id,
        text: update.line,
        agent: update.agent,
        ts_ms: nowMs,
      });
      break;
    case "event":
      entry.records.push({ type: "event", turn_id: call.turn_id, event: update.event });
      break;
    case "finished":
      entry.ended = true;
      entry.records.push({
        type: "turn_ended",
        turn_id: call.turn_id,
        status: update.status,
        text: update.text,
        answered_by: update.answered_by,
      });
      break;
  }
  return entry;
}

/** The turns of `sessionId` that are still running, as far as the window has heard. */
export function runningTurns(heard: HeardCalls, sessionId: string): Set<string> {
  const running = new Set<string>();
  for (const [turnId, call] of heard) if (call.sessionId === sessionId && !call.ended) running.add(turnId);
  return running;
}

/**
 * A session's log with what the window heard of its outside calls and the log does
 * not hold yet (the log was read just before they were written): a missing message,
 * the events after the last logged one, a missing end. The log's own order is kept;
 * the additions come last.
 */
export function withHeardCalls(records: SessionRecord[], heard: HeardCalls, sessionId: string): SessionRecord[] {
  const additions: SessionRecord[] = [];
  for (const [turnId, call] of heard) {
    if (call.sessionId !== sessionId) continue;
    const logged = records.filter((record) => "turn_id" in record && record.turn_id === turnId);
    const hasMessage = logged.some((record) => record.type === "user_message");
    const hasEnd = logged.some((record) => record.type === "turn_ended");
    const lastSeq = logged.reduce(
      (last, record) => (record.type === "event" ? Math.max(last, record.event.seq) : last),
      0,
    );
    for (const record of call.records) {
      if (record.type === "user_message" && !hasMessage) additions.push(record);
      else if (record.type === "event" && record.event.seq > lastSeq) additions.push(record);
      else if (record.type === "turn_ended" && !hasEnd) additions.push(record);
    }
  }
  return additions.length > 0 ? [...records, ...additions] : records;
}

/** Whether an event of a call is new to the open session's tree (and, if so, notes that it is there now). */
export function isUnshown(call: HeardCall, event: CallEvent): boolean {
  if (event.seq <= call.shownSeq) return false;
  call.shownSeq = event.seq;
  return true;
}

/** "MCP client claude-code is calling agent_x" from a call's line; the line itself when it has another shape. */
export function describeCall(line: string): string {
  const match = /^(MCP client .+?) → (\S+?):/.exec(line);
  return match ? `${match[1]} is calling ${match[2]}` : line;
}

/** The note on a session's row while outside calls run in it: what the one call does, or how many run. */
export function runningNote(heard: HeardCalls, sessionId: string): string | null {
  const lines = [...heard.values()]
    .filter((call) => call.sessionId === sessionId && !call.ended)
    .map((call) => call.line);
  if (lines.length === 0) return null;
  if (lines.length === 1) return lines[0] ? describeCall(lines[0]) : "An MCP call is running";
  return `${lines.length} MCP calls are running`;
}
