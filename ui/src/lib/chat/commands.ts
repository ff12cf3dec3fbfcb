/**
 * The chat's slash commands (`/agent tool …`, `/agent add`, `/agent switch`) as
 * pure functions of the typed text and the config: `parse` turns a command into
 * the edit it asks for (or a listing, or the forms to open, or what is wrong with
 * the usage line), `complete` says what may come next at the cursor, and
 * `confirmation` and `toolRows` word what the chat answers. A command runs
 * locally: it is never sent to a model nor logged.
 */
import type {
  Absence,
  AgentToolEntry_Serialize as AgentToolEntry,
  Edit_Deserialize as Edit,
  ExplainedEntry_Serialize as ExplainedEntry,
  ToolScope,
  ToolTarget,
} from "../../bindings";

/** What of the config the commands read. */
export interface CommandConfig {
  primary?: string | null;
  escalation?: string | null;
  agents: Array<{ name: string; tools?: AgentToolEntry[] }>;
  agent_tools: AgentToolEntry[];
}

/** A tool-agent waiting for its description: the next message the user sends is it. */
export interface PendingTool {
  target: ToolTarget;
  tool_agent: string;
}

/** What a command comes to. */
export type Parsed =
  | { kind: "edit"; edit: Edit }
  /** A listing of an agent's tool-agents, or of the global entries (`agent` null). */
  | { kind: "list"; agent: string | null }
  | { kind: "open-config" }
  /** `/help`: the commands and `@agent`. */
  | { kind: "help"; text: string }
  /** `/agent tool add X` without a description: ask for it. */
  | { kind: "describe"; pending: PendingTool; prompt: string }
  | { kind: "cancelled"; message: string }
  | { kind: "error"; message: string };

/** What the completion popup offers at the cursor: `options` replace `text[start, end)`. */
export interface Completion {
  start: number;
  end: number;
  options: string[];
}

export const USAGE = {
  agent:
    "Usage: /agent tool list|enable|disable|add|remove …, /agent add, /agent switch <agent>, /agent escalation <agent>|none",
  tool: "Usage: /agent tool list|enable|disable|add|remove <tool-agent> [for <agent>|global]",
  list: "Usage: /agent tool list [<agent>|global]",
  enable: "Usage: /agent tool enable <tool-agent> [for <agent>|global]",
  disable: "Usage: /agent tool disable <tool-agent> [for <agent>|global]",
  remove: "Usage: /agent tool remove <tool-agent> [for <agent>|global]",
  add: 'Usage: /agent tool add <tool-agent> [for <agent>|global] ["description" | -- description]',
  switch: "Usage: /agent switch <agent>",
  escalation: "Usage: /agent escalation <agent>|none",
  addAgent: "Usage: /agent add (opens the agent form)",
} as const;

const AGENT_SUBCOMMANDS = ["tool", "add", "switch", "escalation"];
const TOOL_SUBCOMMANDS = ["list", "enable", "disable", "add", "remove"];
type ToolSubcommand = "enable" | "disable" | "add" | "remove";

/** What `/help` answers: every command, `@agent`, and how to send a leading `/`. */
export const HELP = [
  "/agent tool list [<agent>|global]: the tool-agents an agent is offered, or the global entries",
  "/agent tool enable|disable|add|remove <tool-agent> [for <agent>|global]: change them",
  "/agent switch <agent>: make <agent> the primary, who answers",
  "/agent escalation <agent>|none: the agent a turn escalates to, or none",
  "/agent add: open a new agent's form",
  "/help: this list",
  "@agent message: send one message to <agent> instead of the primary",
  "//text: send text that starts with / to the model as a message",
].join("\n");

/**
 * Whether a message is a command that runs here rather than a message for the
 * model: any message whose first word is `/name` (an unknown one is refused
 * here, never sent as a billed turn). A path (`/usr/bin`) is not a command, and
 * `//text` is the message `/text`.
 */
export function isCommand(text: string): boolean {
  return /^\/[A-Za-z][\w-]*(\s|$)/.test(text.trim());
}

/** The text a message sends: `//text` is sent as `/text`; anything else as it is. */
export function messageText(text: string): string {
  return text.trimStart().startsWith("//") ? text.trimStart().slice(1) : text;
}

/** The function name a tool-agent gets: `agent_` and the name, lowercased, other characters `_`. */
export function toolName(agent: string): string {
  return `agent_${agent.toLowerCase().replace(/[^a-z0-9]/g, "_")}`;
}

