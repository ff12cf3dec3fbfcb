/**
 * The setup wizard's answers and what they come to, as pure functions: the agents
 * offered for what was found (each server model, each command-line agent on PATH)
 * with unique names, the roles and tool-agent entries to choose from, what is still
 * wrong with the answers, and the one `setup` edit that writes them.
 */
import type {
  AgentConfig_Deserialize as AgentConfig,
  AgentToolEntry_Deserialize as AgentToolEntry,
  Edit_Deserialize as Edit,
  FoundCliAgent_Serialize as FoundCliAgent,
  LocalServer,
  Provider_Serialize as Provider,
} from "../../bindings";
import { PROVIDERS } from "../../bindings";
import { onItsOwn } from "../config/agent-form";

/** One model of a server, offered as an agent. */
export interface ModelChoice {
  /** The server's URL and the model: what identifies it across looks. */
  key: string;
  kind: string;
  url: string;
  model: string;
  chosen: boolean;
  name: string;
  /**
   * A hosted service's model: the API key typed for it, stored in the system keyring
   * (entry: the agent's name) when the wizard writes the config, never in the file.
   */
  apiKey?: string;
}

/** A hosted OpenAI-compatible service the wizard offers, with a model to start from. */
export interface HostedService {
  id: string;
  name: string;
  /** Its OpenAI-compatible base, or its full chat-completions endpoint where the base has no `/v1`. */
  url: string;
  /** A model to start from (the user edits it: services rename their models often). */
  model: string;
  /** Where the user gets a key. */
  keys: string;
}

/** The common hosted services with an OpenAI-compatible chat-completions endpoint. */
export const hostedServices: HostedService[] = [
  {
    id: "openai",
    name: "OpenAI",
    url: "https://api.openai.com/v1",
    model: "gpt-5-mini",
    keys: "platform.openai.com/api-keys",
  },
  {
    id: "openrouter",
    name: "OpenRouter",
    url: "https://openrouter.ai/api/v1",
    model: "openai/gpt-5-mini",
    keys: "openrouter.ai/keys",
  },
  {
    id: "gemini",
    name: "Google Gemini (OpenAI-compatible)",
    url: "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
    model: "gemini-2.5-flash",
    keys: "aistudio.google.com/apikey",
  },
  {
    id: "anthropic",
    name: "Anthropic (OpenAI-compatible)",
    url: "https://api.anthropic.com/v1",
    model: "claude-sonnet-4-5",
    keys: "console.anthropic.com/settings/keys",
  },
  {
    id: "groq",
    name: "Groq",
    url: "https://api.groq.com/openai/v1",
    model: "llama-3.3-70b-versatile",
    keys: "console.groq.com/keys",
  },
  {
    id: "mistral",
    name: "Mistral",
    url: "https://api.mistral.ai/v1",
    model: "mistral-small-latest",
    keys: "console.mistral.ai/api-keys",
  },
];

/**
 * A hosted service's model as a chosen model, named after the service and the model,
 * unique beside `taken`; `apiKey` goes to the keyring when the config is written.
 */
export function hostedChoice(service: HostedService, model: string, apiKey: string, taken: Set<string>): ModelChoice {
  const trimmed = model.trim();
  const name = uniqueName(`${service.id}-${slug(trimmed) || "model"}`, taken);
  return {
    key: modelKey(service.url, trimmed),
    kind: service.name,
    url: service.url,
    model: trimmed,
    chosen: true,
    name,
    apiKey,
  };
}

/** The names taken by the choices and the current agents (when adding). */
export function takenNames(answers: Answers, current: CurrentConfig): Set<string> {
  const names = new Set(answers.models.map((choice) => choice.name));
  for (const choice of answers.cli) names.add(choice.name);
  for (const agent of current.agents) names.add(agent.name);
  return names;
}

/** The keys to store in the keyring as the config is written: one per chosen hosted model. */
export function keysToStore(answers: Answers): Array<{ entry: string; key: string }> {
  return answers.models
    .filter((choice) => choice.chosen && choice.apiKey !== undefined)
    .map((choice) => ({ entry: choice.name.trim(), key: choice.apiKey ?? "" }));
}

/** A command-line agent on PATH, offered as a tool-agent: on its own login or key, or on a chosen server model. */
export interface CliChoice {
  key: string;
  found: FoundCliAgent;
  chosen: boolean;
  name: string;
  /** The `key` of the chosen server model it runs on; null: its own login or key (where it has one). */
  modelKey: string | null;
}

