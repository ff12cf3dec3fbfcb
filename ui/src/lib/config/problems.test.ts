/** Problems placed beside the agent or entry their JSON path names. */
import { describe, expect, it } from "vitest";
import type { Config_Serialize as Config, Problem } from "../../bindings";
import { agentKey, entryProblemCount, placeOf, problemLine, problemsByPlace, toolKey } from "./problems";

const config: Config = {
  agents: [
    { name: "lead", provider: "local", url: "http://x", tools: [{ agent: "ghost", description: "gone" }] },
    { name: "coder", provider: "demo" },
  ],
  agent_tools: [{ agent: "coder", description: "codes" }],
};

describe("placeOf", () => {
  it.each([
    ["agents[0].tools[0].agent", { kind: "tool", owner: "lead", toolAgent: "ghost", field: "agent" }],
    ["agents[0].tools[0]", { kind: "tool", owner: "lead", toolAgent: "ghost", field: null }],
    ["agents[1].name", { kind: "agent", agent: "coder", field: "name" }],
    ["agents[1]", { kind: "agent", agent: "coder", field: null }],
    ["agents[0].limits.speed", { kind: "agent", agent: "lead", field: "limits.speed" }],
    ["agent_tools[0].description", { kind: "tool", owner: null, toolAgent: "coder", field: "description" }],
    ["agent_tools[5]", { kind: "config", field: "agent_tools[5]" }],
    ["escalation", { kind: "config", field: "escalation" }],
  ])("%s", (path, expected) => {
    expect(placeOf(path, config)).toEqual(expected);
  });
});

it("groups problems by what they concern", () => {
  const problems: Problem[] = [
    { severity: "warning", path: "agents[0].tools[0].agent", message: "not configured" },
    { severity: "warning", path: "agents[1].colour", message: "unknown field" },
    { severity: "warning", path: "agent_tools[0].extra", message: "unknown field" },
    { severity: "warning", path: "telemetry.x", message: "unknown field" },
  ];
  const byPlace = problemsByPlace(problems, config);
  expect(byPlace.get(toolKey("lead", "ghost"))).toEqual([problems[0]]);
  expect(byPlace.get(agentKey("coder"))).toEqual([problems[1]]);
  expect(byPlace.get(toolKey(null, "coder"))).toEqual([problems[2]]);
  expect(byPlace.get("config")).toEqual([problems[3]]);
  expect(problemLine(problems[1], config)).toBe("colour: unknown field");
  expect([entryProblemCount(byPlace, "lead"), entryProblemCount(byPlace, "coder")]).toEqual([1, 0]);
});
