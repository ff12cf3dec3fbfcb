/**
 * The config the settings area shows: loaded at start and reloaded whenever the
 * backend reports that the file changed on disk (or was refused), with each agent's
 * tool-agent list explained (what the forms, the effective lists and the call graph
 * read); the edit waiting on a conflict; and the switch of
 * the built-in MCP endpoint, with its address while it runs; and where traces are
 * exported, with how that goes (a failing exporter is a warning, read every few seconds);
 * and each agent's health (whether it could answer now, asked without a model call).
 */
import {
  commands,
  events,
  type AgentConfig_Deserialize,
  type AgentConfig_Serialize as AgentConfig,
  type AgentHealth,
  type ConnectionReport_Serialize as ConnectionReport,
  type AppError_Serialize as AppError,
  type ConfigState_Serialize as ConfigState,
  type Edit_Deserialize as Edit,
  type McpServerStatus_Serialize as McpServerStatus,
  type ResolvedTool,
  type TelemetryStatus_Serialize as TelemetryStatus,
  type ToolsExplained_Serialize as ToolsExplained,
} from "../../bindings";
import { prefs } from "../shared/prefs";
import { stoppedEndpoint } from "./mcp";
import type { AgentForm } from "./agent-form";

class ConfigStore {
  state = $state<ConfigState | null>(null);
  toolsByAgent = $state<Record<string, ResolvedTool[]>>({});
  /** Each agent's list explained (why an entry is absent, the definitions offered). */
  explained = $state<Record<string, ToolsExplained>>({});
  loadError = $state<string | null>(null);
  /** Loads started; only the latest one's answer is kept when reloads overlap. */
  #loads = 0;

