/**
 * The agent form's model: an agent as the fields a person types (every value a
 * string, lists one per line), which fields each provider needs, the checks made
 * before anything is sent (required fields, numbers, an environment variable's
 * NAME rather than a key), and the way back to an `AgentConfig`. Pure, so the form
 * component only binds inputs and the rules are tested on their own.
 */
import { PROVIDERS } from "../../bindings";
import { limitsFromForm, limitsText, type LimitField } from "./tool-form";
import type {
  AgentConfig_Deserialize as AgentConfig,
  Approval,
  Autonomy,
  AgentConfig_Serialize as AgentConfigShown,
  OutputFormat,
  Limits_Deserialize as Limits,
  Provider_Serialize as Provider,
  RequestVia,
  ResultPick,
  UsageCombine,
} from "../../bindings";

/** The providers a person can pick, with what each one is, in the order offered (the core's table). */
export const providers: Array<[Provider, string]> = PROVIDERS.map((row) => [row.provider, row.label]);

/** A field of the form that some providers show and others do not. */
export type Field =
  | "url"
  | "model"
  | "api_key_env"
  | "key_source"
  | "api_key"
  | "timeout_secs"
  | "idle_timeout_secs"
  | "prices"
  | "system_prompt"
  | "command"
  | "args"
  | "cwd"
  | "env"
  | "request_via"
  | "output"
  | "tool"
  | "request_argument"
  | "context_argument"
  | "transport"
  | "experimental_cli_tool_calls"
  | "tasks"
  | "autonomy"
  | "approval";

/** A provider's row of the core's table. */
function rowOf(provider: Provider) {
  return PROVIDERS.find((row) => row.provider === provider);
}

/** What `timeout_secs` bounds: a model step of an HTTP model, the whole run of any other agent. */
export function timeoutHint(provider: Provider): string {
  return isHttpModel(provider) || provider === "demo" ? "Per model step." : "The whole run of one call.";
}

/** Whether a provider is a model asked over HTTP (its key may be in the keyring). */
export function isHttpModel(provider: Provider): boolean {
  return rowOf(provider)?.family === "http_model";
}

/** The fields each provider reads (what its runner uses), in the order shown: the core's table. */
const fieldsByProvider = Object.fromEntries(PROVIDERS.map((row) => [row.provider, [...row.fields]])) as Record<
  Provider,
  Field[]
>;

/** The agent as the form holds it: strings as typed, lists one item per line. */
export type AgentForm = {
  name: string;
  provider: Provider;
  url: string;
  model: string;
  api_key_env: string;
  /**
   * HTTP agents: where the API key is: none (a local server), the system keyring
   * (`api_key_keyring`: the app started from the menu sees no shell variables) or an
   * environment variable (`api_key_env`, for headless use).
   */
  key_source: KeySource;
  /** The keyring entry (`api_key_keyring`); blank: the agent's name. */
  api_key_keyring: string;
  /** A key typed to be stored in the keyring on save: never written to the config. */
  api_key: string;
  timeout_secs: string;
  idle_timeout_secs: string;
  price_input: string;
  price_output: string;
  system_prompt: string;
  command: string;
  /** One argument per line. */
  args: string;
  cwd: string;
  /** `NAME=value`, one per line. */
  env: string;
  request_via: RequestVia | "";
  output_format: OutputFormat | "";
  output_result: ResultPick | "";
  output_marker: string;
  output_pattern: string;
  output_usage_pattern: string;
  output_usage_combine: UsageCombine | "";
  tool: string;
  request_argument: string;
  context_argument: string;
  /** mcp agents: a stdio server (`command`) or streamable HTTP (`url`). */
  transport: "command" | "url";
  experimental_cli_tool_calls: boolean;
  /** An MCP agent's calls made as tasks of the server. */
  tasks: boolean;
  /** What an agent CLI may do unattended; blank: read_only. */
  autonomy: Autonomy | "";
  /** Calls to it where the entry does not say; blank: ask. */
  approval: Approval | "";
  /** Limits of this agent's own calls, over the global ones; blank inherits. */
  limits: Record<LimitField, string>;
};

/** Where an HTTP agent's API key comes from. */
export type KeySource = "none" | "keyring" | "env";

/** A message per form field (`name`, `url`, `price_input`, a limit by its name…) that is wrong. */
export type FormErrors = Partial<Record<Exclude<keyof AgentForm, "limits"> | `limits.${LimitField}`, string>>;

/** Whether `provider` shows `field`; the mcp transport decides between command and url. */
export function shows(
  form: Pick<AgentForm, "provider" | "transport"> & Partial<Pick<AgentForm, "key_source">>,
  field: Field,
): boolean {
  const fields = fieldsByProvider[form.provider] ?? [];
  if (!fields.includes(field)) return false;
  if (isHttpModel(form.provider)) {
    if (field === "api_key_env") return form.key_source === "env";
    if (field === "api_key") return form.key_source === "keyring";
  }
  if (form.provider === "mcp") {
    if (["command", "args", "cwd"].includes(field)) return form.transport === "command";
    if (["url", "api_key_env"].includes(field)) return form.transport === "url";
  }
  return true;
}