/**
 * Whether the program can run on its own login or key, with nothing of ours in
 * between and its own configuration untouched (the provider table says: a program
 * with a URL field that needs nothing); smolagents needs a model named for it.
 */
export function runsOnItsOwn(agent: FoundCliAgent): boolean {
  return onItsOwn(agent.agent.provider as Provider);
}

/** The programs setup looks for on PATH, in words (from the provider table). */
export const lookedFor = inWords(PROVIDERS.flatMap((row) => (row.program ? [row.program.command] : [])));

/** `a, b or c`. */
function inWords(names: string[]): string {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

/** Whether an agent becomes a tool-agent for all agents, and its description. */
export interface ToolChoice {
  chosen: boolean;
  description: string;
}

/** Everything the user chose. */
export interface Answers {
  models: ModelChoice[];
  cli: CliChoice[];
  /** `replace`: the agents and tool entries written instead of the current ones; `add`: beside them. */
  mode: "replace" | "add";
  primary: string | null;
  escalation: string | null;
  /** Whether the user has been through the roles step (their choices then stand, "no escalation" included). */
  rolesChosen: boolean;
  /** By agent name. */
  tools: Record<string, ToolChoice>;
}

/** The config as it is, as far as the wizard reads it. */
export interface CurrentConfig {
  primary?: string | null;
  escalation?: string | null;
  agents: Array<{ name: string }>;
  agent_tools: Array<{ agent: string }>;
}

/** The wizard's steps, in order; `tools` is left out when there is only one agent to choose from. */
export type Step = "find" | "roles" | "tools" | "review";

/** A model's id as a name: lowercased, its organisation and a `:latest` tag dropped, other characters `-`. */
export function slug(text: string): string {
  const bare = text.split("/").pop() ?? text;
  return bare
    .replace(/:latest$/i, "")
    .toLowerCase()
    .replace(/\.gguf$/, "")
    .replace(/[^a-z0-9.]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "");
}

/** The server kind as a name prefix ("LM Studio" → "lmstudio", "llama.cpp" → "llamacpp"). */
function kindSlug(kind: string): string {
  return kind.toLowerCase().replace(/[^a-z0-9]/g, "") || "server";
}

/** `base`, or `base-2`, `base-3`… whichever is not taken. */
export function uniqueName(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let index = 2; ; index++) if (!taken.has(`${base}-${index}`)) return `${base}-${index}`;
}

/** The OpenAI-compatible base of a URL as a user writes it (`…/v1` added unless there), as the backend reads it. */
export function openaiBase(url: string): string {
  const base = url.trim().replace(/\/+$/, "");
  // A full endpoint says where the base is (Gemini's is `…/v1beta/openai`).
  if (base.endsWith("/chat/completions")) return base.slice(0, -"/chat/completions".length);
  return base.endsWith("/v1") ? base : `${base}/v1`;
}

const modelKey = (url: string, model: string) => `${url} ${model}`;

/**
 * The choices for the servers found: choices made before (the same server and
 * model, on a second look) are kept, new ones get a unique name, unchosen. `taken`
 * holds the names in use besides these (the current agents, when adding).
 */
export function offerModels(servers: LocalServer[], previous: ModelChoice[], taken: Set<string>): ModelChoice[] {
  const names = new Set(taken);
  const kept = new Map(previous.map((choice) => [choice.key, choice]));
  for (const choice of previous) names.add(choice.name);
  const offered: ModelChoice[] = [];
  for (const server of servers) {
    for (const model of server.models) {
      const key = modelKey(server.url, model);
      if (offered.some((choice) => choice.key === key)) continue;
      const before = kept.get(key);
      if (before) {
        offered.push(before);
        continue;
      }
      const name = uniqueName(`${kindSlug(server.kind)}-${slug(model) || "model"}`, names);
      names.add(name);
      offered.push({ key, kind: server.kind, url: server.url, model, chosen: false, name });
    }
  }
  // A hosted service's model is not found by looking: it stays as the user added it.
  for (const choice of previous)
    if (choice.apiKey !== undefined && !offered.some((other) => other.key === choice.key)) offered.push(choice);
  return offered;
}

