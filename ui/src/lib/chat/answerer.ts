/**
 * Who answers the message being typed: the agent an `@name` handoff names, else
 * the primary (the first agent when none is named primary, as the engine picks
 * it), with what it runs on, so the chat never leaves the user guessing.
 */
import type { AgentConfig, ResolvedTool } from "../../bindings";

export interface Answerer {
  agent: string;
  /** What it runs on: `provider · model`, or the provider alone. */
  detail: string;
  /** Named by an `@agent` handoff for this one message. */
  handoff: boolean;
  /** A built-in demo agent: it needs no model server. */
  demo: boolean;
}

type Roles = { primary?: string | null; agents: AgentConfig[] };

/**
 * The answerer of `draft` under `config`: the agent an `@agent` handoff names, else
 * `picked` (the chat's agent) while it is configured, else the primary; null when
 * no agent is configured.
 */
export function whoAnswers(config: Roles, draft: string, picked: string | null = null): Answerer | null {
  const named = /^@(\S+)/.exec(draft.trim())?.[1];
  const handoff = named ? config.agents.find((agent) => agent.name === named) : undefined;
  const chosen = picked ? config.agents.find((agent) => agent.name === picked) : undefined;
  const primary = config.primary ? config.agents.find((agent) => agent.name === config.primary) : config.agents[0];
  const agent = handoff ?? chosen ?? primary;
  if (!agent) return null;
  const provider = String(agent.provider);
  return {
    agent: agent.name,
    detail: agent.model ? `${provider} · ${agent.model}` : provider,
    handoff: handoff !== undefined,
    demo: provider === "demo",
  };
}

/** An example the empty chat offers: a label to show and the text it puts in the composer. */
export interface ExamplePrompt {
  label: string;
  text: string;
}

/** The subject the examples that delegate work on: any text does, this one reads well. */
const SUBJECT = "the trade-offs of a four-day work week";

/**
 * Two or three examples that fit `answerer`: one per tool-agent it may call (up to
 * two, named, so the user sees the delegation the example asks for) and one it
 * answers itself. `tools` is its merged list as the core resolves it (`list_tools`,
 * disabled entries included); one that is off or names the answerer is not offered.
 */
export function examplePrompts(answerer: Answerer, tools: ResolvedTool[]): ExamplePrompt[] {
  const delegates = tools
    .filter((tool) => tool.enabled && tool.agent !== answerer.agent)
    .slice(0, 2)
    .map((tool) => ({
      label: `Ask ${tool.agent}`,
      text: `Ask ${tool.agent} for help: ${SUBJECT}.`,
    }));
  const alone =
    delegates.length > 0
      ? { label: "Without tools", text: "Answer with no tools: what can you do, and which agents can you call?" }
      : { label: "What can you do?", text: "What can you do?" };
  return [...delegates, alone];
}
