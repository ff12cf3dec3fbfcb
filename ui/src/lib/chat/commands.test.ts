/** The slash commands' parsing, description follow-up, completion and answers, as tables of cases. */
import { describe, expect, it } from "vitest";
import type { ExplainedEntry_Serialize as ExplainedEntry } from "../../bindings";
import {
  USAGE,
  accept,
  complete,
  confirmation,
  describePending,
  globalRows,
  HELP,
  isCommand,
  messageText,
  parse,
  toolRows,
  type CommandConfig,
  type Parsed,
} from "./commands";

const config: CommandConfig = {
  primary: "lead",
  escalation: "coder2",
  agents: [
    { name: "lead", tools: [{ agent: "coder", description: "code, for lead", enabled: false }] },
    { name: "coder" },
    { name: "coder2" },
    { name: "summariser" },
  ],
  agent_tools: [{ agent: "coder", description: "Writes code." }],
};

const global = { kind: "global" } as const;
const forLead = { kind: "agent", agent: "lead" } as const;

describe("parse", () => {
  const cases: Array<[string, Parsed]> = [
    ["/agent tool list", { kind: "list", agent: "lead" }],
    ["/agent tool list coder", { kind: "list", agent: "coder" }],
    ["/agent tool list global", { kind: "list", agent: null }],
    ["  /agent   tool  list  ", { kind: "list", agent: "lead" }],
    ["/agent tool enable coder", { kind: "edit", edit: { op: "enable_tool", target: global, tool_agent: "coder" } }],
    [
      "/agent tool disable coder for lead",
      { kind: "edit", edit: { op: "disable_tool", target: forLead, tool_agent: "coder" } },
    ],
    [
      "/agent tool disable coder global",
      { kind: "edit", edit: { op: "disable_tool", target: global, tool_agent: "coder" } },
    ],
    [
      "/agent tool enable coder for global",
      { kind: "edit", edit: { op: "enable_tool", target: global, tool_agent: "coder" } },
    ],
    // A removed agent's entry can still be disabled or removed.
    ["/agent tool remove ghost", { kind: "edit", edit: { op: "remove_tool", target: global, tool_agent: "ghost" } }],
    [
      '/agent tool add summariser for lead "Summarises a text."',
      {
        kind: "edit",
        edit: { op: "add_tool", target: forLead, tool_agent: "summariser", description: "Summarises a text." },
      },
    ],
    [
      "/agent tool add summariser -- Summarises a text, briefly.",
      {
        kind: "edit",
        edit: { op: "add_tool", target: global, tool_agent: "summariser", description: "Summarises a text, briefly." },
      },
    ],
    [
      "/agent tool add summariser global -- Short.",
      { kind: "edit", edit: { op: "add_tool", target: global, tool_agent: "summariser", description: "Short." } },
    ],
    [
      "/agent tool add summariser for lead",
      {
        kind: "describe",
        pending: { target: forLead, tool_agent: "summariser" },
        prompt:
          "Describe summariser as a tool for lead: the next message you send is its description (/cancel to drop it).",
      },
    ],
    [
      "/agent tool add summariser",
      {
        kind: "describe",
        pending: { target: global, tool_agent: "summariser" },
        prompt:
          "Describe summariser as a tool for all agents: the next message you send is its description (/cancel to drop it).",
      },
    ],
    [
      "/agent tool enable summariser global",
      {
        kind: "describe",
        pending: { target: global, tool_agent: "summariser" },
        prompt:
          "summariser is not a tool for all agents yet. Describe it: the next message you send is its description (/cancel to drop it).",
      },
    ],
    ["/agent add", { kind: "open-config" }],
    ["/agent switch coder", { kind: "edit", edit: { op: "set_primary", agent: "coder" } }],
    ["/agent escalation coder", { kind: "edit", edit: { op: "set_escalation", agent: "coder" } }],
    ["/agent escalation none", { kind: "edit", edit: { op: "set_escalation", agent: null } }],
    // Errors: what is wrong, and the usage line.
    ["/agent", { kind: "error", message: `/agent needs a subcommand. ${USAGE.agent}` }],
    ["/agent frob", { kind: "error", message: `Unknown subcommand "frob". ${USAGE.agent}` }],
    ["/agent tool", { kind: "error", message: `/agent tool needs a subcommand. ${USAGE.tool}` }],
    ["/agent tool frob coder", { kind: "error", message: `Unknown tool subcommand "frob". ${USAGE.tool}` }],
    ["/agent tool enable", { kind: "error", message: `Name the tool-agent. ${USAGE.enable}` }],
    ["/agent tool disable for lead", { kind: "error", message: `Name the tool-agent. ${USAGE.disable}` }],
    [
      "/agent tool enable ghost",
      {
        kind: "error",
        message: `No agent named "ghost"; the agents are lead, coder, coder2, summariser. ${USAGE.enable}`,
      },
    ],
    [
      "/agent tool disable coder for nobody",
      {
        kind: "error",
        message: `No agent named "nobody"; the agents are lead, coder, coder2, summariser. ${USAGE.disable}`,
      },
    ],
    [
      "/agent tool disable coder to lead",
      { kind: "error", message: `Expected "for <agent>" or "global", not "to". ${USAGE.disable}` },
    ],
    [
      "/agent tool remove coder for",
      { kind: "error", message: `"for" needs an agent name or "global". ${USAGE.remove}` },
    ],
    ["/agent tool remove coder global now", { kind: "error", message: `Unexpected "now". ${USAGE.remove}` }],
    [
      "/agent tool add summariser for lead Summarises things",
      { kind: "error", message: `Quote the description, or put it after "--". ${USAGE.add}` },
    ],
    [
      '/agent tool add summariser "Summarises',
      { kind: "error", message: `The description's quote is not closed. ${USAGE.add}` },
    ],
    [
      '/agent tool add lead for lead "Itself"',
      { kind: "error", message: `lead cannot be a tool of itself (the cycle guard). ${USAGE.add}` },
    ],
    ["/agent tool list lead coder", { kind: "error", message: `Too many arguments. ${USAGE.list}` }],
    ["/agent switch", { kind: "error", message: `/agent switch needs one agent name. ${USAGE.switch}` }],
    [
      "/agent switch coder2",
      {
        kind: "error",
        message:
          "coder2 is the escalation agent, and the primary must be another one. To make coder2 the primary, change the escalation first: /agent escalation <another agent>, or /agent escalation none; then /agent switch coder2.",
      },
    ],
    [
      "/agent escalation lead",
      {
        kind: "error",
        message: `lead is the primary, and the escalation agent must be another one (a turn escalates away from the primary). ${USAGE.escalation}`,
      },
    ],
    [
      "/agent switch ghost",
      {
        kind: "error",
        message: `No agent named "ghost"; the agents are lead, coder, coder2, summariser. ${USAGE.switch}`,
      },
    ],
    ["/agent add coder", { kind: "error", message: `/agent add takes no arguments. ${USAGE.addAgent}` }],
  ];
  it.each(cases)("%s", (text, expected) => expect(parse(text, config)).toEqual(expected));

  it("asks for a name or global when there is no primary", () => {
    expect(parse("/agent tool list", { ...config, primary: null })).toEqual({
      kind: "error",
      message: `No primary agent is configured: name an agent or "global". ${USAGE.list}`,
    });
  });
});

