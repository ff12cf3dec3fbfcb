/** The entry form's round trip and checks, and the words for an absent entry. */
import { describe, expect, it } from "vitest";
import type { AgentToolEntry_Deserialize as AgentToolEntry } from "../../bindings";
import {
  absenceText,
  agentApprovalText,
  entryApprovalText,
  entryFromToolForm,
  limitsSummary,
  toolFormFrom,
} from "./tool-form";

describe("entry form", () => {
  it.each<AgentToolEntry>([
    { agent: "coder", description: "Writes code" },
    { agent: "coder", description: "Writes code", enabled: false, approval: "auto" },
    {
      agent: "coder",
      description: "Writes code",
      approval: "deny",
      limits: { max_depth: 0, max_calls_per_turn: 3, max_cost_per_turn: 0.5 },
      share_context: 2,
      session: "persistent",
    },
    {
      agent: "greeter",
      description: "Greets",
      serve: { name: "greet", arguments: { type: "object" }, task: "forbidden" },
    },
  ])("an entry comes back as it was: %j", (entry) => {
    const { entry: back, errors } = entryFromToolForm(toolFormFrom(entry), entry);
    expect(errors).toEqual({});
    expect(back).toEqual(entry);
  });

  it("a new entry writes only what differs from the defaults", () => {
    const form = { ...toolFormFrom(null, "coder"), description: "Codes" };
    expect(entryFromToolForm(form, null).entry).toEqual({ agent: "coder", description: "Codes" });
    expect(entryFromToolForm({ ...form, enabled: false, approval: "auto" }, null).entry).toEqual({
      agent: "coder",
      description: "Codes",
      enabled: false,
      approval: "auto",
    });
  });

  it("an approval in force is said as the core decided it: the entry's own, the agent's (said so), or ask; blank leaves it to the agent", () => {
    const approvals = {
      entries: [
        { owner: null, tool_agent: "coder", approval: "auto" as const, from: "agent" as const },
        { owner: "boss", tool_agent: "coder", approval: "deny" as const, from: "entry" as const },
        { owner: null, tool_agent: "other", approval: "ask" as const, from: "default" as const },
      ],
      agents: [
        { agent: "coder", approval: "auto" as const, from: "agent" as const },
        { agent: "other", approval: "ask" as const, from: "default" as const },
      ],
    };
    expect(entryApprovalText(approvals, "boss", "coder")).toBe("deny");
    expect(entryApprovalText(approvals, null, "coder")).toBe("auto (the agent's)");
    expect(entryApprovalText(approvals, null, "other")).toBe("ask");
    expect(agentApprovalText(approvals, "coder")).toBe("auto");
    expect(agentApprovalText(approvals, "other")).toBe("ask (it sets none)");
    const entry: AgentToolEntry = { agent: "coder", description: "d", approval: "ask" };
    const form = toolFormFrom(entry);
    expect(form.approval).toBe("ask");
    expect(entryFromToolForm({ ...form, approval: "" }, entry).entry).toEqual({ agent: "coder", description: "d" });
    expect(toolFormFrom({ agent: "coder", description: "d" }).approval).toBe("");
  });

  it("says what is wrong", () => {
    const form = toolFormFrom(null);
    form.limits.max_steps = "0";
    form.limits.max_calls_per_turn = "many";
    form.limits.max_cost_per_turn = "-2";
    form.share_context = "x";
    const { errors } = entryFromToolForm(form, null);
    expect(errors).toEqual({
      agent: expect.stringMatching(/Choose/),
      description: expect.stringMatching(/Required/),
      max_steps: "At least 1",
      max_calls_per_turn: "A whole number",
      max_cost_per_turn: "A number, 0 or more",
      share_context: expect.stringMatching(/whole number/),
    });
  });

  it("clearing the limits keeps the fields the form does not know", () => {
    const entry = { agent: "a", description: "d", limits: { max_depth: 1, future_limit: 3 } } as AgentToolEntry;
    const form = toolFormFrom(entry);
    form.limits.max_depth = "";
    expect(entryFromToolForm(form, entry).entry.limits).toEqual({ future_limit: 3 });
  });

  it("a cleared limit goes, the others stay as the form says", () => {
    const entry: AgentToolEntry = { agent: "a", description: "d", limits: { max_depth: 1, max_steps: 4 } };
    const form = toolFormFrom(entry);
    form.limits.max_depth = "";
    form.limits.max_steps = "5";
    expect(entryFromToolForm(form, entry).entry.limits).toEqual({ max_steps: 5 });
  });

  it("summarises limits", () => {
    expect(limitsSummary({ max_depth: 2, timeout_secs: 30 })).toBe("max depth 2 · timeout (s) 30");
    expect(limitsSummary(null)).toBe("");
  });
});

describe("why an entry is absent", () => {
  const caller = { name: "lead", provider: "subprocess" };
  it.each([
    ["self_reference", /calls itself/],
    ["unknown_agent", /no such agent.*ghost/],
    ["disabled", /^disabled$/],
    ["not_callable", /claude-cli agents are never called/],
    ["depth_limit", /depth limit 0/],
    ["caller_cannot_call", /this provider cannot call tools \(subprocess/],
  ] as const)("%s", (absence, expected) => {
    expect(absenceText(absence, { tool_agent: "ghost" }, caller)).toMatch(expected);
  });
});