/** Splits a command into words; `"…"` is one word, and `--` takes the rest of the line as one. */
function words(text: string): { words: string[]; rest: string | null; unclosedQuote: boolean } {
  const found: string[] = [];
  let index = 0;
  while (index < text.length) {
    while (index < text.length && /\s/.test(text[index])) index++;
    if (index >= text.length) break;
    if (text.startsWith("--", index) && (index + 2 === text.length || /\s/.test(text[index + 2]))) {
      return { words: found, rest: text.slice(index + 2).trim(), unclosedQuote: false };
    }
    if (text[index] === '"') {
      const close = text.indexOf('"', index + 1);
      if (close < 0) return { words: found, rest: null, unclosedQuote: true };
      found.push(text.slice(index + 1, close));
      index = close + 1;
      continue;
    }
    const start = index;
    while (index < text.length && !/\s/.test(text[index])) index++;
    found.push(text.slice(start, index));
  }
  return { words: found, rest: null, unclosedQuote: false };
}

const agentNames = (config: CommandConfig) => config.agents.map((agent) => agent.name);

function unknownAgent(name: string, config: CommandConfig, usage: string): Parsed {
  const known = agentNames(config);
  const listed = known.length > 0 ? `; the agents are ${known.join(", ")}` : "; no agent is configured";
  return { kind: "error", message: `No agent named "${name}"${listed}. ${usage}` };
}

/** Reads `[for <agent>|global]` (with `for global` too); the global list when absent. */
function readTarget(
  rest: string[],
  config: CommandConfig,
  usage: string,
): { target: ToolTarget; left: string[] } | { error: Parsed } {
  if (rest.length === 0) return { target: { kind: "global" }, left: [] };
  if (rest[0] === "global") return { target: { kind: "global" }, left: rest.slice(1) };
  if (rest[0] !== "for")
    return { error: { kind: "error", message: `Expected "for <agent>" or "global", not "${rest[0]}". ${usage}` } };
  const agent = rest[1];
  if (agent === undefined)
    return { error: { kind: "error", message: `"for" needs an agent name or "global". ${usage}` } };
  if (agent === "global") return { target: { kind: "global" }, left: rest.slice(2) };
  if (!agentNames(config).includes(agent)) return { error: unknownAgent(agent, config, usage) };
  return { target: { kind: "agent", agent }, left: rest.slice(2) };
}

/** Who a target's list serves, in words. */
function whose(target: ToolTarget): string {
  return target.kind === "global" ? "all agents" : target.agent;
}