/** An empty form for a new agent. */
export function emptyForm(provider: Provider = "local"): AgentForm {
  return {
    name: "",
    provider,
    url: "",
    model: "",
    api_key_env: "",
    key_source: "none",
    api_key_keyring: "",
    api_key: "",
    timeout_secs: "",
    idle_timeout_secs: "",
    price_input: "",
    price_output: "",
    system_prompt: "",
    command: "",
    args: "",
    cwd: "",
    env: "",
    request_via: "",
    output_format: "",
    output_result: "",
    output_marker: "",
    output_pattern: "",
    output_usage_pattern: "",
    output_usage_combine: "",
    tool: "",
    request_argument: "",
    context_argument: "",
    transport: "command",
    experimental_cli_tool_calls: false,
    tasks: false,
    autonomy: "",
    approval: "",
    limits: limitsText(null),
  };
}

const text = (value: string | number | null | undefined) => (value === null || value === undefined ? "" : `${value}`);

/** The form for an agent as the config holds it. */
export function formFromAgent(agent: AgentConfig | AgentConfigShown): AgentForm {
  const output = agent.output ?? {};
  return {
    ...emptyForm(agent.provider === "openai" ? "local" : (agent.provider as Provider)),
    name: agent.name,
    url: text(agent.url),
    model: text(agent.model),
    api_key_env: text(agent.api_key_env),
    key_source: agent.api_key_keyring ? "keyring" : agent.api_key_env ? "env" : "none",
    api_key_keyring: text(agent.api_key_keyring),
    timeout_secs: text(agent.timeout_secs),
    idle_timeout_secs: text(agent.idle_timeout_secs),
    price_input: text(agent.prices?.input_per_million),
    price_output: text(agent.prices?.output_per_million),
    system_prompt: text(agent.system_prompt),
    command: text(agent.command),
    args: (agent.args ?? []).join("\n"),
    cwd: text(agent.cwd),
    env: Object.entries(agent.env ?? {})
      .map(([name, value]) => `${name}=${value}`)
      .join("\n"),
    request_via: agent.request_via ?? "",
    output_format: output.format ?? "",
    output_result: output.result ?? "",
    output_marker: text(output.marker),
    output_pattern: text(output.pattern),
    output_usage_pattern: text(output.usage_pattern),
    output_usage_combine: output.usage_combine ?? "",
    tool: text(agent.tool),
    request_argument: text(agent.request_argument),
    context_argument: text(agent.context_argument),
    transport: agent.provider === "mcp" && agent.url && !agent.command ? "url" : "command",
    experimental_cli_tool_calls: agent.experimental_cli_tool_calls === true,
    tasks: agent.tasks === true,
    autonomy: agent.autonomy ?? "",
    approval: agent.approval ?? "",
    limits: limitsText(agent.limits),
  };
}

/** The keyring entry an HTTP agent's key is stored under: its `api_key_keyring`, else its name. */
export function keyringEntry(form: Pick<AgentForm, "api_key_keyring" | "name">): string {
  return form.api_key_keyring.trim() || form.name.trim();
}

/** Whether `value` names an environment variable the way validation wants it (`OPENAI_API_KEY`). */
export function isVariableName(value: string): boolean {
  return /^[A-Z_][A-Z0-9_]*$/.test(value);
}

/**
 * Whether `value` looks like a secret rather than a name: a known key prefix, or a
 * long run of mixed characters. The form never echoes such a value back.
 */
export function looksLikeKey(value: string): boolean {
  const trimmed = value.trim();
  if (/^(sk-|sk_|pk-|rk-|ghp_|gho_|github_pat_|xox[abp]-|AIza|hf_|glpat-|Bearer\s)/i.test(trimmed)) return true;
  return trimmed.length >= 24 && /[a-z]/.test(trimmed) && /[0-9]/.test(trimmed) && !/[_\s]/.test(trimmed);
}

/** A whole number of at least `minimum`, or an error message; empty text is no value. */
function wholeNumber(value: string, minimum: number): number | null | string {
  const trimmed = value.trim();
  if (trimmed === "") return null;
  if (!/^\d+$/.test(trimmed)) return "a whole number of seconds";
  const number = Number(trimmed);
  return number >= minimum ? number : `at least ${minimum}`;
}

/** A price per million tokens (a number, 0 or more), or an error message. */
function price(value: string): number | null | string {
  const trimmed = value.trim();
  if (trimmed === "") return null;
  const number = Number(trimmed);
  return Number.isFinite(number) && number >= 0 ? number : "a number (0 or more), per million tokens";
}