describe("help and unknown commands", () => {
  it("/help lists every command and @agent", () => {
    const parsed = parse("/help", config);
    expect(parsed).toEqual({ kind: "help", text: HELP });
    for (const word of ["/agent tool list", "/agent switch", "/agent add", "@agent", "//"])
      expect(HELP).toContain(word);
  });
  it("an unknown command is refused in words, naming it", () => {
    const parsed = parse("/halp me", config);
    expect(parsed.kind).toBe("error");
    expect(parsed.kind === "error" && parsed.message).toMatch(/^Unknown command "\/halp"; nothing was sent/);
  });
  it("// sends a message that starts with /", () => {
    expect(messageText("//help is a word")).toBe("/help is a word");
    expect(messageText("plain")).toBe("plain");
  });
});

describe("isCommand", () => {
  const cases: Array<[string, boolean]> = [
    ["/agent tool list", true],
    ["/agent", true],
    [" /agent switch x", true],
    // An unknown command is refused here, not sent to the model as a billed turn.
    ["/agents are nice", true],
    ["/help", true],
    ["/usr/bin is a folder", false],
    ["//help is a word", false],
    ["hello /agent", false],
  ];
  it.each(cases)("%j → %s", (text, expected) => expect(isCommand(text)).toBe(expected));
});

describe("the description follow-up", () => {
  const pending = { target: forLead, tool_agent: "summariser" };
  const cases: Array<[string, Parsed]> = [
    [
      "  Summarises long texts.  ",
      {
        kind: "edit",
        edit: { op: "add_tool", target: forLead, tool_agent: "summariser", description: "Summarises long texts." },
      },
    ],
    ["/cancel", { kind: "cancelled", message: "Not added: summariser." }],
    ["   ", { kind: "error", message: `The description of summariser is empty. ${USAGE.add}` }],
    ["/agent tool list global", { kind: "list", agent: null }],
  ];
  it.each(cases)("%j", (text, expected) => expect(describePending(pending, text, config)).toEqual(expected));
});