/** Reads one command. Text that is not a command (see `isCommand`) is an error too. */
export function parse(text: string, config: CommandConfig): Parsed {
  const { words: parts, rest, unclosedQuote } = words(text.trim());
  if (parts[0] === "/help") return { kind: "help", text: HELP };
  if (parts[0] !== "/agent")
    return {
      kind: "error",
      message: `Unknown command "${parts[0] ?? text.trim()}"; nothing was sent. The commands are /agent … and /help (start a message with // to send it as written).`,
    };
  const [, subcommand, ...args] = parts;
  if (subcommand === undefined) return { kind: "error", message: `/agent needs a subcommand. ${USAGE.agent}` };
  if (subcommand === "add") {
    if (args.length > 0 || rest !== null)
      return { kind: "error", message: `/agent add takes no arguments. ${USAGE.addAgent}` };
    return { kind: "open-config" };
  }
  if (subcommand === "switch") {
    if (args.length !== 1 || rest !== null)
      return { kind: "error", message: `/agent switch needs one agent name. ${USAGE.switch}` };
    if (!agentNames(config).includes(args[0])) return unknownAgent(args[0], config, USAGE.switch);
    if (args[0] === config.escalation)
      return {
        kind: "error",
        message: `${args[0]} is the escalation agent, and the primary must be another one. To make ${args[0]} the primary, change the escalation first: /agent escalation <another agent>, or /agent escalation none; then /agent switch ${args[0]}.`,
      };
    return { kind: "edit", edit: { op: "set_primary", agent: args[0] } };
  }
  if (subcommand === "escalation") {
    if (args.length !== 1 || rest !== null)
      return { kind: "error", message: `/agent escalation needs one agent name, or none. ${USAGE.escalation}` };
    if (args[0] === "none") return { kind: "edit", edit: { op: "set_escalation", agent: null } };
    if (!agentNames(config).includes(args[0])) return unknownAgent(args[0], config, USAGE.escalation);
    if (args[0] === config.primary)
      return {
        kind: "error",
        message: `${args[0]} is the primary, and the escalation agent must be another one (a turn escalates away from the primary). ${USAGE.escalation}`,
      };
    return { kind: "edit", edit: { op: "set_escalation", agent: args[0] } };
  }
  if (subcommand !== "tool") return { kind: "error", message: `Unknown subcommand "${subcommand}". ${USAGE.agent}` };

  const [action, ...toolArgs] = args;
  if (action === undefined) return { kind: "error", message: `/agent tool needs a subcommand. ${USAGE.tool}` };
  if (action === "list") {
    if (toolArgs.length > 1 || rest !== null) return { kind: "error", message: `Too many arguments. ${USAGE.list}` };
    const [which] = toolArgs;
    if (which === "global") return { kind: "list", agent: null };
    if (which !== undefined) {
      if (!agentNames(config).includes(which)) return unknownAgent(which, config, USAGE.list);
      return { kind: "list", agent: which };
    }
    if (!config.primary)
      return { kind: "error", message: `No primary agent is configured: name an agent or "global". ${USAGE.list}` };
    return { kind: "list", agent: config.primary };
  }
  if (!TOOL_SUBCOMMANDS.includes(action))
    return { kind: "error", message: `Unknown tool subcommand "${action}". ${USAGE.tool}` };
  const usage = USAGE[action as ToolSubcommand];
  const [toolAgent, ...targetArgs] = toolArgs;
  if (toolAgent === undefined || toolAgent === "for" || toolAgent === "global")
    return { kind: "error", message: `Name the tool-agent. ${usage}` };
  // An entry may name an agent that is gone; only adding and enabling need it to exist.
  if ((action === "add" || action === "enable") && !agentNames(config).includes(toolAgent))
    return unknownAgent(toolAgent, config, usage);
  if (unclosedQuote) return { kind: "error", message: `The description's quote is not closed. ${usage}` };
  const read = readTarget(targetArgs, config, usage);
  if ("error" in read) return read.error;
  const { target, left } = read;
  const tool_agent = toolAgent;

  if (action === "add") {
    if (left.length > 1 || (left.length === 1 && rest !== null))
      return { kind: "error", message: `Quote the description, or put it after "--". ${usage}` };
    const description = (left[0] ?? rest ?? "").trim();
    if (target.kind === "agent" && target.agent === tool_agent)
      return { kind: "error", message: `${tool_agent} cannot be a tool of itself (the cycle guard). ${usage}` };
    if (!description)
      return {
        kind: "describe",
        pending: { target, tool_agent },
        prompt: `Describe ${tool_agent} as a tool for ${whose(target)}: the next message you send is its description (/cancel to drop it).`,
      };
    return { kind: "edit", edit: { op: "add_tool", target, tool_agent, description } };
  }
  if (left.length > 0 || rest !== null) return { kind: "error", message: `Unexpected "${left[0] ?? "--"}". ${usage}` };
  // Enabling a tool-agent the global list lacks adds it there, with a description asked for.
  if (
    action === "enable" &&
    target.kind === "global" &&
    !config.agent_tools.some((entry) => entry.agent === tool_agent)
  )
    return {
      kind: "describe",
      pending: { target, tool_agent },
      prompt: `${tool_agent} is not a tool for all agents yet. Describe it: the next message you send is its description (/cancel to drop it).`,
    };
  return { kind: "edit", edit: { op: `${action as "enable" | "disable" | "remove"}_tool`, target, tool_agent } };
}

/** The message sent after `/agent tool add X` asked for a description: that description, or a new command. */
export function describePending(pending: PendingTool, text: string, config: CommandConfig): Parsed {
  const description = text.trim();
  if (description === "/cancel") return { kind: "cancelled", message: `Not added: ${pending.tool_agent}.` };
  if (isCommand(description)) return parse(description, config);
  if (!description)
    return { kind: "error", message: `The description of ${pending.tool_agent} is empty. ${USAGE.add}` };
  return { kind: "edit", edit: { op: "add_tool", ...pending, description } };
}

/** The scope an entry of `target` for `toolAgent` has in `config` (an agent's own entry overrides a global twin). */
function scopeOf(target: ToolTarget, toolAgent: string, config: CommandConfig): ToolScope {
  if (target.kind === "global") return "global";
  return config.agent_tools.some((entry) => entry.agent === toolAgent) ? "override" : "local";
}