/** The choices for the command-line agents found, kept across looks like the models'. */
export function offerCli(found: FoundCliAgent[], previous: CliChoice[], taken: Set<string>): CliChoice[] {
  const names = new Set(taken);
  for (const choice of previous) names.add(choice.name);
  return found.map((agent) => {
    const before = previous.find((choice) => choice.key === agent.path);
    if (before) return { ...before, found: agent };
    const name = uniqueName(agent.agent.name, names);
    names.add(name);
    return { key: agent.path, found: agent, chosen: false, name, modelKey: null };
  });
}

/** The agents the answers add. */
export function chosenAgents(answers: Answers): AgentConfig[] {
  const agents: AgentConfig[] = answers.models
    .filter((choice) => choice.chosen)
    .map((choice) => ({
      name: choice.name.trim(),
      provider: "local",
      url: choice.url,
      model: choice.model,
      ...(choice.apiKey !== undefined ? { api_key_keyring: choice.name.trim() } : {}),
    }));
  for (const choice of answers.cli.filter((candidate) => candidate.chosen)) {
    const runsOn = answers.models.find((model) => model.key === choice.modelKey);
    agents.push({
      ...(choice.found.agent as AgentConfig),
      name: choice.name.trim(),
      model: runsOn?.model ?? null,
      url: runsOn?.url ?? null,
    });
  }
  return agents;
}

/** The agents there will be: the current ones when adding, then the chosen ones. */
export function agentsAfter(answers: Answers, current: CurrentConfig): string[] {
  const kept = answers.mode === "add" ? current.agents.map((agent) => agent.name) : [];
  return [...kept, ...chosenAgents(answers).map((agent) => agent.name)];
}

/** The steps the answers go through (no agents-as-tools step with a single agent). */
export function steps(answers: Answers, current: CurrentConfig): Step[] {
  return agentsAfter(answers, current).length > 1 ? ["find", "roles", "tools", "review"] : ["find", "roles", "review"];
}

/** A first description of an agent as a tool for the others (required, so never empty). */
export function defaultDescription(agent: AgentConfig, kind: string | null): string {
  // A preset's program says what it is in the provider table.
  const program = PROVIDERS.find((row) => row.provider === agent.provider)?.program;
  if (program) return program.tool_description;
  const where = kind ? ` on ${kind}` : "";
  return `${agent.model ?? agent.name}${where}. Send it a self-contained request; it returns its answer.`;
}

/**
 * The roles and tool choices as they start when the user reaches those steps:
 * what they chose before stays; the primary is the first chat model (or, when
 * adding, the current one), the escalation the second; command-line agents are
 * offered as tools, ticked.
 */
export function prefill(answers: Answers, current: CurrentConfig): Answers {
  const names = agentsAfter(answers, current);
  const added = chosenAgents(answers);
  const chat = added.filter((agent) => agent.provider === "local").map((agent) => agent.name);
  const adding = answers.mode === "add";
  const known = (name: string | null | undefined) => (name && names.includes(name) ? name : null);
  let primary = answers.rolesChosen ? known(answers.primary) : null;
  primary ??= (adding ? known(current.primary) : null) ?? chat[0] ?? names[0] ?? null;
  let escalation = known(answers.escalation);
  if (!answers.rolesChosen)
    escalation = (adding ? known(current.escalation) : null) ?? chat.find((name) => name !== primary) ?? null;
  const tools: Record<string, ToolChoice> = {};
  for (const name of names) {
    const agent = added.find((candidate) => candidate.name === name);
    const before = answers.tools[name];
    if (before) tools[name] = before;
    else if (agent) {
      const kind = answers.models.find((choice) => choice.chosen && choice.name.trim() === name)?.kind ?? null;
      tools[name] = { chosen: agent.provider !== "local", description: defaultDescription(agent, kind) };
    } else tools[name] = { chosen: false, description: `The ${name} agent. Send it a self-contained request.` };
  }
  return { ...answers, primary, escalation, tools };
}

/** Agents that are a tool for all agents already (adding only): the wizard leaves their entries as they are. */
export function alreadyTools(answers: Answers, current: CurrentConfig): string[] {
  if (answers.mode === "replace") return [];
  const names = agentsAfter(answers, current);
  return current.agent_tools.map((entry) => entry.agent).filter((name) => names.includes(name));
}

