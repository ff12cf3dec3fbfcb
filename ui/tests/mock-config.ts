/**
 * The config commands, mocked for the browser suites: an in-memory config file
 * with a version counter, the edit operations applied as the core's `edit::apply_to`
 * does (same refusals, same messages), a small part of validation, `explain_tools`
 * worked out as `tools::explain` does, and a canned connection report. Test
 * scaffolding, not a second backend: the real path is tested through the real
 * window. Window hooks let a test change the file behind the window's back, break
 * it (the banner) and make the next edit meet a stale version (a conflict).
 */
import { emit } from "@tauri-apps/api/event";
import type {
  Absence,
  AgentConfig_Serialize as AgentConfig,
  AgentToolEntry_Serialize as AgentToolEntry,
  AppError_Serialize as AppError,
  Approval,
  ApprovalFrom,
  Config_Serialize as Config,
  ConfigChanged_Serialize as ConfigChanged,
  ConfigState_Serialize as ConfigState,
  ConnectionReport_Serialize as ConnectionReport,
  Edit_Serialize as Edit,
  EffectiveApprovals_Serialize as EffectiveApprovals,
  ExplainedEntry_Serialize as ExplainedEntry,
  Problem,
  ResolvedTool,
  ToolTarget,
  ToolsExplained_Serialize as ToolsExplained,
} from "../src/bindings";

const path = "/home/user/.config/switchboard/config.json";

