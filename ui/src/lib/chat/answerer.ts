/**
 * Who answers the message being typed: the agent an `@name` handoff names, else
 * the primary (the first agent when none is named primary, as the engine picks
 * it), with what it runs on, so the chat never leaves the user guessing.
 */
import type { AgentConfig } from "../../bindings";

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

/** The answerer of `draft` under `config`; null when no agent is configured. */
export function whoAnswers(config: Roles, draft: string): Answerer | null {
  const named = /^@(\S+)/.exec(draft.trim())?.[1];
  const handoff = named ? config.agents.find((agent) => agent.name === named) : undefined;
  const primary = config.primary ? config.agents.find((agent) => agent.name === config.primary) : config.agents[0];
  const agent = handoff ?? primary;
  if (!agent) return null;
  const provider = String(agent.provider);
  return {
    agent: agent.name,
    detail: agent.model ? `${provider} · ${agent.model}` : provider,
    handoff: handoff !== undefined,
    demo: provider === "demo",
  };
}
