/** The setup wizard's logic: names, the offers across looks, the steps, the problems and the one `setup` edit. */
import { describe, expect, it } from "vitest";
import type { FoundCliAgent_Serialize as FoundCliAgent, LocalServer } from "../../bindings";
import {
  agentsAfter,
  alreadyTools,
  defaultCliModels,
  emptyAnswers,
  hostedChoice,
  hostedServices,
  keysToStore,
  modelOptions,
  offerCli,
  offerModels,
  openaiBase,
  prefill,
  problems,
  setupEdit,
  slug,
  steps,
  uniqueName,
  type Answers,
  type CurrentConfig,
} from "./wizard";

const servers: LocalServer[] = [
  { kind: "Ollama", url: "http://127.0.0.1:11434/v1", models: ["llama3:latest", "qwen2.5-coder:7b"] },
  { kind: "LM Studio", url: "http://127.0.0.1:1234/v1", models: ["meta-llama/Llama-3.2-3B-Instruct", "llama3"] },
];
const aider: FoundCliAgent = {
  program: "aider",
  path: "/usr/bin/aider",
  agent: { name: "aider", provider: "aider-cli" },
};
const demo: CurrentConfig = {
  primary: "assistant",
  escalation: "expert",
  agents: [{ name: "assistant" }, { name: "expert" }, { name: "ollama-llama3" }],
  agent_tools: [{ agent: "expert" }],
};

describe("names", () => {
  const slugs: Array<[string, string]> = [
    ["llama3:latest", "llama3"],
    ["qwen2.5-coder:7b", "qwen2.5-coder-7b"],
    ["meta-llama/Llama-3.2-3B-Instruct", "llama-3.2-3b-instruct"],
    ["models/TinyLlama.gguf", "tinyllama"],
    ["__x__", "x"],
  ];
  it.each(slugs)("slug(%j) = %j", (model, expected) => expect(slug(model)).toBe(expected));

  it("adds a number to a name that is taken", () => {
    expect(uniqueName("a", new Set())).toBe("a");
    expect(uniqueName("a", new Set(["a", "a-2"]))).toBe("a-3");
  });

  const bases: Array<[string, string]> = [
    ["http://127.0.0.1:9000", "http://127.0.0.1:9000/v1"],
    ["http://h:1/v1/", "http://h:1/v1"],
    ["http://h/v1/chat/completions", "http://h/v1"],
    [
      "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
      "https://generativelanguage.googleapis.com/v1beta/openai",
    ],
  ];
  it.each(bases)("openaiBase(%j) = %j", (url, expected) => expect(openaiBase(url)).toBe(expected));

  it("names each server model after its server and model, unique beside the current agents", () => {
    const offered = offerModels(servers, [], new Set(["ollama-llama3"]));
    expect(offered.map((choice) => choice.name)).toEqual([
      "ollama-llama3-2",
      "ollama-qwen2.5-coder-7b",
      "lmstudio-llama-3.2-3b-instruct",
      "lmstudio-llama3",
    ]);
    expect(offered.every((choice) => !choice.chosen)).toBe(true);
  });

  it("keeps what was chosen and named when it looks again", () => {
    const first = offerModels(servers.slice(0, 1), [], new Set());
    first[1] = { ...first[1], chosen: true, name: "coder" };
    const byHand: LocalServer = { kind: "Server", url: "http://10.0.0.5:9000/v1", models: ["m"] };
    const again = offerModels([...servers, byHand], first, new Set());
    expect(again.map((choice) => [choice.name, choice.chosen])).toEqual([
      ["ollama-llama3", false],
      ["coder", true],
      ["lmstudio-llama-3.2-3b-instruct", false],
      ["lmstudio-llama3", false],
      ["server-m", false],
    ]);
  });

  it("offers a command-line agent under its preset's name, unique", () => {
    const offered = offerCli([aider], [], new Set(["aider"]));
    expect(offered).toEqual([{ key: "/usr/bin/aider", found: aider, chosen: false, name: "aider-2", modelKey: null }]);
  });
});

/** Answers with the Ollama models chosen (as `lead` and `coder`) and aider on the first one. */
function chosen(firstStart: boolean, current: CurrentConfig = demo): Answers {
  const answers = emptyAnswers(firstStart);
  answers.models = offerModels(servers.slice(0, 1), [], new Set());
  answers.models[0] = { ...answers.models[0], chosen: true, name: "lead" };
  answers.models[1] = { ...answers.models[1], chosen: true, name: "coder" };
  answers.cli = offerCli([aider], [], new Set(answers.models.map((choice) => choice.name)));
  answers.cli[0] = { ...answers.cli[0], chosen: true, modelKey: answers.models[0].key };
  return prefill(defaultCliModels(answers), current);
}

const smolagent: FoundCliAgent = {
  program: "smolagent",
  path: "/usr/bin/smolagent",
  agent: { name: "smolagents", provider: "smolagents" },
};
const claude: FoundCliAgent = {
  program: "claude",
  path: "/usr/bin/claude",
  agent: { name: "claude-code", provider: "claude-code" },
};