/** `NAME=value` lines into an object, or the first bad line's message. */
function environment(lines: string): { [name: string]: string } | string {
  const env: { [name: string]: string } = {};
  for (const [index, line] of lines.split("\n").entries()) {
    if (line.trim() === "") continue;
    const equals = line.indexOf("=");
    if (equals <= 0) return `line ${index + 1}: write NAME=value`;
    const name = line.slice(0, equals).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      return `line ${index + 1}: ${JSON.stringify(name)} cannot name a variable`;
    env[name] = line.slice(equals + 1);
  }
  return env;
}

const lines = (value: string) =>
  value
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");

/** The fields the form owns: what a provider does not show is dropped from the agent. */
const formOwned = [
  "url",
  "model",
  "api_key_env",
  "api_key_keyring",
  "timeout_secs",
  "idle_timeout_secs",
  "prices",
  "system_prompt",
  "command",
  "args",
  "cwd",
  "env",
  "request_via",
  "output",
  "tool",
  "request_argument",
  "context_argument",
  "experimental_cli_tool_calls",
  "tasks",
  "autonomy",
  "approval",
] as const;

/**
 * The agent the form describes, or what is wrong with it (every field's message at
 * once). `original` is the agent as saved: what the form does not show (its own
 * tool entries, limits, skill…) is kept from it, so saving a form loses nothing.
 * `others` are the names of the other agents (a name must be unique); `keyStored`
 * says whether the keyring holds a key for the agent's entry already.
 */
