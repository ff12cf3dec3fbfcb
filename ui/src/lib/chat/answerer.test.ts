/** Who answers: the primary, the first agent when none is named, the chat's pick, an @agent handoff, no one. */
import { describe, expect, it } from "vitest";
import type { AgentConfig, ResolvedTool } from "../../bindings";
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
  it("the chat's picked agent over the primary, while it is configured; a handoff over both", () => {
    expect(whoAnswers({ primary: "llama", agents }, "", "coder")).toMatchObject({ agent: "coder", handoff: false });
    expect(whoAnswers({ primary: "llama", agents }, "", "gone")?.agent).toBe("llama");
    expect(whoAnswers({ primary: "llama", agents }, "@assistant hi", "coder")).toMatchObject({
      agent: "assistant",
      handoff: true,
    });
  });
  it("no one when no agent is configured", () => {
    expect(whoAnswers({ primary: null, agents: [] }, "hi")).toBeNull();
  });
});

describe("example prompts for the empty chat", () => {
  const tool = (name: string, enabled = true) =>
    ({ agent: name, tool_name: `agent_${name}`, description: `the ${name}`, enabled }) as unknown as ResolvedTool;
  const primary = whoAnswers({ primary: "llama", agents }, "")!;
  it("name up to two tool-agents the primary may call, and one it answers itself", () => {
    const examples = examplePrompts(primary, [tool("coder"), tool("researcher"), tool("summariser")]);
    expect(examples.map((example) => example.label)).toEqual(["Ask coder", "Ask researcher", "Without tools"]);
    expect(examples[0].text).toContain("Ask coder");
  });
  it("never offer an entry that is off or the primary itself", () => {
    const examples = examplePrompts(primary, [tool("llama"), tool("coder", false), tool("researcher")]);
    expect(examples.map((example) => example.label)).toEqual(["Ask researcher", "Without tools"]);
  });
  it("a primary with no tool-agents gets a question it answers alone", () => {
    expect(examplePrompts(primary, [])).toEqual([{ label: "What can you do?", text: "What can you do?" }]);
  });
});