describe("the answers", () => {
  it("runs a coding agent on its own login or key until a server model is picked; smolagents on the first model", () => {
    const answers = emptyAnswers(true);
    answers.models = offerModels(servers.slice(0, 1), [], new Set());
    answers.models[0].chosen = true;
    answers.cli = offerCli([aider, smolagent, claude], [], new Set()).map((choice) => ({ ...choice, chosen: true }));
    const defaulted = defaultCliModels(answers);
    expect(defaulted.cli.map((choice) => choice.modelKey)).toEqual([
      null,
      "http://127.0.0.1:11434/v1 llama3:latest",
      null,
    ]);
    expect(problems("find", defaulted, demo)).toEqual([]);
    const picked = defaultCliModels({
      ...defaulted,
      cli: defaulted.cli.map((c) => ({ ...c, modelKey: answers.models[0].key })),
    });
    expect(picked.cli.every((choice) => choice.modelKey === answers.models[0].key)).toBe(true);
  });

  it("lets a Claude Code user without a model server through: Claude Code on its own login", () => {
    const answers = emptyAnswers(true);
    answers.cli = offerCli([claude], [], new Set()).map((choice) => ({ ...choice, chosen: true }));
    const ready = prefill(defaultCliModels(answers), demo);
    expect(problems("find", ready, demo)).toEqual([]);
    const edit = setupEdit(ready, demo);
    expect(edit.op === "setup" && edit.agents).toEqual([
      { name: "claude-code", provider: "claude-code", model: null, url: null },
    ]);
  });

  it("prefills the roles with the first two chat models, and the command-line agent as a tool", () => {
    const answers = chosen(true);
    expect([answers.primary, answers.escalation]).toEqual(["lead", "coder"]);
    expect(Object.fromEntries(Object.entries(answers.tools).map(([name, tool]) => [name, tool.chosen]))).toEqual({
      lead: false,
      coder: false,
      aider: true,
    });
    expect(answers.tools.coder.description).toBe(
      "qwen2.5-coder:7b on Ollama. Send it a self-contained request; it returns its answer.",
    );
  });

  it("keeps the roles the user chose, no escalation included", () => {
    const answers = prefill({ ...chosen(true), primary: "coder", escalation: null, rolesChosen: true }, demo);
    expect([answers.primary, answers.escalation]).toEqual(["coder", null]);
  });

  it("keeps the current roles when adding", () => {
    const answers = chosen(false);
    expect(answers.mode).toBe("add");
    expect([answers.primary, answers.escalation]).toEqual(["assistant", "expert"]);
    expect(agentsAfter(answers, demo)).toEqual(["assistant", "expert", "ollama-llama3", "lead", "coder", "aider"]);
    expect(alreadyTools(answers, demo)).toEqual(["expert"]);
  });

  it("goes through the tools step only with more than one agent", () => {
    const one = emptyAnswers(true);
    one.models = offerModels(servers.slice(0, 1), [], new Set());
    one.models[0].chosen = true;
    expect(steps(one, demo)).toEqual(["find", "roles", "review"]);
    expect(steps({ ...one, mode: "add" }, demo)).toEqual(["find", "roles", "tools", "review"]);
    expect(steps(chosen(true), demo)).toEqual(["find", "roles", "tools", "review"]);
  });

  const cases: Array<[string, (answers: Answers) => Answers, Parameters<typeof problems>[0], string[]]> = [
    [
      "nothing chosen",
      (a) => ({ ...a, models: [], cli: [] }),
      "find",
      ["Choose at least one model or agent, or keep the current agents."],
    ],
    [
      "a name twice",
      (a) => ({ ...a, models: a.models.map((m) => ({ ...m, name: "same" })) }),
      "find",
      ['The name "same" is used twice; names must be unique.'],
    ],
    [
      "an empty name",
      (a) => ({ ...a, models: a.models.map((m, i) => (i === 0 ? { ...m, name: "  " } : m)) }),
      "find",
      ["Every chosen agent needs a name."],
    ],
    [
      "smolagents without a model",
      (a) => ({ ...a, cli: [{ ...a.cli[0], found: smolagent, name: "smol", modelKey: null }] }),
      "find",
      ["Choose the model smol runs on (one of the chosen server models)."],
    ],
    ["aider on its own config", (a) => ({ ...a, cli: a.cli.map((c) => ({ ...c, modelKey: null })) }), "find", []],
    ["no primary", (a) => ({ ...a, primary: null }), "roles", ["Choose the primary agent."]],
    [
      "an empty description",
      (a) => ({ ...a, tools: { ...a.tools, aider: { chosen: true, description: " " } } }),
      "tools",
      ["Describe aider for the agents that will call it."],
    ],
    ["nothing wrong", (a) => a, "find", []],
  ];
  it.each(cases)("problems: %s", (_name, change, step, expected) =>
    expect(problems(step, change(chosen(true)), demo)).toEqual(expected),
  );

  it("a name of a current agent is taken when adding, free when replacing", () => {
    const answers = chosen(true);
    answers.models[0].name = "assistant";
    expect(problems("find", answers, demo)).toEqual([]);
    expect(problems("find", { ...answers, mode: "add" }, demo)).toEqual([
      'The name "assistant" is used twice; names must be unique.',
    ]);
  });
});

