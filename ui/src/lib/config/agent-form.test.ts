/** The agent form's rules: which fields a provider shows, the checks, and the round trip to an AgentConfig. */
import { describe, expect, it } from "vitest";
import type { AgentConfig_Deserialize as AgentConfig } from "../../bindings";
import {
  agentFromForm,
  autonomyHint,
  urlHint,
  emptyForm,
  formFromAgent,
  looksLikeKey,
  shows,
  type AgentForm,
} from "./agent-form";

const form = (fields: Partial<AgentForm>): AgentForm => ({ ...emptyForm(), ...fields });

describe("fields by provider", () => {
  it.each([
    ["local", "url", true],
    ["local", "command", false],
    ["subprocess", "command", true],
    ["subprocess", "output", true],
    ["subprocess", "url", false],
    ["a2a", "url", true],
    ["a2a", "model", false],
    ["demo", "api_key_env", false],
    ["claude-cli", "experimental_cli_tool_calls", true],
    ["mcp", "tasks", true],
    ["a2a", "tasks", false],
    ["claude-code", "autonomy", true],
    ["claude-code", "experimental_cli_tool_calls", false],
    ["codex", "autonomy", true],
    ["codex", "url", true],
    ["gemini-cli", "api_key_env", true],
    ["qwen-code", "model", true],
    ["aider-cli", "autonomy", true],
    ["smolagents", "autonomy", false],
    ["anthropic", "key_source", true],
    ["anthropic", "command", false],
    ["local", "autonomy", false],
  ] as const)("%s shows %s: %s", (provider, field, expected) => {
    expect(shows({ provider, transport: "command" }, field)).toBe(expected);
  });

  it("an mcp agent shows command or url by its transport", () => {
    expect(shows({ provider: "mcp", transport: "command" }, "command")).toBe(true);
    expect(shows({ provider: "mcp", transport: "command" }, "url")).toBe(false);
    expect(shows({ provider: "mcp", transport: "url" }, "url")).toBe(true);
    expect(shows({ provider: "mcp", transport: "url" }, "args")).toBe(false);
    expect(shows({ provider: "mcp", transport: "url" }, "tool")).toBe(true);
  });
});

describe("runs on", () => {
  it("says a coding agent with no URL runs on its own login or key", () => {
    expect(urlHint("claude-code")).toMatch(/^Empty: it runs on its own login or key/);
    expect(urlHint("smolagents")).toBe("");
    expect(urlHint("codex")).toMatch(/own login or key/);
    expect(urlHint("local")).toBe("");
  });
});

describe("autonomy", () => {
  it.each([
    ["claude-code", "", /read files.*refused.*--permission-mode=dontAsk/],
    ["codex", "edit", /edit files.*--sandbox=workspace-write/],
    ["gemini-cli", "full", /run commands without asking.*--approval-mode=yolo/],
    ["qwen-code", "edit", /--approval-mode=auto-edit/],
    ["claude-code", "full", /refuses this when run as root.*bypassPermissions/],
    ["aider-cli", "", /no edit.*--dry-run/],
    ["aider-cli", "edit", /fetches no URL.*--no-detect-urls/],
  ] as const)("%s at %s is explained with its flag", (provider, autonomy, expected) => {
    expect(autonomyHint(provider, autonomy)).toMatch(expected);
  });
});

