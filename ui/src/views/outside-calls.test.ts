/** Outside calls as the window hears them: running turns, the log joined with what was heard, notes on the sidebar. */
import { describe, expect, it } from "vitest";
import type {
  CallEvent_Serialize as CallEvent,
  OutsideCall_Serialize as OutsideCall,
  SessionRecord,
} from "../bindings";
import {
  describeCall,
  hearCall,
  isUnshown,
  OUTSIDE_SESSION_ID,
  runningNote,
  runningTurns,
  withHeardCalls,
  type HeardCalls,
} from "./outside-calls";

const callEvent = (seq: number, text: string): CallEvent =>
  ({
    seq,
    ts_ms: seq,
    call_id: "c1",
    parent_id: null,
    agent: "researcher",
    depth: 1,
    type: "text_delta",
    text,
  }) as CallEvent;

const line = "MCP client claude-code → agent_researcher: find otters";
const started = (turnId: string, sessionId = OUTSIDE_SESSION_ID): OutsideCall => ({
  session_id: sessionId,
  turn_id: turnId,
  update: { phase: "started", line, agent: "researcher" },
});
const eventOf = (turnId: string, seq: number): OutsideCall => ({
  session_id: OUTSIDE_SESSION_ID,
  turn_id: turnId,
  update: { phase: "event", event: callEvent(seq, `part ${seq} `) },
});
const finished = (turnId: string): OutsideCall => ({
  session_id: OUTSIDE_SESSION_ID,
  turn_id: turnId,
  update: { phase: "finished", status: "ok", text: "Otters hold hands.", answered_by: "researcher" },
});

function hearAll(calls: OutsideCall[]): HeardCalls {
  const heard: HeardCalls = new Map();
  for (const call of calls) hearCall(heard, call, 7);
  return heard;
}

/** A record in a short form that reads well in a table: its type and turn, and an event's seq. */
const brief = (record: SessionRecord) =>
  record.type === "event"
    ? `event ${record.turn_id} ${record.event.seq}`
    : `${record.type} ${"turn_id" in record ? record.turn_id : ""}`.trim();

describe("hearing outside calls", () => {
  it("keeps what each call said as the log would hold it, and which still run", () => {
    const heard = hearAll([started("m1"), eventOf("m1", 1), started("m2"), finished("m1")]);
    expect(heard.get("m1")?.records.map(brief)).toEqual(["user_message m1", "event m1 1", "turn_ended m1"]);
    expect(heard.get("m1")?.records[0]).toEqual({
      type: "user_message",
      turn_id: "m1",
      text: line,
      agent: "researcher",
      ts_ms: 7,
    });
    expect([...runningTurns(heard, OUTSIDE_SESSION_ID)]).toEqual(["m2"]);
    expect([...runningTurns(heard, "another")]).toEqual([]);
  });

  it("follows a call whose start it missed (the window opened while it ran)", () => {
    const heard = hearAll([eventOf("m1", 4)]);
    expect(heard.get("m1")).toMatchObject({ line: "", ended: false, sessionId: OUTSIDE_SESSION_ID });
    expect(runningNote(heard, OUTSIDE_SESSION_ID)).toBe("An MCP call is running");
  });
});

describe("joining a log with what was heard", () => {
  const logged = (records: SessionRecord[]) => [
    { type: "created", title: "MCP calls", created_ms: 1 } as SessionRecord,
    ...records,
  ];
  const heard = hearAll([started("m1"), eventOf("m1", 1), eventOf("m1", 2), eventOf("m1", 3), finished("m1")]);
  const [message, first, second, , end] = heard.get("m1")?.records ?? [];
  const cases: Array<[string, SessionRecord[], string[]]> = [
    ["adds nothing the log holds", [message, first, second, heard.get("m1")!.records[3], end], []],
    [
      "adds the events after the last logged one and the end",
      [message, first],
      ["event m1 2", "event m1 3", "turn_ended m1"],
    ],
    [
      "adds a call the log has not seen at all",
      [],
      ["user_message m1", "event m1 1", "event m1 2", "event m1 3", "turn_ended m1"],
    ],
  ];
  it.each(cases)("%s", (_name, records, added) => {
    const joined = withHeardCalls(logged(records), heard, OUTSIDE_SESSION_ID);
    expect(joined.slice(records.length + 1).map(brief)).toEqual(added);
  });

  it("leaves the calls of other sessions out", () => {
    const other = hearAll([started("m9", "another")]);
    const records = logged([]);
    expect(withHeardCalls(records, other, OUTSIDE_SESSION_ID)).toBe(records);
  });
});

describe("the open tree", () => {
  it("takes each event once, in order", () => {
    const heard = hearAll([started("m1")]);
    const call = heard.get("m1")!;
    call.shownSeq = 2;
    expect([1, 2, 3, 3, 4].map((seq) => isUnshown(call, callEvent(seq, "")))).toEqual([
      false,
      false,
      true,
      false,
      true,
    ]);
  });
});

describe("notes on the sidebar", () => {
  const check = (input: string, expected: string) => expect(describeCall(input)).toBe(expected);
  it.each([
    [line, "MCP client claude-code is calling agent_researcher"],
    ["MCP client c → agent_x: a → b: c", "MCP client c is calling agent_x"],
    ["something else", "something else"],
  ])("describes %j", check);

  it("names the one running call, or counts them", () => {
    expect(runningNote(hearAll([]), OUTSIDE_SESSION_ID)).toBeNull();
    expect(runningNote(hearAll([started("m1")]), OUTSIDE_SESSION_ID)).toBe(
      "MCP client claude-code is calling agent_researcher",
    );
    expect(
      runningNote(hearAll([started("m1"), started("m2"), started("m3"), finished("m3")]), OUTSIDE_SESSION_ID),
    ).toBe("2 MCP calls are running");
  });
});