/** The demo config: the agents the chat's scripted turn uses, global tool-agents and a few own entries. */
function demoConfig(): Config {
  return {
    primary: "assistant",
    escalation: "expert",
    agents: [
      {
        name: "assistant",
        provider: "demo",
        model: "demo-planner",
        tools: [
          { agent: "coder", description: "Writes and edits code; send it the change you want.", approval: "auto" },
          { agent: "summariser", description: "Summarises text.", enabled: false },
        ],
      },
      { name: "researcher", provider: "demo", model: "demo-researcher" },
      { name: "summariser", provider: "demo", model: "demo-summariser" },
      {
        name: "coder",
        provider: "local",
        model: "qwen2.5-coder",
        url: "http://127.0.0.1:8080",
        tools: [{ agent: "ghost", description: "An agent that was removed." }],
      },
      { name: "expert", provider: "demo", model: "demo-expert" },
    ],
    agent_tools: [
      { agent: "researcher", description: "Finds facts and sources for a question." },
      { agent: "summariser", description: "Summarises a block of text." },
      { agent: "coder", description: "Writes code." },
    ],
  };
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const quoted = (text: string) => JSON.stringify(text);

let onDisk: Config = demoConfig();
/** The config in force: the last good one while the file on disk is broken. */
let inForce: Config = clone(onDisk);
let versionNumber = 1;
/** Why the file on disk is not in force (a syntax error), or null. */
let broken: AppError | null = null;

const version = () => `v${versionNumber}`;

function validate(config: Config): Problem[] {
  const problems: Problem[] = [];
  const names = new Set(config.agents.map((agent) => agent.name));
  const entries = (list: AgentToolEntry[], at: string) =>
    list.forEach((entry, index) => {
      if (entry.description.trim() === "")
        problems.push({
          severity: "error",
          path: `${at}[${index}].description`,
          message: "a tool entry needs a description: the calling model reads it to decide when to call",
        });
      if (!names.has(entry.agent))
        problems.push({
          severity: "warning",
          path: `${at}[${index}].agent`,
          message: `agent ${quoted(entry.agent)} is not configured; this entry is ignored`,
        });
    });
  config.agents.forEach((agent, index) => {
    const at = `agents[${index}]`;
    if (config.agents.findIndex((other) => other.name === agent.name) !== index)
      problems.push({
        severity: "error",
        path: `${at}.name`,
        message: `agent name ${quoted(agent.name)} is already used`,
      });
    if ((agent.provider === "local" || agent.provider === "a2a") && !agent.url)
      problems.push({
        severity: "error",
        path: `${at}.url`,
        message: `provider ${quoted(agent.provider)} needs \`url\``,
      });
    if (agent.api_key_env !== undefined && !/^[A-Z_][A-Z0-9_]*$/.test(agent.api_key_env))
      problems.push({
        severity: "error",
        path: `${at}.api_key_env`,
        message: "must name an environment variable (such as OPENAI_API_KEY), not hold the key itself",
      });
    entries(agent.tools ?? [], `${at}.tools`);
  });
  entries(config.agent_tools, "agent_tools");
  if (config.primary && config.primary === config.escalation)
    problems.push({
      severity: "error",
      path: "escalation",
      message: "the escalation agent must differ from the primary",
    });
  return problems;
}

/** What the window's `get_config_state` answers. */
function configState(): ConfigState {
  return {
    path,
    version: version(),
    config: clone(inForce),
    warnings: validate(inForce),
    error: broken,
    first_start: false,
    approvals: effectiveApprovals(inForce),
  };
}

/** The approval in force and which setting decided it, as the core's `Config::approval_and_source` says. */
function approvalAndSource(entry: AgentToolEntry, agents: AgentConfig[]): { approval: Approval; from: ApprovalFrom } {
  if (entry.approval) return { approval: entry.approval, from: "entry" };
  const own = agents.find((agent) => agent.name === entry.agent)?.approval;
  return own ? { approval: own, from: "agent" } : { approval: "ask", from: "default" };
}

const approvalOf = (entry: AgentToolEntry, agents: AgentConfig[]) => approvalAndSource(entry, agents).approval;

/** As the core's `Config::effective_approvals`. */
export function effectiveApprovals(config: Config): EffectiveApprovals {
  const row = (owner: string | null, entry: AgentToolEntry) => ({
    owner,
    tool_agent: entry.agent,
    ...approvalAndSource(entry, config.agents),
  });
  return {
    entries: [
      ...config.agent_tools.map((entry) => row(null, entry)),
      ...config.agents.flatMap((agent) => (agent.tools ?? []).map((entry) => row(agent.name, entry))),
    ],
    agents: config.agents.map((agent) => ({
      agent: agent.name,
      ...approvalAndSource({ agent: agent.name, description: "" }, config.agents),
    })),
  };
}

class Refused extends Error {}

function list(config: Config, target: ToolTarget): AgentToolEntry[] {
  if (target.kind === "global") return config.agent_tools;
  const agent = config.agents.find((candidate) => candidate.name === target.agent);
  if (!agent) throw new Refused(`no agent named ${quoted(target.agent)} is configured`);
  agent.tools ??= [];
  return agent.tools;
}

const describe = (target: ToolTarget) => (target.kind === "global" ? "agent_tools" : `agent ${quoted(target.agent)}`);

/** `edit::apply_to`, for the flows the suites drive. */
function applyTo(config: Config, edit: Edit): void {
  const find = (name: string) => config.agents.find((agent) => agent.name === name);
  switch (edit.op) {
    case "enable_tool":
    case "disable_tool": {
      const enabled = edit.op === "enable_tool";
      const inherited = config.agent_tools.find((entry) => entry.agent === edit.tool_agent)?.description;
      const entries = list(config, edit.target);
      const entry = entries.find((candidate) => candidate.agent === edit.tool_agent);
      if (entry) entry.enabled = enabled;
      else if (edit.target.kind === "agent" && inherited !== undefined)
        entries.push({ agent: edit.tool_agent, description: inherited, enabled });
      else if (edit.target.kind === "agent")
        throw new Refused(
          `${quoted(edit.tool_agent)} has no global entry to inherit a description from; add it for ${quoted(edit.target.agent)} with a description`,
        );
      else throw new Refused(`agent_tools has no entry for ${quoted(edit.tool_agent)}; add it with a description`);
      return;
    }
    case "add_tool": {
      const entries = list(config, edit.target);
      if (entries.some((entry) => entry.agent === edit.tool_agent))
        throw new Refused(
          `${describe(edit.target)} already has an entry for ${quoted(edit.tool_agent)}; enable, disable or remove it instead`,
        );
      entries.push({ agent: edit.tool_agent, description: edit.description });
      return;
    }
    case "remove_tool": {
      const entries = list(config, edit.target);
      const index = entries.findIndex((entry) => entry.agent === edit.tool_agent);
      if (index < 0) throw new Refused(`${describe(edit.target)} has no entry for ${quoted(edit.tool_agent)}`);
      entries.splice(index, 1);
      return;
    }
    case "set_tool": {
      const entries = list(config, edit.target);
      const replaced = edit.previous ?? edit.entry.agent;
      if (replaced !== edit.entry.agent && entries.some((entry) => entry.agent === edit.entry.agent))
        throw new Refused(`${describe(edit.target)} already has an entry for ${quoted(edit.entry.agent)}`);
      const index = entries.findIndex((entry) => entry.agent === replaced);
      if (index >= 0) entries[index] = clone(edit.entry);
      else entries.push(clone(edit.entry));
      return;
    }
    case "add_agent":
      if (find(edit.agent.name)) throw new Refused(`an agent named ${quoted(edit.agent.name)} already exists`);
      config.agents.push(clone(edit.agent));
      return;
    case "edit_agent": {
      if (edit.agent.name !== edit.name && find(edit.agent.name))
        throw new Refused(`an agent named ${quoted(edit.agent.name)} already exists`);
      const index = config.agents.findIndex((agent) => agent.name === edit.name);
      if (index < 0) throw new Refused(`no agent named ${quoted(edit.name)} is configured`);
      config.agents[index] = clone(edit.agent);
      if (config.primary === edit.name) config.primary = edit.agent.name;
      if (config.escalation === edit.name) config.escalation = edit.agent.name;
      // As the core does: a rename carries the tool entries that name the agent.
      if (edit.agent.name !== edit.name) {
        for (const entry of [...config.agent_tools, ...config.agents.flatMap((agent) => agent.tools ?? [])])
          if (entry.agent === edit.name) entry.agent = edit.agent.name;
      }
      return;
    }
    case "remove_agent": {
      if (!find(edit.name)) throw new Refused(`no agent named ${quoted(edit.name)} is configured`);
      for (const role of ["primary", "escalation"] as const)
        if (config[role] === edit.name)
          throw new Refused(`${quoted(edit.name)} is the ${role} agent; choose another ${role} first`);
      config.agents = config.agents.filter((agent) => agent.name !== edit.name);
      if (edit.tool_entries === "remove") {
        config.agent_tools = config.agent_tools.filter((entry) => entry.agent !== edit.name);
        for (const agent of config.agents)
          if (agent.tools) agent.tools = agent.tools.filter((entry) => entry.agent !== edit.name);
      }
      return;
    }
    case "set_telemetry":
      if (edit.telemetry) config.telemetry = edit.telemetry;
      else delete config.telemetry;
      return;
    case "set_primary":
    case "set_escalation": {
      if (edit.agent && !find(edit.agent)) throw new Refused(`no agent named ${quoted(edit.agent)} is configured`);
      const role = edit.op === "set_primary" ? "primary" : "escalation";
      if (edit.agent) config[role] = edit.agent;
      else delete config[role];
      return;
    }
    case "setup":
      if (edit.replace_agents) {
        config.agents = [];
        config.agent_tools = [];
      }
      for (const agent of edit.agents) applyTo(config, { op: "add_agent", agent });
      for (const entry of edit.agent_tools)
        applyTo(config, { op: "set_tool", target: { kind: "global" }, entry, previous: null });
      applyTo(config, { op: "set_primary", agent: edit.primary });
      applyTo(config, { op: "set_escalation", agent: edit.escalation });
      return;
  }
}

const appError = (kind: AppError["kind"], message: string, at: Partial<AppError> = {}): AppError => ({
  kind,
  message,
  path,
  line: null,
  column: null,
  ...at,
});

/** The window hears that the file changed (as the watcher or a save tells it). */
async function tellWindow(changedAgents: string[]): Promise<void> {
  await emit("config-changed", {
    version: broken ? null : version(),
    changed_agents: changedAgents,
    error: broken,
  } satisfies ConfigChanged);
}

/** `edit_config`: nothing is written unless the version matches and the result is valid. */
async function editConfig(expectedVersion: string, edit: Edit): Promise<ConfigState> {
  if (broken) throw broken;
  if (expectedVersion !== version())
    throw appError("config_conflict", `${path} changed on disk since it was read; reload it and make the change again`);
  const next = clone(onDisk);
  try {
    applyTo(next, edit);
  } catch (error) {
    if (error instanceof Refused) throw appError("edit_refused", error.message);
    throw error;
  }
  const errors = validate(next).filter((problem) => problem.severity === "error");
  if (errors.length > 0)
    throw appError(
      "config_invalid",
      `${path}: ${errors.length} problem(s):\n${errors.map((problem) => `  error: ${problem.path}: ${problem.message}`).join("\n")}`,
    );
  onDisk = next;
  inForce = clone(next);
  versionNumber += 1;
  await tellWindow([]);
  return configState();
}

/** Whether an agent of this provider calls tool-agents (`tools::explain::calls_tool_agents`). */
const callsTools = (agent: AgentConfig) =>
  agent.provider === "local" ||
  agent.provider === "demo" ||
  (agent.provider === "claude-cli" && agent.experimental_cli_tool_calls === true);

const toolName = (agent: string) => `agent_${agent.toLowerCase().replace(/[^a-z0-9]/g, "_")}`;

function definition(entry: AgentToolEntry) {
  return {
    type: "function",
    function: {
      name: toolName(entry.agent),
      description: entry.description,
      parameters: {
        type: "object",
        properties: {
          request: { type: "string", description: "The request to send to the agent." },
          context: {
            type: "object",
            description: "Optional structured data the agent needs (JSON); passed to it as labelled context.",
          },
        },
        required: ["request"],
      },
    },
  };
}

/** `tools::explain::explain`: every entry that could reach `name`'s list, and why each absent one is absent. */
function explain(config: Config, name: string): ToolsExplained {
  const caller = config.agents.find((agent) => agent.name === name);
  if (!caller) throw appError("not_found", `no agent named ${quoted(name)} is configured`, { path: null });
  const maxDepth = caller.limits?.max_depth ?? config.limits?.max_depth ?? 2;
  const canCall = callsTools(caller);
  const own = caller.tools ?? [];
  const row = (entry: AgentToolEntry, scope: ExplainedEntry["scope"], overridden: boolean): ExplainedEntry => {
    const target = config.agents.find((agent) => agent.name === entry.agent);
    let absent: Absence | null = null;
    if (entry.agent === name) absent = "self_reference";
    else if (!target) absent = "unknown_agent";
    else if (target.provider === "claude-cli") absent = "not_callable";
    else if (entry.enabled === false) absent = "disabled";
    else if (!canCall) absent = "caller_cannot_call";
    else if (maxDepth === 0) absent = "depth_limit";
    return {
      tool_agent: entry.agent,
      tool_name: toolName(entry.agent),
      scope,
      description: entry.description,
      enabled: entry.enabled !== false,
      approval: approvalOf(entry, config.agents),
      overridden,
      absent: overridden ? null : absent,
    };
  };
  const entries: ExplainedEntry[] = [];
  for (const global of config.agent_tools) {
    const mine = own.find((entry) => entry.agent === global.agent);
    if (mine) entries.push(row(global, "global", true));
    entries.push(mine ? row(mine, "override", false) : row(global, "global", false));
  }
  for (const entry of own)
    if (!config.agent_tools.some((global) => global.agent === entry.agent)) entries.push(row(entry, "local", false));
  const offered: unknown[] = [];
  if (canCall) {
    for (const entry of entries) {
      if (entry.overridden || entry.absent) continue;
      const source =
        own.find((candidate) => candidate.agent === entry.tool_agent) ??
        config.agent_tools.find((candidate) => candidate.agent === entry.tool_agent)!;
      offered.push(definition(source));
    }
    if (config.primary === name && config.escalation)
      offered.unshift({
        type: "function",
        function: {
          name: "escalate",
          description: `Hand this turn to ${config.escalation}, the escalation agent.`,
          parameters: { type: "object", properties: { reason: { type: "string" } }, required: ["reason"] },
        },
      });
  }
  return { agent: name, entries, offered, max_depth: maxDepth, chains: [] };
}

/** `list_tools`: the merged list (disabled entries included), or the global entries. */
function listTools(config: Config, name: string | null): ResolvedTool[] {
  if (name === null)
    return config.agent_tools.map((entry) => ({
      agent: entry.agent,
      tool_name: toolName(entry.agent),
      scope: "global",
      description: entry.description,
      enabled: entry.enabled !== false,
      approval: approvalOf(entry, config.agents),
    }));
  if (!config.agents.some((agent) => agent.name === name)) return [];
  return explain(config, name)
    .entries.filter(
      (entry) =>
        !entry.overridden &&
        entry.absent !== "self_reference" &&
        entry.absent !== "unknown_agent" &&
        entry.absent !== "not_callable",
    )
    .map(({ tool_agent, tool_name, scope, description, enabled, approval }) => ({
      agent: tool_agent,
      tool_name,
      scope,
      description,
      enabled,
      approval,
    }));
}

/** A canned connection test: an HTTP agent lists models and streams; a server that is "down" fails. */
function testConnection(agent: AgentConfig): ConnectionReport {
  if (agent.provider === "demo")
    return {
      ok: true,
      steps: [{ name: "built-in agent", ok: true, detail: "needs no server", millis: 0 }],
      models: [],
      tools: [],
      first_token_ms: null,
      description: null,
    };
  if (agent.url?.includes("down"))
    return {
      ok: false,
      steps: [
        {
          name: "list models",
          ok: false,
          detail: `${agent.url}/v1/models: connection refused. Is the server running? Start it, or check the port.`,
          millis: 3,
        },
      ],
      models: [],
      tools: [],
      first_token_ms: null,
      description: null,
    };
  if (agent.provider === "mcp")
    return {
      ok: true,
      steps: [
        { name: "connect", ok: true, detail: `connected to ${agent.url ?? agent.command}`, millis: 41 },
        { name: "list tools", ok: true, detail: "2 tools", millis: 12 },
      ],
      models: [],
      tools: ["search", "fetch"],
      first_token_ms: null,
      description: agent.tool === "fetch" ? "Fetches a page." : "Searches the web.",
    };
  if (agent.provider === "a2a")
    return {
      ok: true,
      steps: [
        { name: "read the agent card", ok: true, detail: `River Scout at ${agent.url}/a2a (streams)`, millis: 9 },
      ],
      models: [],
      tools: [],
      first_token_ms: null,
      description: "River Scout: Finds facts about rivers. Skills: River facts (Short facts about a river.).",
    };
  return {
    ok: true,
    steps: [
      { name: "list models", ok: true, detail: "3 models; qwen2.5-coder is among them", millis: 18 },
      { name: "stream a reply", ok: true, detail: "“ok” streamed in 2 chunks", millis: 240 },
    ],
    models: ["qwen2.5-coder", "llama3.2", "gemma3"],
    tools: [],
    first_token_ms: 97,
    description: null,
  };
}

declare global {
  interface Window {
    /** Someone edits the file on disk: `change` rewrites it, and the watcher tells the window. */
    __configOutsideChange?: (change: (config: Config) => void) => Promise<void>;
    /** The file on disk stops parsing (line, column, message); the last good config stays in force. */
    __configBreakFile?: (line: number, column: number, message: string) => Promise<void>;
    /** The file parses again (as it was before it broke, or as `change` makes it). */
    __configRepairFile?: (change?: (config: Config) => void) => Promise<void>;
    /**
     * The file changes on disk and the window has not heard yet: its next edit
     * carries a stale version (a conflict).
     */
    __configChangeUnheard?: (change: (config: Config) => void) => void;
    /** The edits the window sent, for the tests to check. */
    __configEdits: Edit[];
    /** The mock system keyring: key by entry. */
    __keyring: Record<string, string>;
  }
}

window.__configEdits = [];
window.__keyring = {};

window.__configOutsideChange = async (change) => {
  change(onDisk);
  inForce = clone(onDisk);
  versionNumber += 1;
  await tellWindow(inForce.agents.map((agent) => agent.name));
};

window.__configBreakFile = async (line, column, message) => {
  broken = appError("config_syntax", `${path}:${line}:${column}: ${message}`, { line, column });
  await tellWindow([]);
};

window.__configRepairFile = async (change) => {
  broken = null;
  const before = JSON.stringify(inForce);
  change?.(onDisk);
  inForce = clone(onDisk);
  // The version is the file's content hash: the file restored as it was has the version it had.
  if (JSON.stringify(inForce) !== before) versionNumber += 1;
  await tellWindow([]);
};

window.__configChangeUnheard = (change) => {
  change(onDisk);
  inForce = clone(onDisk);
  versionNumber += 1;
};

/** The config commands by name; `mock-ipc.ts` answers them from here. */
export const configCommands: Record<string, (payload: Record<string, unknown>) => unknown> = {
  get_config_state: () => configState(),
  list_tools: (payload) => listTools(inForce, (payload.agent as string | null) ?? null),
  explain_tools: (payload) => explain(inForce, payload.agent as string),
  read_config_file: () => {
    if (broken) throw broken;
    return { ...configState(), config: clone(onDisk), error: null };
  },
  edit_config: (payload) => {
    window.__configEdits.push(payload.edit as Edit);
    return editConfig(payload.expectedVersion as string, payload.edit as Edit);
  },
  test_connection: async (payload) => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    return testConnection(payload.agent as AgentConfig);
  },
  // Health: a demo agent is built in; an HTTP agent on port 9 (where nothing listens) would fail.
  agent_health: () =>
    inForce.agents.map((agent) =>
      agent.url?.includes("127.0.0.1:9/")
        ? { agent: agent.name, state: "problem", detail: `nothing answers at ${agent.url}` }
        : {
            agent: agent.name,
            state: "ok",
            detail: agent.provider === "demo" ? "built in" : `answers at ${agent.url}`,
          },
    ),
  // The system keyring: entries the tests read back (the real one is tested in the window).
  store_api_key: (payload) => {
    window.__keyring[payload.entry as string] = payload.key as string;
    return null;
  },
  api_key_stored: (payload) => (payload.entry as string) in window.__keyring,
  delete_api_key: (payload) => {
    const had = (payload.entry as string) in window.__keyring;
    delete window.__keyring[payload.entry as string];
    return had;
  },
};