export function agentFromForm(
  form: AgentForm,
  original: AgentConfig | AgentConfigShown | null,
  others: string[],
  keyStored: boolean = false,
): { agent: AgentConfig; errors: FormErrors } {
  const errors: FormErrors = {};
  const agent: AgentConfig = { ...(original as AgentConfig | null), name: form.name.trim(), provider: form.provider };
  for (const field of formOwned) delete agent[field];
  const shown = (field: Field) => shows(form, field);
  const required = (field: Exclude<keyof AgentForm, "limits"> & keyof AgentConfig, why: string) => {
    if ((form[field] as string).trim() === "") errors[field] = why;
  };

  if (agent.name === "") errors.name = "Required: the name callers use (agent_<name>)";
  else if (others.includes(agent.name)) errors.name = `An agent named ${JSON.stringify(agent.name)} exists already`;

  const set = (
    field: "url" | "model" | "system_prompt" | "command" | "cwd" | "tool" | "request_argument" | "context_argument",
  ) => {
    if (shown(field) && form[field].trim() !== "")
      agent[field] = field === "system_prompt" ? form[field] : form[field].trim();
  };
  for (const field of [
    "url",
    "model",
    "system_prompt",
    "command",
    "cwd",
    "tool",
    "request_argument",
    "context_argument",
  ] as const)
    set(field);

  // What the provider's row says it needs; an MCP agent needs what its transport uses.
  const needs: readonly string[] = rowOf(form.provider)?.required ?? [];
  if (needs.includes("url") || (form.provider === "mcp" && form.transport === "url"))
    required("url", "Required: the server's address (http://…)");
  if (needs.includes("command") || (form.provider === "mcp" && form.transport === "command"))
    required("command", "Required: the program to run");
  if (needs.includes("model")) required("model", "Required: the model it runs");
  if (shown("url") && agent.url && !/^https?:\/\//.test(agent.url)) errors.url = "Must start with http:// or https://";

  if (shown("api_key_env") && form.api_key_env.trim() !== "") {
    const variable = form.api_key_env.trim();
    // Never repeat the value: it may be the key itself, pasted by mistake.
    if (looksLikeKey(variable))
      errors.api_key_env =
        "This looks like a key. Put the key in an environment variable and write that variable's NAME here (such as OPENAI_API_KEY)";
    else if (!isVariableName(variable))
      errors.api_key_env = "The NAME of an environment variable: capitals, digits and _ (such as OPENAI_API_KEY)";
    else agent.api_key_env = variable;
  }

  if (shown("api_key")) {
    agent.api_key_keyring = keyringEntry(form);
    const key = form.api_key;
    if (key === "" && !keyStored)
      errors.api_key = "Paste the key: it is stored in the system keyring, never in the config file";
    else if (key !== "" && (key.trim() !== key || /[\u0000-\u001f\u007f]/.test(key)))
      errors.api_key = "The key has spaces around it or a line break in it: paste only the key";
    else if (key.length > 4096) errors.api_key = "Longer than any API key (4,096 bytes at most)";
  }

  for (const field of ["timeout_secs", "idle_timeout_secs"] as const) {
    if (!shown(field)) continue;
    const value = wholeNumber(form[field], 1);
    if (typeof value === "string") errors[field] = `Must be ${value}`;
    else if (value !== null) agent[field] = value;
  }

  if (shown("prices")) {
    const input = price(form.price_input);
    const output = price(form.price_output);
    if (typeof input === "string") errors.price_input = `Must be ${input}`;
    if (typeof output === "string") errors.price_output = `Must be ${output}`;
    if (typeof input !== "string" && typeof output !== "string" && (input !== null || output !== null))
      agent.prices = { input_per_million: input, output_per_million: output };
  }

  if (shown("args")) {
    const args = lines(form.args);
    if (args.length > 0) agent.args = args;
  }
  if (shown("env")) {
    const env = environment(form.env);
    if (typeof env === "string") errors.env = env;
    else if (Object.keys(env).length > 0) agent.env = env;
  }
  if (shown("request_via") && form.request_via !== "") agent.request_via = form.request_via;
  if (shown("experimental_cli_tool_calls") && form.experimental_cli_tool_calls)
    agent.experimental_cli_tool_calls = true;
  if (shown("tasks") && form.tasks) agent.tasks = true;
  if (shown("approval") && form.approval !== "") agent.approval = form.approval;
  if (shown("autonomy") && form.autonomy !== "") agent.autonomy = form.autonomy;

  if (shown("output")) {
    const output: NonNullable<AgentConfig["output"]> = {};
    if (form.output_format !== "") output.format = form.output_format;
    if (form.output_result !== "") output.result = form.output_result;
    if (form.output_marker.trim() !== "") output.marker = form.output_marker;
    if (form.output_pattern.trim() !== "") output.pattern = form.output_pattern;
    if (form.output_usage_pattern.trim() !== "") output.usage_pattern = form.output_usage_pattern;
    if (form.output_usage_combine !== "") output.usage_combine = form.output_usage_combine;
    if (form.output_result === "after_marker" && !output.marker)
      errors.output_marker = "Required when the answer follows a marker";
    if (form.output_result === "regex" && !output.pattern)
      errors.output_pattern = "Required when a regex picks the answer";
    if (Object.keys(output).length > 0) agent.output = output;
  }
  delete agent.limits;
  const limitErrors: Partial<Record<LimitField, string>> = {};
  const limits = limitsFromForm(form.limits, original?.limits as Limits | null | undefined, limitErrors);
  for (const [field, message] of Object.entries(limitErrors)) errors[`limits.${field as LimitField}`] = message;
  if (limits) agent.limits = limits;
  return { agent, errors };
}

/** Each agent CLI's own switches for what it may do unattended, per autonomy (the core's table, as the presets pass them). */
function autonomyFlags(provider: Provider, level: Autonomy): string {
  const switches = PROVIDERS.find((row) => row.provider === provider)?.autonomy;
  if (!switches) return "";
  const index = { read_only: 0, edit: 1, full: 2 }[level];
  return switches[index].join(" ") || "its own defaults";
}

/**
 * Whether a provider is a coding agent's CLI that runs on its own login or key
 * unless given a server: a program with a URL field and nothing it requires.
 */
export function onItsOwn(provider: Provider): boolean {
  const row = PROVIDERS.find((candidate) => candidate.provider === provider);
  return row?.family === "program" && (row.fields as readonly string[]).includes("url") && row.required.length === 0;
}

/** The URL field's hint: for a coding agent's CLI, what leaving it empty means (its own login or key). */
export function urlHint(provider: Provider): string {
  return onItsOwn(provider)
    ? "Empty: it runs on its own login or key, its own configuration untouched. A URL runs it on that model server instead (with the model and key here)."
    : "";
}

/** The URL field's placeholder. */
export function urlPlaceholder(provider: Provider): string {
  return onItsOwn(provider) ? "empty: its own login or key" : "http://127.0.0.1:8080";
}

/**
 * What an agent CLI may do at `autonomy` (blank: read_only), in words, with the flag
 * it is given: nobody is there to answer its permission questions during a call.
 */
export function autonomyHint(provider: Provider, autonomy: Autonomy | ""): string {
  const level: Autonomy = autonomy === "" ? "read_only" : autonomy;
  const flag = autonomyFlags(provider, level);
  const aider = {
    read_only: "It may read files and answer; no edit, commit or new repository reaches the disk, no URL is fetched.",
    edit: "It may edit and commit files in its working directory; it fetches no URL.",
    full: "It may edit and commit files and fetch URLs a request names.",
  };
  const what = {
    read_only: "It may read files and answer; edits and commands are refused, never waited for.",
    edit: "It may edit files in its working directory; commands are refused or sandboxed.",
    full: "It may edit files and run commands without asking.",
  }[level];
  if (provider === "aider-cli") return `${aider[level]} It never runs a shell command. (${flag})`;
  const root = provider === "claude-code" && level === "full" ? " Claude Code refuses this when run as root." : "";
  return `${what}${root} (${flag})`;
}