describe("complete", () => {
  /** `|` marks the cursor; the expected options, or null for no popup. */
  const cases: Array<[string, string[] | null]> = [
    ["/|", ["/agent", "/help"]],
    ["/h|", ["/help"]],
    ["/ag|", ["/agent"]],
    ["/agent|", null],
    ["/agent |", ["tool", "add", "switch", "escalation"]],
    ["/agent t|", ["tool"]],
    ["/agent tool |", ["list", "enable", "disable", "add", "remove"]],
    ["/agent tool di|", ["disable"]],
    ["/agent tool list |", ["lead", "coder", "coder2", "summariser", "global"]],
    ["/agent tool list g|", ["global"]],
    ["/agent tool list lead |", null],
    ["/agent tool enable |", ["lead", "coder", "coder2", "summariser"]],
    ["/agent tool enable CO|", ["coder", "coder2"]],
    ["/agent tool enable coder|", null],
    ["/agent tool enable coder |", ["for", "global"]],
    ["/agent tool enable coder f|", ["for"]],
    ["/agent tool enable coder for |", ["lead", "coder2", "summariser", "global"]],
    ["/agent tool enable coder for le|", ["lead"]],
    ["/agent tool enable coder for lead |", null],
    ["/agent tool add coder -- |", null],
    ['/agent tool add coder "Wri|', null],
    ["/agent switch |", ["lead", "coder", "coder2", "summariser"]],
    ["/agent add |", null],
    ["/agent frob |", null],
    ["hello |", null],
    ["@le|", null],
    // The word under the cursor counts up to the cursor.
    ["/agent tool en| coder", ["enable"]],
  ];
  it.each(cases)("%s", (marked, expected) => {
    const cursor = marked.indexOf("|");
    const text = marked.replace("|", "");
    expect(complete(text, cursor, config)?.options ?? null).toEqual(expected);
  });

  const accepted: Array<[string, string, string]> = [
    ["/ag|", "/agent", "/agent |"],
    ["/agent tool di|", "disable", "/agent tool disable |"],
    ["/agent tool en| coder", "enable", "/agent tool enable |coder"],
    ["/agent tool enable coder for le|", "lead", "/agent tool enable coder for lead |"],
  ];
  it.each(accepted)("accepting in %s", (marked, option, expected) => {
    const cursor = marked.indexOf("|");
    const text = marked.replace("|", "");
    const completion = complete(text, cursor, config);
    expect(completion).not.toBeNull();
    const result = accept(text, completion!, option);
    expect(result.text.slice(0, result.cursor) + "|" + result.text.slice(result.cursor)).toBe(expected);
  });
});

describe("answers", () => {
  const after: CommandConfig = config;
  const cases: Array<[Parameters<typeof confirmation>[0], string]> = [
    [{ op: "disable_tool", target: forLead, tool_agent: "coder" }, "Disabled agent_coder for lead (override)."],
    [{ op: "enable_tool", target: global, tool_agent: "coder" }, "Enabled agent_coder for all agents (global)."],
    [
      { op: "add_tool", target: forLead, tool_agent: "summariser", description: "x" },
      "Added agent_summariser for lead (local).",
    ],
    [{ op: "remove_tool", target: global, tool_agent: "coder" }, "Removed agent_coder from the global list."],
    [{ op: "remove_tool", target: forLead, tool_agent: "coder" }, "Removed agent_coder from lead's own list."],
    [{ op: "set_primary", agent: "coder" }, "coder is now the primary agent."],
  ];
  it.each(cases)("%j", (edit, expected) => expect(confirmation(edit, after)).toBe(expected));

  it("lists an agent's entries with their scope and why each absent one is absent", () => {
    const entry = (over: Partial<ExplainedEntry>): ExplainedEntry => ({
      tool_agent: "coder",
      tool_name: "agent_coder",
      scope: "global",
      description: "Writes code.",
      enabled: true,
      approval: "ask",
      overridden: false,
      absent: null,
      ...over,
    });
    expect(
      toolRows([
        entry({ overridden: true }),
        entry({ scope: "override", enabled: false, absent: "disabled", description: "x".repeat(80) }),
        entry({ tool_agent: "lead", tool_name: "agent_lead", absent: "self_reference" }),
      ]),
    ).toEqual([
      {
        name: "agent_coder",
        scope: "global (overridden)",
        description: "Writes code.",
        enabled: true,
        absent: "overridden",
      },
      { name: "agent_coder", scope: "override", description: `${"x".repeat(59)}…`, enabled: false, absent: "disabled" },
      {
        name: "agent_lead",
        scope: "global",
        description: "Writes code.",
        enabled: true,
        absent: "the agent itself (cycle guard)",
      },
    ]);
  });

  it("lists the global entries as written", () => {
    const withGhost = {
      ...config,
      agent_tools: [...config.agent_tools, { agent: "Ghost Writer", description: "gone", enabled: false }],
    };
    expect(globalRows(withGhost)).toEqual([
      { name: "agent_coder", scope: "global", description: "Writes code.", enabled: true, absent: null },
      { name: "agent_ghost_writer", scope: "global", description: "gone", enabled: false, absent: "no such agent" },
    ]);
  });
});
