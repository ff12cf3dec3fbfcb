/** Who answers: the primary, the first agent when none is named, an @agent handoff, no one. */
import { describe, expect, it } from "vitest";
import type { AgentConfig, AgentToolEntry } from "../../bindings";
import { examplePrompts, whoAnswers } from "./answerer";

const agent = (name: string, provider: string, model?: string) => ({ name, provider, model }) as unknown as AgentConfig;
const agents = [
  agent("assistant", "demo", "demo-planner"),
  agent("llama", "local", "llama3"),
  agent("coder", "aider-cli"),
];

describe("who answers", () => {
  it("the primary, with what it runs on", () => {
    expect(whoAnswers({ primary: "llama", agents }, "hello")).toEqual({
      agent: "llama",
      detail: "local · llama3",
      handoff: false,
      demo: false,
    });
  });
  it("the first agent when none is named primary, as the engine picks it", () => {
    expect(whoAnswers({ primary: null, agents }, "")?.agent).toBe("assistant");
    expect(whoAnswers({ primary: null, agents }, "")?.demo).toBe(true);
  });
  it("an @agent handoff names this message's answerer, once it names an agent", () => {
    expect(whoAnswers({ primary: "llama", agents }, "@coder fix it")).toMatchObject({
      agent: "coder",
      detail: "aider-cli",
      handoff: true,
    });
    expect(whoAnswers({ primary: "llama", agents }, "@cod")?.agent).toBe("llama");
  });
  it("no one when no agent is configured", () => {
    expect(whoAnswers({ primary: null, agents: [] }, "hi")).toBeNull();
  });
});

describe("example prompts for the empty chat", () => {
  const entry = (name: string, enabled?: boolean) =>
    ({ agent: name, description: `the ${name}`, enabled }) as unknown as AgentToolEntry;
  const primary = whoAnswers({ primary: "llama", agents }, "")!;
  it("name up to two tool-agents the primary may call, and one it answers itself", () => {
    const examples = examplePrompts(
      { agents, agent_tools: [entry("coder"), entry("researcher"), entry("summariser")] },
      primary,
    );
    expect(examples.map((example) => example.label)).toEqual(["Ask coder", "Ask researcher", "Without tools"]);
    expect(examples[0].text).toContain("Ask coder");
  });
  it("never offer an entry that is off or the primary itself", () => {
    const examples = examplePrompts(
      { agents, agent_tools: [entry("llama"), entry("coder", false), entry("researcher")] },
      primary,
    );
    expect(examples.map((example) => example.label)).toEqual(["Ask researcher", "Without tools"]);
  });
  it("the primary's own entries count over the global ones, as the engine merges them", () => {
    const own = agents.map((one) => (one.name === "llama" ? { ...one, tools: [entry("coder", true)] } : one));
    const examples = examplePrompts({ agents: own, agent_tools: [entry("coder", false)] }, primary);
    expect(examples.map((example) => example.label)).toEqual(["Ask coder", "Without tools"]);
  });
  it("a primary with no tool-agents gets a question it answers alone", () => {
    expect(examplePrompts({ agents, agent_tools: [] }, primary)).toEqual([
      { label: "What can you do?", text: "What can you do?" },
    ]);
  });
});
