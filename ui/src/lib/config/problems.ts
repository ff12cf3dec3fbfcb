/**
 * Where each of the config's problems belongs on screen. Validation names a problem
 * by its JSON path (`agents[2].tools[0].agent`); the forms show it beside the agent
 * or the entry it concerns, so the path is turned into names (which survive a
 * reorder) here. Pure; tested beside it.
 */
import type { Config_Serialize as Config, Problem } from "../../bindings";

/** What a problem concerns, by name. */
export type ProblemPlace =
  | { kind: "agent"; agent: string; field: string | null }
  | { kind: "tool"; owner: string | null; toolAgent: string; field: string | null }
  | { kind: "config"; field: string };

/** The key of an agent's problems. */
export const agentKey = (agent: string) => `agent:${agent}`;
/** The key of an entry's problems: `owner` null is `agent_tools`. */
export const toolKey = (owner: string | null, toolAgent: string) => `tool:${owner ?? "*global"}:${toolAgent}`;

/** What `path` names in `config`. */
export function placeOf(path: string, config: Config): ProblemPlace {
  const agentMatch = /^agents\[(\d+)\](?:\.tools\[(\d+)\])?(?:\.(.+))?$/.exec(path);
  if (agentMatch) {
    const agent = config.agents[Number(agentMatch[1])];
    const field = agentMatch[3] ?? null;
    if (agent && agentMatch[2] !== undefined) {
      const entry = agent.tools?.[Number(agentMatch[2])];
      if (entry) return { kind: "tool", owner: agent.name, toolAgent: entry.agent, field };
    }
    if (agent) return { kind: "agent", agent: agent.name, field };
  }
  const globalMatch = /^agent_tools\[(\d+)\](?:\.(.+))?$/.exec(path);
  if (globalMatch) {
    const entry = config.agent_tools[Number(globalMatch[1])];
    if (entry) return { kind: "tool", owner: null, toolAgent: entry.agent, field: globalMatch[2] ?? null };
  }
  return { kind: "config", field: path };
}

/** The problems by the key of what they concern (`agentKey`, `toolKey`, or `config`). */
export function problemsByPlace(problems: Problem[], config: Config): Map<string, Problem[]> {
  const byPlace = new Map<string, Problem[]>();
  for (const problem of problems) {
    const place = placeOf(problem.path, config);
    const key =
      place.kind === "agent"
        ? agentKey(place.agent)
        : place.kind === "tool"
          ? toolKey(place.owner, place.toolAgent)
          : "config";
    byPlace.set(key, [...(byPlace.get(key) ?? []), problem]);
  }
  return byPlace;
}

/** A problem as one line beside its entry: the field (if any) and the message. */
export function problemLine(problem: Problem, config: Config): string {
  const place = placeOf(problem.path, config);
  const field = place.kind === "config" ? null : place.field;
  return field ? `${field}: ${problem.message}` : problem.message;
}

/** How many problems concern `owner`'s own tool entries (shown beside it in the agent list). */
export function entryProblemCount(byPlace: Map<string, Problem[]>, owner: string): number {
  const prefix = toolKey(owner, "");
  let count = 0;
  for (const [key, problems] of byPlace) if (key.startsWith(prefix)) count += problems.length;
  return count;
}