describe("checks", () => {
  const errorsOf = (fields: Partial<AgentForm>, others: string[] = []) =>
    agentFromForm(form(fields), null, others).errors;

  it("wants a name, unique", () => {
    expect(errorsOf({ url: "http://x" }).name).toMatch(/Required/);
    expect(errorsOf({ name: "coder", url: "http://x" }, ["coder"]).name).toMatch(/exists already/);
  });

  it("wants what each provider needs", () => {
    expect(errorsOf({ name: "a", provider: "local" }).url).toMatch(/Required/);
    expect(errorsOf({ name: "a", provider: "local", url: "localhost:8080" }).url).toMatch(/http:\/\//);
    expect(errorsOf({ name: "a", provider: "subprocess" }).command).toMatch(/Required/);
    expect(errorsOf({ name: "a", provider: "smolagents" }).model).toMatch(/Required/);
    expect(errorsOf({ name: "a", provider: "mcp", transport: "url" }).url).toMatch(/Required/);
    expect(errorsOf({ name: "a", provider: "demo" })).toEqual({});
  });

  it("takes the NAME of a variable for the key, and refuses a key without repeating it", () => {
    const key = "sk-proj-abcdef1234567890";
    const env = { name: "a", url: "http://x", key_source: "env" } as const;
    const message = errorsOf({ ...env, api_key_env: key }).api_key_env;
    expect(message).toMatch(/looks like a key/);
    expect(message).not.toContain(key);
    expect(errorsOf({ ...env, api_key_env: "openai key" }).api_key_env).toMatch(/NAME/);
    expect(errorsOf({ ...env, api_key_env: "OPENAI_API_KEY" }).api_key_env).toBeUndefined();
  });

  it("keeps an HTTP agent's key in the keyring: the agent names the entry, never holds the key", () => {
    const keyring = { name: "gpt", url: "https://api.example.test/v1", key_source: "keyring" } as const;
    expect(errorsOf(keyring).api_key).toMatch(/Paste the key/);
    const stored = agentFromForm(form(keyring), null, [], true);
    expect(stored.errors).toEqual({});
    expect(stored.agent).toMatchObject({ api_key_keyring: "gpt" });
    const typed = agentFromForm(form({ ...keyring, api_key: "sk-secret-123" }), null, []);
    expect(typed.errors).toEqual({});
    expect(JSON.stringify(typed.agent)).not.toContain("sk-secret-123");
    expect(errorsOf({ ...keyring, api_key: "sk-secret-123\n" }).api_key).toMatch(/line break/);
    // A renamed agent keeps the entry its key is under; none and env send no keyring entry.
    const renamed = agentFromForm(form({ ...keyring, name: "gpt-4", api_key_keyring: "gpt" }), null, [], true);
    expect(renamed.agent.api_key_keyring).toBe("gpt");
    const none = agentFromForm(form({ ...keyring, key_source: "none", api_key_keyring: "gpt" }), null, []);
    expect(none.agent.api_key_keyring).toBeUndefined();
    expect(none.agent.api_key_env).toBeUndefined();
    // Round trip: a saved agent's form says where its key is.
    expect(formFromAgent({ name: "gpt", provider: "local", url: "http://x", api_key_keyring: "k" })).toMatchObject({
      key_source: "keyring",
      api_key_keyring: "k",
      api_key: "",
    });
    expect(formFromAgent({ name: "gpt", provider: "local", url: "http://x", api_key_env: "K" }).key_source).toBe("env");
  });

  it.each([
    ["sk-abc", true],
    ["ghp_0123456789abcdefABCDEF0123", true],
    ["a1b2c3d4e5f6a7b8c9d0e1f2a3b4", true],
    ["OPENAI_API_KEY", false],
    ["MY_VERY_LONG_VARIABLE_NAME_FOR_KEYS", false],
  ])("%s looks like a key: %s", (value, expected) => {
    expect(looksLikeKey(value)).toBe(expected);
  });

  it("wants numbers where numbers go", () => {
    const errors = errorsOf({
      name: "a",
      url: "http://x",
      timeout_secs: "soon",
      idle_timeout_secs: "0",
      price_input: "-1",
    });
    expect(errors.timeout_secs).toMatch(/whole number/);
    expect(errors.idle_timeout_secs).toMatch(/at least 1/);
    expect(errors.price_input).toMatch(/0 or more/);
  });

  it("reads env lines and says which line is wrong", () => {
    expect(errorsOf({ name: "a", provider: "subprocess", command: "x", env: "A=1\nno equals" }).env).toMatch(/line 2/);
    expect(errorsOf({ name: "a", provider: "subprocess", command: "x", env: "1A=1" }).env).toMatch(/cannot name/);
  });

  it("checks the limits of its calls under their own names", () => {
    const limits = { ...emptyForm().limits, max_steps: "0", max_depth: "0", timeout_secs: "x" };
    const errors = errorsOf({ name: "a", provider: "demo", limits });
    expect(errors).toEqual({ "limits.max_steps": "At least 1", "limits.timeout_secs": "A whole number" });
  });

  it("wants the marker or the pattern the result rule names", () => {
    expect(
      errorsOf({ name: "a", provider: "subprocess", command: "x", output_result: "after_marker" }).output_marker,
    ).toBeTruthy();
    expect(
      errorsOf({ name: "a", provider: "subprocess", command: "x", output_result: "regex" }).output_pattern,
    ).toBeTruthy();
  });
});

describe("round trip", () => {
  const check = (agent: AgentConfig) => {
    const { agent: back, errors } = agentFromForm(formFromAgent(agent), agent, []);
    expect(errors).toEqual({});
    expect(back).toEqual(agent);
  };

  it.each<AgentConfig>([
    {
      name: "coder",
      provider: "local",
      url: "http://127.0.0.1:8080",
      model: "qwen",
      api_key_env: "LOCAL_KEY",
      timeout_secs: 30,
      idle_timeout_secs: 20,
      prices: { input_per_million: 0.5, output_per_million: null },
      system_prompt: "Be brief.\nVery.",
    },
    {
      name: "tool",
      provider: "subprocess",
      command: "python3",
      args: ["-m", "tool", "{request}"],
      cwd: "/tmp",
      env: { MODE: "fast", TOKEN: "${APP_TOKEN}" },
      request_via: "stdin",
      output: { result: "after_marker", marker: "ANSWER:", usage_pattern: "in=(?P<input>\\d+)", usage_combine: "sum" },
    },
    { name: "search", provider: "mcp", url: "http://127.0.0.1:9000/mcp", tool: "search", request_argument: "query" },
    { name: "files", provider: "mcp", command: "npx", args: ["server"], tool: "read" },
    { name: "remote", provider: "a2a", url: "https://agents.example/a2a", api_key_env: "A2A_TOKEN" },
    { name: "claude", provider: "claude-cli", experimental_cli_tool_calls: true },
    { name: "reviewer", provider: "claude-code", model: "claude-sonnet-4-5", api_key_env: "ANTHROPIC_API_KEY" },
    { name: "fixer", provider: "codex", url: "http://127.0.0.1:4000/v1", autonomy: "edit", cwd: "/src" },
    { name: "lead", provider: "demo", limits: { max_depth: 0, max_cost_per_turn: 0.25, timeout_secs: 90 } },
  ])("$name ($provider) comes back as it was", check);

  it("keeps what the form does not show: tool entries, limits, skill", () => {
    const agent: AgentConfig = {
      name: "lead",
      provider: "local",
      url: "http://x",
      tools: [{ agent: "coder", description: "codes", enabled: false }],
      limits: { max_depth: 2 },
      skill: false,
      allowed_models: ["a", "b"],
    };
    const edited = { ...formFromAgent(agent), name: "boss", model: "m" };
    expect(agentFromForm(edited, agent, []).agent).toEqual({ ...agent, name: "boss", model: "m" });
  });

  it("drops the fields the new provider does not use", () => {
    const agent: AgentConfig = { name: "x", provider: "local", url: "http://x", model: "m", api_key_env: "K" };
    const { agent: back } = agentFromForm({ ...formFromAgent(agent), provider: "demo" }, agent, []);
    expect(back).toEqual({ name: "x", provider: "demo", model: "m" });
  });
});