  async load(): Promise<void> {
    const load = ++this.#loads;
    try {
      const state = await commands.getConfigState();
      const tools: Record<string, ResolvedTool[]> = {};
      const explained: Record<string, ToolsExplained> = {};
      for (const agent of state.config.agents) {
        tools[agent.name] = await commands.listTools(agent.name);
        const explanation = await commands.explainTools(agent.name);
        if (explanation.status === "ok") explained[agent.name] = explanation.data;
      }
      if (load !== this.#loads) return;
      this.state = state;
      this.toolsByAgent = tools;
      this.explained = explained;
      this.loadError = null;
      // The agents may have changed: whether each could answer is asked again.
      void agentHealth.check();
    } catch (error) {
      if (load === this.#loads) this.loadError = String(error);
    }
  }

  /** A reload from disk the user did not make here, said for a few seconds: which agents changed. */
  reloaded = $state<{ agents: string[] } | null>(null);
  /** The versions this window's own edits wrote (their reload is no news). */
  #own = new Set<string>();
  #reloadedTimer: ReturnType<typeof setTimeout> | undefined;
  /** The edit on its way, if any: its reload may be heard before its answer. */
  #editing: Promise<unknown> = Promise.resolve();

  /**
   * How many times the file was heard to change (edits, reloads, breaks and
   * fixes): a broken file restored as it was has its old version again, so the
   * version alone cannot tell that anything happened.
   */
  changes = $state(0);

  async watch(): Promise<void> {
    await events.configChanged.listen(async (event) => {
      this.changes += 1;
      const { version, error, changed_agents } = event.payload;
      await this.#editing;
      if (!error && version && !this.#own.has(version)) {
        this.reloaded = { agents: changed_agents };
        clearTimeout(this.#reloadedTimer);
        this.#reloadedTimer = setTimeout(() => (this.reloaded = null), 6000);
      }
      void this.load();
    });
  }

  /**
   * Applies one edit against the version this view shows. A file changed on disk
   * since is a conflict: nothing was written, and `theirs` is the file as it is now
   * (keep mine: `edit` again, now against `theirs.version`; take theirs: `load()`).
   */
  async edit(edit: Edit): Promise<EditResult> {
    const version = this.state?.version;
    if (!version) {
      const theirs = await commands.readConfigFile();
      if (theirs.status === "error") return { kind: "error", error: theirs.error };
      return { kind: "conflict", mine: edit, theirs: theirs.data };
    }
    return this.editAgainst(version, edit);
  }

  /** As `edit`, against a version the caller read (keep mine after a conflict). */
  async editAgainst(version: string, edit: Edit): Promise<EditResult> {
    // Set before the call: its reload may be heard while the call is still on its way.
    let settle = () => {};
    this.#editing = new Promise<void>((resolve) => (settle = resolve));
    let result: Awaited<ReturnType<typeof commands.editConfig>>;
    try {
      result = await commands.editConfig(version, edit);
      if (result.status === "ok" && result.data.version) this.#own.add(result.data.version);
    } finally {
      settle();
    }
    if (result.status === "ok") {
      this.state = result.data;
      await this.load();
      return { kind: "applied", state: result.data };
    }
    if (result.error.kind === "config_conflict") {
      const theirs = await commands.readConfigFile();
      if (theirs.status === "error") return { kind: "error", error: theirs.error };
      return { kind: "conflict", mine: edit, theirs: theirs.data };
    }
    return { kind: "error", error: result.error };
  }
}

/** What an edit came to. */
export type EditResult =
  | { kind: "applied"; state: ConfigState }
  | { kind: "conflict"; mine: Edit; theirs: ConfigState }
  | { kind: "error"; error: AppError };

export const configStore = new ConfigStore();

/**
 * The backend's connection test of `agent` as a form holds it (saved or not): its
 * report, or the command's own failure in words.
 */
export async function testAgent(
  agent: AgentConfig_Deserialize,
): Promise<{ ok: true; report: ConnectionReport } | { ok: false; message: string }> {
  try {
    const result = await commands.testConnection(agent);
    return result.status === "ok" ? { ok: true, report: result.data } : { ok: false, message: result.error.message };
  } catch (error) {
    return { ok: false, message: String(error) };
  }
}

/**
 * Whether each agent could answer now (its server answers, its program is there),
 * checked by the backend without a model call, each time the config is loaded and
 * when asked; only the latest check's answer is kept.
 */
class AgentHealthWatch {
  byAgent = $state<Record<string, AgentHealth>>({});
  checking = $state(false);
  #checks = 0;

  async check(): Promise<void> {
    const check = ++this.#checks;
    this.checking = true;
    try {
      const result = await commands.agentHealth();
      if (check !== this.#checks) return;
      if (result.status === "ok")
        this.byAgent = Object.fromEntries(result.data.map((health) => [health.agent, health]));
    } catch {
      // A check that could not be made says nothing: the last one stays.
    } finally {
      if (check === this.#checks) this.checking = false;
    }
  }
}

export const agentHealth = new AgentHealthWatch();

/**
 * The edit refused because the file changed on disk, while the user decides: keep
 * mine (the same edit against the file as it is now) or take theirs (reload, and
 * `discard` what the form held). One at a time; a newer conflict replaces it.
 */
class PendingConflict {
  current = $state<{ mine: Edit; theirs: ConfigState; discard: () => void; applied: () => void } | null>(null);
  /** The message of a "keep mine" that failed for another reason, shown verbatim. */
  failure = $state<string | null>(null);

  show(mine: Edit, theirs: ConfigState, discard: () => void = () => {}, applied: () => void = () => {}): void {
    this.current = { mine, theirs, discard, applied };
    this.failure = null;
  }

  async keepMine(): Promise<EditResult | null> {
    const pending = this.current;
    if (!pending) return null;
    const result = await configStore.editAgainst(pending.theirs.version ?? "", pending.mine);
    if (result.kind === "conflict") this.show(result.mine, result.theirs, pending.discard, pending.applied);
    else if (result.kind === "error") this.failure = result.error.message;
    else {
      this.current = null;
      pending.applied();
    }
    return result;
  }

  async takeTheirs(): Promise<void> {
    const pending = this.current;
    this.current = null;
    this.failure = null;
    pending?.discard();
    await configStore.load();
  }
}

export const pendingConflict = new PendingConflict();

/** A form's unsaved state, kept when the form closes so that nothing typed is lost. */
export type AgentDraft = {
  form: AgentForm;
  saved: string;
  baseVersion: string | null;
  original: AgentConfig | null;
};

/**
 * The agent forms closed with unsaved changes (another agent picked, the sheet
 * closed), by the name they were opened for ("" for a new agent), for this run of
 * the app: reopening the form brings the draft back, marked.
 */
class AgentDrafts {
  byName = $state<Record<string, AgentDraft>>({});

  keep(name: string, draft: AgentDraft): void {
    this.byName[name] = draft;
  }

  drop(name: string): void {
    delete this.byName[name];
  }
}

export const agentDrafts = new AgentDrafts();

/**
 * A refused edit's words, shown until the file changes (the broken file fixed,
 * even back to what it was; an edit from elsewhere): a refusal is about the file
 * it was refused against, and says nothing of the next one.
 */
export class Refusal {
  #message = $state<string | null>(null);
  #version: string | null | undefined = undefined;
  #changes = 0;

  set(message: string | null) {
    this.#message = message;
    this.#version = configStore.state?.version;
    this.#changes = configStore.changes;
  }

  get shown(): string | null {
    const same = configStore.state?.version === this.#version && configStore.changes === this.#changes;
    return this.#message !== null && same ? this.#message : null;
  }
}

/**
 * Applies `edit` (against `version`, the one a form was opened with, when given):
 * a conflict goes to `pendingConflict` with what to do after either answer; an
 * error comes back as its message, verbatim; null when it was applied (or waits).
 */
export async function applyEdit(
  edit: Edit,
  options: { version?: string | null; discard?: () => void; applied?: () => void } = {},
): Promise<string | null> {
  const result = options.version ? await configStore.editAgainst(options.version, edit) : await configStore.edit(edit);
  if (result.kind === "error") return result.error.message;
  if (result.kind === "conflict") pendingConflict.show(result.mine, result.theirs, options.discard, options.applied);
  else options.applied?.();
  return null;
}

/**
 * The built-in MCP endpoint as settings show it. The switch is what the user asked
 * for (the Rust side remembers it across restarts), which is not always what runs:
 * a port in use leaves it on but stopped, with the reason.
 */
class McpServerSwitch {
  status = $state<McpServerStatus>(stoppedEndpoint);
  switchedOn = $state(false);
  /** The port it was last switched on with (null: never, so 8765). */
  lastPort = $state<number | null>(null);
  switching = $state(false);
  /** A failure of the command itself (the answer could not be saved, say). */
  failure = $state<string | null>(null);
  /** The bearer token, from the one answer that showed it (a first start, a new token). */
  shownToken = $state<string | null>(null);

  private take(status: McpServerStatus): void {
    this.status = status;
    if (status.token) this.shownToken = status.token;
  }

  async load(): Promise<void> {
    try {
      const result = await commands.getMcpServer();
      if (result.status === "error") throw new Error(result.error.message);
      this.status = result.data;
      this.switchedOn = result.data.running || (await prefs.get("mcpServer")) === true;
      this.lastPort = (await prefs.get("mcpPort")) ?? null;
      this.failure = null;
    } catch (error) {
      this.failure = error instanceof Error ? error.message : String(error);
    }
  }

  /** Switches it on (on `port`; null: the last one used, else 8765) or off. */
  async set(on: boolean, port: number | null): Promise<void> {
    this.switching = true;
    this.switchedOn = on;
    try {
      const result = await commands.setMcpServer(on, port);
      if (result.status === "error") throw new Error(result.error.message);
      this.take(result.data);
      if (on && port !== null) this.lastPort = port;
      this.failure = null;
    } catch (error) {
      // What runs now, and whether the switch was remembered, is read back.
      await this.load();
      this.failure = error instanceof Error ? error.message : String(error);
    } finally {
      this.switching = false;
    }
  }

  /** A new token (the old one stops working at once), shown once. */
  async rotate(): Promise<void> {
    this.switching = true;
    try {
      const result = await commands.rotateMcpToken();
      if (result.status === "error") throw new Error(result.error.message);
      this.take(result.data);
      this.failure = null;
    } catch (error) {
      this.failure = error instanceof Error ? error.message : String(error);
    } finally {
      this.switching = false;
    }
  }
}

export const mcpServerSwitch = new McpServerSwitch();

/** Trace export: where spans go and whether the last export failed. */
class TelemetryWatch {
  status = $state<TelemetryStatus | null>(null);

  async refresh(): Promise<void> {
    try {
      this.status = await commands.getTelemetryStatus();
    } catch {
      // The next refresh tries again; the status bar keeps what it showed.
    }
  }
}

export const telemetryWatch = new TelemetryWatch();
