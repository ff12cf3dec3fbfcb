/**
 * A conflict made readable: an edit refused because the file changed on disk is
 * shown as the thing it touches, as mine (what the edit would write) and theirs (as
 * the file has it now), with a line diff of the two. Pure; tested beside it.
 */
import type { Config_Serialize as Config, Edit_Deserialize as Edit, ToolTarget } from "../../bindings";
import { lineDiff, type DiffLine } from "../shared/diff";

/** What an edit is about, in words, and the two versions of it as pretty JSON. */
export type ConflictView = { subject: string; mine: string; theirs: string; diff: DiffLine[] };

/** One line of a diff: in both, only in mine, or only in theirs. */
export type { DiffLine };

const pretty = (value: unknown) => (value === undefined ? "(not in the file)" : JSON.stringify(value, null, 2));

function entries(config: Config, target: ToolTarget) {
  return target.kind === "global"
    ? config.agent_tools
    : (config.agents.find((agent) => agent.name === target.agent)?.tools ?? []);
}

const where = (target: ToolTarget) =>
  target.kind === "global" ? "the global tool-agents" : `${target.agent}'s tool-agents`;

/** The subject of `mine` and its two versions: as the edit would write it, and as `theirs` holds it. */
export function conflictView(mine: Edit, theirs: Config): ConflictView {
  let subject: string;
  let mineValue: unknown;
  let theirsValue: unknown;
  switch (mine.op) {
    case "add_agent":
    case "edit_agent": {
      const name = mine.op === "edit_agent" ? mine.name : mine.agent.name;
      subject = `agent “${name}”`;
      mineValue = mine.agent;
      theirsValue = theirs.agents.find((agent) => agent.name === name);
      break;
    }
    case "remove_agent":
      subject = `agent “${mine.name}” (you remove it)`;
      mineValue = undefined;
      theirsValue = theirs.agents.find((agent) => agent.name === mine.name);
      break;
    case "set_tool": {
      const name = mine.previous ?? mine.entry.agent;
      subject = `the entry for “${name}” in ${where(mine.target)}`;
      mineValue = mine.entry;
      theirsValue = entries(theirs, mine.target).find((entry) => entry.agent === name);
      break;
    }
    case "enable_tool":
    case "disable_tool":
    case "add_tool":
    case "remove_tool": {
      subject = `the entry for “${mine.tool_agent}” in ${where(mine.target)}`;
      const current = entries(theirs, mine.target).find((entry) => entry.agent === mine.tool_agent);
      theirsValue = current;
      mineValue =
        mine.op === "remove_tool"
          ? undefined
          : mine.op === "add_tool"
            ? { agent: mine.tool_agent, description: mine.description }
            : { ...(current ?? { agent: mine.tool_agent }), enabled: mine.op === "enable_tool" };
      break;
    }
    case "set_primary":
    case "set_escalation": {
      const role = mine.op === "set_primary" ? "primary" : "escalation";
      subject = `the ${role} agent`;
      mineValue = mine.agent ?? null;
      theirsValue = theirs[role] ?? null;
      break;
    }
    case "set_telemetry":
      subject = "the trace export settings";
      mineValue = mine.telemetry ?? null;
      theirsValue = theirs.telemetry ?? null;
      break;
    case "setup":
      subject = "the agents and tool-agents (setup)";
      mineValue = { agents: mine.agents, agent_tools: mine.agent_tools };
      theirsValue = { agents: theirs.agents, agent_tools: theirs.agent_tools };
      break;
  }
  const mineText = pretty(aligned(mineValue, theirsValue));
  const theirsText = pretty(theirsValue);
  return { subject, mine: mineText, theirs: theirsText, diff: lineDiff(theirsText, mineText) };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `value` with its keys in `reference`'s order (its own keys after), so that a diff shows changes, not order. */
export function aligned(value: unknown, reference: unknown): unknown {
  if (Array.isArray(value) && Array.isArray(reference))
    return value.map((item, index) => aligned(item, reference[index]));
  if (!isObject(value) || !isObject(reference)) return value;
  const keys = [
    ...Object.keys(reference).filter((key) => key in value),
    ...Object.keys(value).filter((key) => !(key in reference)),
  ];
  return Object.fromEntries(keys.map((key) => [key, aligned(value[key], reference[key])]));
}
