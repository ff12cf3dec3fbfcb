/**
 * The setup wizard's and the slash commands' side of the mocked IPC (tests/mock-ipc.ts
 * routes here what `handlesSetup` claims). `discover_setup` and `test_connection`
 * really ask the servers: `GET {url}/models` of each `kind@url` in `?servers=` (the
 * browser test's fake OpenAI-compatible server on loopback), so the wizard shows
 * what a server answered; `?cli=aider,smolagent` puts those on the "PATH". With
 * `?setup-config` this module also keeps the config (`?first-start`: the demo one
 * the app just wrote): `edit_config` applies the edits the wizard and the commands
 * send as the backend does (the refusals worded as it words them), records each in
 * `window.__edits`, and refuses the next one with `window.__refuseNextEdit`'s message.
 */
import type {
  AgentConfig_Serialize as AgentConfig,
  AgentToolEntry_Serialize as AgentToolEntry,
  ConfigState_Serialize as ConfigState,
  Edit_Serialize as Edit,
  ExplainedEntry_Serialize as ExplainedEntry,
  ToolTarget,
} from "../src/bindings";
import { effectiveApprovals } from "./mock-config";

declare global {
  interface Window {
    /** The edits `edit_config` applied, in order. */
    __edits: Edit[];
    /** When set, the next edit is refused (`edit_refused`) with this message, and it is cleared. */
    __refuseNextEdit?: string;
  }
}

window.__edits = [];
const query = new URLSearchParams(location.search);
const ownsConfig = query.has("setup-config");

const state: ConfigState = {
  first_start: query.has("first-start"),
  path: "/home/user/.config/switchboard/config.json",
  version: "v1",
  warnings: [],
  error: null,
  config: {
    primary: "assistant",
    escalation: "expert",
    agents: [
      { name: "assistant", provider: "demo", model: "demo-planner" },
      { name: "researcher", provider: "demo", model: "demo-researcher" },
      { name: "summariser", provider: "demo", model: "demo-summariser" },
      { name: "coder", provider: "local", model: "qwen2.5-coder", url: "http://127.0.0.1:8080" },
      { name: "expert", provider: "demo", model: "demo-expert" },
    ],
    agent_tools: [
      { agent: "researcher", description: "Looks things up and reports the facts it found, with their sources." },
      { agent: "summariser", description: "Summarises a block of text." },
    ],
  },
  // Said by `get_config_state` from the config as it is then.
  approvals: { entries: [], agents: [] },
};

const configCommands = ["get_config_state", "read_config_file", "list_tools", "explain_tools", "edit_config"];

/** Whether this module answers `command`. */
export function handlesSetup(command: string): boolean {
  return (
    command === "discover_setup" || command === "test_connection" || (ownsConfig && configCommands.includes(command))
  );
}