/** What stops the user from leaving `step`, in words (empty: nothing). */
export function problems(step: Step, answers: Answers, current: CurrentConfig): string[] {
  const found: string[] = [];
  if (step === "find") {
    const added = chosenAgents(answers);
    if (added.length === 0) found.push("Choose at least one model or agent, or keep the current agents.");
    const seen = new Set(answers.mode === "add" ? current.agents.map((agent) => agent.name) : []);
    for (const agent of added) {
      if (!agent.name) found.push("Every chosen agent needs a name.");
      else if (seen.has(agent.name)) found.push(`The name "${agent.name}" is used twice; names must be unique.`);
      seen.add(agent.name);
    }
    for (const choice of answers.models.filter((candidate) => candidate.chosen && candidate.apiKey !== undefined)) {
      const key = choice.apiKey ?? "";
      if (key === "") found.push(`Give the API key for ${choice.name.trim() || choice.model}.`);
      else if (key.trim() !== key || /[\u0000-\u001f\u007f]/.test(key))
        found.push(`The API key for ${choice.name.trim() || choice.model} has spaces or a line break in it.`);
    }
    for (const choice of answers.cli.filter((candidate) => candidate.chosen)) {
      const runsOn = answers.models.find((model) => model.key === choice.modelKey);
      if (choice.modelKey === null && runsOnItsOwn(choice.found)) continue;
      if (!runsOn?.chosen)
        found.push(
          `Choose the model ${choice.name.trim() || choice.found.program} runs on (one of the chosen server models).`,
        );
    }
  }
  if (step === "roles") {
    const names = agentsAfter(answers, current);
    if (!answers.primary || !names.includes(answers.primary)) found.push("Choose the primary agent.");
    if (answers.escalation && !names.includes(answers.escalation))
      found.push("Choose an escalation agent that exists, or none.");
  }
  if (step === "tools") {
    for (const [name, choice] of Object.entries(toolEntries(answers, current)))
      if (!choice.description.trim()) found.push(`Describe ${name} for the agents that will call it.`);
  }
  return found;
}

/** The tool choices that will be written, by agent name (chosen, of an agent there will be, not a tool already). */
function toolEntries(answers: Answers, current: CurrentConfig): Record<string, ToolChoice> {
  const names = agentsAfter(answers, current);
  const skip = new Set(alreadyTools(answers, current));
  const single = !steps(answers, current).includes("tools");
  const entries: Record<string, ToolChoice> = {};
  if (single) return entries;
  for (const name of names) {
    const choice = answers.tools[name];
    if (choice?.chosen && !skip.has(name)) entries[name] = choice;
  }
  return entries;
}

/** The one edit that writes the answers. */
export function setupEdit(answers: Answers, current: CurrentConfig): Edit {
  const agent_tools: AgentToolEntry[] = Object.entries(toolEntries(answers, current)).map(([agent, choice]) => ({
    agent,
    description: choice.description.trim(),
    enabled: true,
  }));
  return {
    op: "setup",
    agents: chosenAgents(answers),
    replace_agents: answers.mode === "replace",
    primary: answers.primary,
    escalation: answers.escalation,
    agent_tools,
  };
}

/** The answers before anything was found: replacing the demo agents on a first start, else adding to the current ones. */
export function emptyAnswers(firstStart: boolean): Answers {
  const mode = firstStart ? "replace" : "add";
  return { models: [], cli: [], mode, primary: null, escalation: null, rolesChosen: false, tools: {} };
}

/** The chosen server models a command-line agent may run on, as `[key, label]`. */
export function modelOptions(answers: Answers): Array<[string, string]> {
  // Not a hosted model: its key is in the keyring, which a command-line agent never reads.
  return answers.models
    .filter((choice) => choice.chosen && choice.apiKey === undefined)
    .map((choice) => [choice.key, `${choice.model} (${choice.kind})`]);
}

/**
 * A chosen CLI agent's model, kept while it is still offered: a program that runs
 * on its own login or key stays on it (the default); one that needs a model (and
 * one whose server model was unticked) gets the first chosen server model.
 */
export function defaultCliModels(answers: Answers): Answers {
  const options = modelOptions(answers);
  const cli = answers.cli.map((choice) => {
    if (choice.modelKey && options.some(([key]) => key === choice.modelKey)) return choice;
    if (runsOnItsOwn(choice.found)) return { ...choice, modelKey: null };
    return { ...choice, modelKey: options[0]?.[0] ?? null };
  });
  return { ...answers, cli };
}