/** What the chat answers once an edit was applied; `config` is the config after it. */
export function confirmation(edit: Edit, config: CommandConfig): string {
  switch (edit.op) {
    case "enable_tool":
    case "disable_tool":
    case "add_tool": {
      const verb = { enable_tool: "Enabled", disable_tool: "Disabled", add_tool: "Added" }[edit.op];
      const scope = scopeOf(edit.target, edit.tool_agent, config);
      return `${verb} ${toolName(edit.tool_agent)} for ${whose(edit.target)} (${scope}).`;
    }
    case "remove_tool":
      return edit.target.kind === "global"
        ? `Removed ${toolName(edit.tool_agent)} from the global list.`
        : `Removed ${toolName(edit.tool_agent)} from ${edit.target.agent}'s own list.`;
    case "set_primary":
      return `${edit.agent} is now the primary agent.`;
    case "set_escalation":
      return edit.agent ? `Turns now escalate to ${edit.agent}.` : "No escalation agent now: turns do not escalate.";
    default:
      return "Done.";
  }
}

/** One row of a `/agent tool list` answer. */
export interface ToolRow {
  name: string;
  scope: string;
  description: string;
  enabled: boolean;
  /** Why the entry is not offered (in words), or null when it is. */
  absent: string | null;
}

const ABSENCE: Record<Absence, string> = {
  self_reference: "the agent itself (cycle guard)",
  unknown_agent: "no such agent",
  disabled: "disabled",
  not_callable: "claude-cli is never a tool",
  depth_limit: "depth limit 0",
  caller_cannot_call: "this agent cannot call tools",
};

/** A description cut to `length` characters, with an ellipsis when cut. */
export function truncate(text: string, length = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= length ? flat : `${flat.slice(0, length - 1).trimEnd()}…`;
}

/** An agent's entries as `explain_tools` gave them; an override's global twin is marked "(overridden)". */
export function toolRows(entries: ExplainedEntry[]): ToolRow[] {
  return entries.map((entry) => ({
    name: entry.tool_name,
    scope: entry.overridden ? `${entry.scope} (overridden)` : entry.scope,
    description: truncate(entry.description),
    enabled: entry.enabled,
    absent: entry.overridden ? "overridden" : entry.absent ? ABSENCE[entry.absent] : null,
  }));
}

/** The global entries as written. */
export function globalRows(config: CommandConfig): ToolRow[] {
  const names = agentNames(config);
  return config.agent_tools.map((entry) => ({
    name: toolName(entry.agent),
    scope: "global",
    description: truncate(entry.description),
    enabled: entry.enabled !== false,
    absent: !names.includes(entry.agent) ? ABSENCE.unknown_agent : entry.enabled === false ? ABSENCE.disabled : null,
  }));
}

/** The options that complete `partial` (case-insensitive prefix); none when it is one of them already. */
function matching(options: string[], partial: string): string[] {
  if (options.includes(partial)) return [];
  const prefix = partial.toLowerCase();
  return options.filter((option) => option.toLowerCase().startsWith(prefix));
}

/** What may be typed at `cursor`: subcommands, agent names, `for`, `global`. Null when nothing. */
export function complete(text: string, cursor: number, config: CommandConfig): Completion | null {
  const before = text.slice(0, cursor);
  if (!before.startsWith("/") || before.includes("\n") || before.includes('"') || /(^|\s)--(\s|$)/.test(before))
    return null;
  const start = before.search(/\S*$/);
  const partial = before.slice(start);
  const done = before.slice(0, start).split(/\s+/).filter(Boolean);
  const end = start + (/^\S*/.exec(text.slice(start))?.[0].length ?? 0);
  const names = agentNames(config);
  const options = ((): string[] => {
    const [command, subcommand, action, toolAgent, preposition] = done;
    if (done.length === 0) return ["/agent", "/help"];
    if (command !== "/agent") return [];
    if (done.length === 1) return AGENT_SUBCOMMANDS;
    if (subcommand === "switch") return done.length === 2 ? names : [];
    if (subcommand === "escalation") return done.length === 2 ? [...names, "none"] : [];
    if (subcommand !== "tool") return [];
    if (done.length === 2) return TOOL_SUBCOMMANDS;
    if (action === "list") return done.length === 3 ? [...names, "global"] : [];
    if (!TOOL_SUBCOMMANDS.includes(action)) return [];
    if (done.length === 3) return names;
    if (done.length === 4) return toolAgent === undefined ? [] : ["for", "global"];
    if (done.length === 5 && preposition === "for") return [...names.filter((name) => name !== toolAgent), "global"];
    return [];
  })();
  const found = matching(options, partial);
  return found.length > 0 ? { start, end, options: found } : null;
}

/** The text with the completed word in place and a space after it, and where the cursor goes. */
export function accept(text: string, completion: Completion, option: string): { text: string; cursor: number } {
  const after = text.slice(completion.end).replace(/^\s*/, "");
  const head = `${text.slice(0, completion.start)}${option} `;
  return { text: head + after, cursor: head.length };
}