/** The model ids a server lists, or why not. */
async function listModels(url: string): Promise<string[]> {
  const response = await fetch(`${url}/models`, { signal: AbortSignal.timeout(1500) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const body = (await response.json()) as { data: Array<{ id: string }> };
  return body.data.map((model) => model.id);
}

const refused = (message: string) => ({ kind: "edit_refused", message, path: null, line: null, column: null });
const toolName = (agent: string) => `agent_${agent.toLowerCase().replace(/[^a-z0-9]/g, "_")}`;

function entriesOf(target: ToolTarget): AgentToolEntry[] {
  if (target.kind === "global") return state.config.agent_tools;
  const agent = state.config.agents.find((candidate) => candidate.name === target.agent);
  if (!agent) throw refused(`no agent named "${target.agent}" is configured`);
  agent.tools ??= [];
  return agent.tools;
}

const describeTarget = (target: ToolTarget) => (target.kind === "global" ? "agent_tools" : `agent "${target.agent}"`);

/** One edit, as `config/edit.rs` applies it (the cases the wizard and the commands send). */
function applyEdit(edit: Edit): void {
  const config = state.config;
  switch (edit.op) {
    case "enable_tool":
    case "disable_tool": {
      const enabled = edit.op === "enable_tool";
      const inherited = config.agent_tools.find((entry) => entry.agent === edit.tool_agent)?.description;
      const entries = entriesOf(edit.target);
      const entry = entries.find((candidate) => candidate.agent === edit.tool_agent);
      if (entry) entry.enabled = enabled;
      else if (edit.target.kind === "agent" && inherited !== undefined)
        entries.push({ agent: edit.tool_agent, description: inherited, enabled });
      else if (edit.target.kind === "agent")
        throw refused(
          `"${edit.tool_agent}" has no global entry to inherit a description from; add it for "${edit.target.agent}" with a description`,
        );
      else throw refused(`agent_tools has no entry for "${edit.tool_agent}"; add it with a description`);
      return;
    }
    case "add_tool": {
      const entries = entriesOf(edit.target);
      if (entries.some((entry) => entry.agent === edit.tool_agent))
        throw refused(
          `${describeTarget(edit.target)} already has an entry for "${edit.tool_agent}"; enable, disable or remove it instead`,
        );
      entries.push({ agent: edit.tool_agent, description: edit.description });
      return;
    }
    case "remove_tool": {
      const entries = entriesOf(edit.target);
      const index = entries.findIndex((entry) => entry.agent === edit.tool_agent);
      if (index < 0) throw refused(`${describeTarget(edit.target)} has no entry for "${edit.tool_agent}"`);
      entries.splice(index, 1);
      return;
    }
    case "set_primary":
    case "set_escalation": {
      if (edit.agent && !config.agents.some((agent) => agent.name === edit.agent))
        throw refused(`no agent named "${edit.agent}" is configured`);
      if (edit.op === "set_primary") config.primary = edit.agent ?? undefined;
      else config.escalation = edit.agent ?? undefined;
      return;
    }
    case "setup": {
      const before = JSON.stringify(config);
      try {
        if (edit.replace_agents) {
          config.agents = [];
          config.agent_tools = [];
        }
        for (const agent of edit.agents) {
          if (config.agents.some((candidate) => candidate.name === agent.name))
            throw refused(`an agent named "${agent.name}" already exists`);
          config.agents.push(JSON.parse(JSON.stringify(agent)) as AgentConfig);
        }
        for (const entry of edit.agent_tools) {
          config.agent_tools = config.agent_tools.filter((candidate) => candidate.agent !== entry.agent);
          config.agent_tools.push(JSON.parse(JSON.stringify(entry)));
        }
        applyEdit({ op: "set_primary", agent: edit.primary });
        applyEdit({ op: "set_escalation", agent: edit.escalation });
      } catch (error) {
        state.config = JSON.parse(before);
        throw error;
      }
      return;
    }
    default:
      throw refused(`the mock does not apply ${edit.op}`);
  }
}

/** Whether an agent of this provider calls tool-agents (`tools/explain.rs`). */
const callsTools = (agent: AgentConfig) => agent.provider === "local" || agent.provider === "demo";

/** An agent's entries explained, as `tools/explain.rs` explains them. */
function explain(name: string): ExplainedEntry[] {
  const caller = state.config.agents.find((agent) => agent.name === name);
  if (!caller)
    throw {
      kind: "not_found",
      message: `no agent named "${name}" is configured`,
      path: null,
      line: null,
      column: null,
    };
  const row = (entry: AgentToolEntry, scope: ExplainedEntry["scope"], overridden: boolean): ExplainedEntry => {
    const target = state.config.agents.find((agent) => agent.name === entry.agent);
    const absent =
      entry.agent === name
        ? "self_reference"
        : !target
          ? "unknown_agent"
          : entry.enabled === false
            ? "disabled"
            : !callsTools(caller)
              ? "caller_cannot_call"
              : null;
    return {
      tool_agent: entry.agent,
      tool_name: toolName(entry.agent),
      scope,
      description: entry.description,
      enabled: entry.enabled !== false,
      approval: entry.approval ?? "ask",
      overridden,
      absent: overridden ? null : absent,
    };
  };
  const own = caller.tools ?? [];
  const rows: ExplainedEntry[] = [];
  for (const global of state.config.agent_tools) {
    const override = own.find((entry) => entry.agent === global.agent);
    if (override) rows.push(row(global, "global", true));
    rows.push(override ? row(override, "override", false) : row(global, "global", false));
  }
  for (const entry of own)
    if (!state.config.agent_tools.some((global) => global.agent === entry.agent)) rows.push(row(entry, "local", false));
  return rows;
}

let version = 1;

/** Answers one command `handlesSetup` claimed. */
export async function setupCommand(command: string, payload: Record<string, unknown>): Promise<unknown> {
  switch (command) {
    case "discover_setup": {
      const listed = (query.get("servers") ?? "").split(",").filter(Boolean);
      const servers = [];
      const looked_at: string[] = [];
      for (const item of listed) {
        const [kind, url] = item.includes("@") ? item.split("@") : ["Server", item];
        looked_at.push(url);
        try {
          servers.push({ kind, url, models: await listModels(url) });
        } catch {
          // Nothing answers there: it is only where the wizard looked.
        }
      }
      const programs = (query.get("cli") ?? "").split(",").filter(Boolean);
      const presets: Record<string, [string, string]> = {
        aider: ["aider", "aider-cli"],
        smolagent: ["smolagents", "smolagents"],
        claude: ["claude-code", "claude-code"],
        codex: ["codex", "codex"],
      };
      const cli_agents = programs.map((program) => ({
        program,
        path: `/usr/local/bin/${program}`,
        agent: { name: presets[program][0], provider: presets[program][1] },
      }));
      return { servers, cli_agents, looked_at };
    }
    case "test_connection": {
      const agent = payload.agent as AgentConfig;
      const started = Date.now();
      try {
        const models = await listModels(agent.url ?? "");
        const detail = `${models.length} model(s) at ${agent.url}`;
        const steps = [{ name: "list models", ok: true, detail, millis: Date.now() - started }];
        return { ok: true, steps, models, tools: [], first_token_ms: null };
      } catch {
        const detail = `Nothing answers at ${agent.url}. Is the server running, and is the port right?`;
        const steps = [{ name: "list models", ok: false, detail, millis: Date.now() - started }];
        return { ok: false, steps, models: [], tools: [], first_token_ms: null };
      }
    }
    case "get_config_state":
    case "read_config_file":
      return structuredClone({ ...state, approvals: effectiveApprovals(state.config) });
    case "list_tools": {
      if (!payload.agent) return state.config.agent_tools.map((entry) => ({ ...resolved(entry, "global") }));
      return explain(payload.agent as string)
        .filter((entry) => !entry.overridden)
        .map((entry) => ({
          agent: entry.tool_agent,
          tool_name: entry.tool_name,
          scope: entry.scope,
          description: entry.description,
          enabled: entry.enabled,
          approval: entry.approval,
        }));
    }
    case "explain_tools":
      return { agent: payload.agent, entries: explain(payload.agent as string), offered: [], max_depth: 2, chains: [] };
    case "edit_config": {
      if (payload.expectedVersion !== state.version)
        throw {
          kind: "config_conflict",
          message: "the file changed on disk",
          path: state.path,
          line: null,
          column: null,
        };
      const refusal = window.__refuseNextEdit;
      if (refusal) {
        window.__refuseNextEdit = undefined;
        throw refused(refusal);
      }
      const edit = payload.edit as Edit;
      applyEdit(edit);
      window.__edits.push(JSON.parse(JSON.stringify(edit)));
      version += 1;
      state.version = `v${version}`;
      state.first_start = false;
      return structuredClone({ ...state, approvals: effectiveApprovals(state.config) });
    }
    default:
      throw new Error(`mock-setup does not answer ${command}`);
  }
}

function resolved(entry: AgentToolEntry, scope: "global") {
  return {
    agent: entry.agent,
    tool_name: toolName(entry.agent),
    scope,
    description: entry.description,
    enabled: entry.enabled !== false,
    approval: entry.approval ?? "ask",
  };
}
