/** Usage per agent and per turn, from call trees. */
import { describe, expect, it } from "vitest";
import type { CallEvent_Serialize as CallEvent } from "../../bindings";
import { applyEvent, emptyTree } from "../tree/model";
import { columnLabels, usageByAgent, usageByTurn } from "./model";

function tree(calls: Array<[string, string | null, string, string, number, number | null]>) {
  const built = emptyTree();
  let seq = 0;
  for (const [callId, parentId, agent, status, tokens, cost] of calls) {
    const base = { call_id: callId, parent_id: parentId, agent, depth: parentId ? 1 : 0, ts_ms: 0 };
    applyEvent(built, {
      ...base,
      seq: ++seq,
      type: "call_started",
      role: parentId ? "tool" : "turn",
      tool_name: null,
      input: null,
      tools: [],
      model: null,
      steering: { way: "next_step" },
    } as CallEvent);
    const usage = { input_tokens: tokens, output_tokens: 0, total_tokens: tokens };
    applyEvent(built, {
      ...base,
      seq: ++seq,
      type: "call_finished",
      status,
      result: null,
      usage,
      usage_total: usage,
      cost,
      cost_total: cost,
      steps: 1,
      error: null,
      delivered: null,
    } as CallEvent);
  }
  return built;
}

describe("usage", () => {
  it("adds each call's own tokens and cost per agent, counting errors and refusals", () => {
    const first = tree([
      ["c1", null, "assistant", "ok", 100, 0.01],
      ["c2", "c1", "researcher", "ok", 40, null],
      ["c3", "c1", "researcher", "error", 0, null],
    ]);
    const second = tree([
      ["c1", null, "assistant", "ok", 50, 0.02],
      ["c2", "c1", "researcher", "denied", 0, null],
    ]);
    expect(usageByAgent([first, second])).toEqual([
      { agent: "assistant", calls: 2, errors: 0, refused: 0, tokens: 150, cost: 0.03 },
      { agent: "researcher", calls: 3, errors: 1, refused: 1, tokens: 40, cost: null },
    ]);
    expect(usageByTurn([{ turnId: "t1", label: "one", tree: first }]).map((row) => row.tokens)).toEqual([100]);
  });
});

describe("column labels", () => {
  it("labels every column up to 16, then about 12 of them, the last always", () => {
    expect([...columnLabels(3)]).toEqual([0, 1, 2]);
    expect(columnLabels(16).size).toBe(16);
    const many = columnLabels(100);
    expect(many.size).toBeLessThanOrEqual(13);
    expect(many.has(0) && many.has(99)).toBe(true);
    expect(columnLabels(0).size).toBe(0);
  });
});