describe("hosted services", () => {
  const groq = hostedServices.find((service) => service.id === "groq")!;

  it("add a chosen model with its key: the edit names the keyring entry, the key goes to the keyring only", () => {
    const answers = emptyAnswers(true);
    answers.models = [
      hostedChoice(groq, " llama-3.3-70b-versatile ", "gsk_secret", new Set(["groq-llama-3.3-70b-versatile"])),
    ];
    expect(answers.models[0]).toMatchObject({
      name: "groq-llama-3.3-70b-versatile-2",
      model: "llama-3.3-70b-versatile",
    });
    answers.primary = answers.models[0].name;
    const edit = setupEdit(answers, { agents: [], agent_tools: [] });
    expect(edit.op === "setup" && edit.agents).toEqual([
      {
        name: "groq-llama-3.3-70b-versatile-2",
        provider: "local",
        url: "https://api.groq.com/openai/v1",
        model: "llama-3.3-70b-versatile",
        api_key_keyring: "groq-llama-3.3-70b-versatile-2",
      },
    ]);
    expect(JSON.stringify(edit)).not.toContain("gsk_secret");
    expect(keysToStore(answers)).toEqual([{ entry: "groq-llama-3.3-70b-versatile-2", key: "gsk_secret" }]);
    expect(modelOptions(answers)).toEqual([]);
  });

  it("stay across looks, want a key without spaces, and are not stored when unticked", () => {
    const answers = emptyAnswers(true);
    answers.models = [hostedChoice(groq, "m", "", new Set())];
    expect(offerModels([], answers.models, new Set())).toEqual(answers.models);
    expect(problems("find", answers, { agents: [], agent_tools: [] })).toEqual(["Give the API key for groq-m."]);
    answers.models[0].apiKey = "gsk key\n";
    expect(problems("find", answers, { agents: [], agent_tools: [] })).toEqual([
      "The API key for groq-m has spaces or a line break in it.",
    ]);
    answers.models[0].chosen = false;
    expect(keysToStore(answers)).toEqual([]);
  });

  it("each have an OpenAI-compatible endpoint the backend reads", () => {
    expect(hostedServices.map((service) => service.id)).toEqual([
      "openai",
      "openrouter",
      "gemini",
      "anthropic",
      "groq",
      "mistral",
    ]);
    for (const service of hostedServices)
      expect(service.url).toMatch(/^https:\/\/[^/]+(\/.*)?(\/v1|\/chat\/completions)$/);
    expect(openaiBase(hostedServices[2].url)).toBe("https://generativelanguage.googleapis.com/v1beta/openai");
  });
});

describe("the setup edit", () => {
  it("writes the chosen agents, the roles and the tool entries at once, replacing the demo agents", () => {
    const answers = chosen(true);
    answers.tools.lead = { chosen: true, description: "  The lead.  " };
    expect(setupEdit(answers, demo)).toEqual({
      op: "setup",
      agents: [
        { name: "lead", provider: "local", url: "http://127.0.0.1:11434/v1", model: "llama3:latest" },
        { name: "coder", provider: "local", url: "http://127.0.0.1:11434/v1", model: "qwen2.5-coder:7b" },
        { name: "aider", provider: "aider-cli", url: "http://127.0.0.1:11434/v1", model: "llama3:latest" },
      ],
      replace_agents: true,
      primary: "lead",
      escalation: "coder",
      agent_tools: [
        { agent: "lead", description: "The lead.", enabled: true },
        {
          agent: "aider",
          description:
            "Specialist code-editing agent. Send it a natural-language edit request; it applies the changes and returns a summary.",
          enabled: true,
        },
      ],
    });
  });

  it("adds beside the current agents, leaving their tool entries alone", () => {
    const answers = chosen(false);
    answers.tools.expert = { chosen: true, description: "would overwrite" };
    answers.tools.assistant = { chosen: true, description: "The assistant." };
    const edit = setupEdit(answers, demo);
    expect(edit.op === "setup" && [edit.replace_agents, edit.primary, edit.escalation]).toEqual([
      false,
      "assistant",
      "expert",
    ]);
    expect(edit.op === "setup" && edit.agent_tools.map((entry) => entry.agent)).toEqual(["assistant", "aider"]);
  });

  it("writes no tool entries with a single agent", () => {
    const answers = emptyAnswers(true);
    answers.models = offerModels(servers.slice(0, 1), [], new Set());
    answers.models[0].chosen = true;
    const filled = prefill(answers, demo);
    filled.tools["ollama-llama3"].chosen = true;
    expect(setupEdit(filled, demo)).toEqual({
      op: "setup",
      agents: [{ name: "ollama-llama3", provider: "local", url: "http://127.0.0.1:11434/v1", model: "llama3:latest" }],
      replace_agents: true,
      primary: "ollama-llama3",
      escalation: null,
      agent_tools: [],
    });
  });
});
