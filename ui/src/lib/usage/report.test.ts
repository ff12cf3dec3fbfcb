/** The delegation report's sentence per primary and its series per day. */
import { describe, expect, it } from "vitest";
import { endings, multipleText, perDay } from "./report";

const primary = {
  primary: "boss",
  delegating_turns: 1,
  plain_turns: 2,
  delegating_tokens_mean: 45,
  plain_tokens_mean: 15,
  delegating_cost_mean: 0.04,
  plain_cost_mean: 0.02,
  token_multiple: 3,
  cost_multiple: 2,
};

describe("multipleText", () => {
  it("says the multiple of tokens and cost, with the turns it rests on", () => {
    expect(multipleText(primary)).toBe(
      "boss: a turn that delegated took 3.0× the tokens and 2.0× the cost of one that did not (1 delegating turn, 2 plain turns).",
    );
    expect(multipleText({ ...primary, cost_multiple: null })).toBe(
      "boss: a turn that delegated took 3.0× the tokens of one that did not (1 delegating turn, 2 plain turns).",
    );
    expect(multipleText({ ...primary, plain_turns: 0, token_multiple: null, cost_multiple: null })).toBe(
      "boss: 1 delegating turn, 0 plain turns; no multiple until it has turns of both kinds.",
    );
  });
});

describe("perDay", () => {
  it("sums the agents of each day, oldest first", () => {
    const days = [
      { day: "2026-12-02", agent: "a", calls: 2, tokens: 30, cost: 0 },
      { day: "2026-12-01", agent: "a", calls: 1, tokens: 10, cost: 0 },
      { day: "2026-12-02", agent: "b", calls: 3, tokens: 5, cost: 0 },
    ];
    const report = {
      since_ms: null,
      until_ms: null,
      sessions: 1,
      turns: 1,
      agents: [],
      primaries: [],
      days,
      skipped_lines: 0,
    };
    expect(perDay(report)).toEqual([
      { day: "2026-12-01", calls: 1, tokens: 10 },
      { day: "2026-12-02", calls: 5, tokens: 35 },
    ]);
  });
});

describe("endings", () => {
  it("names only the endings a tool-agent had", () => {
    const agent = {
      agent: "a",
      calls: 5,
      ok: 4,
      error: 0,
      denied: 1,
      limited: 0,
      cancelled: 0,
      median_ms: 1,
      p95_ms: 2,
      own_tokens: 0,
      subtree_tokens: 0,
      own_cost: null,
      subtree_cost: null,
    };
    expect(endings(agent)).toBe("4 ok · 1 denied");
  });
});
