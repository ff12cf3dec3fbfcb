/** A conflict shown as mine against theirs, and the line diff under it. */
import { describe, expect, it } from "vitest";
import type { Config_Serialize as Config } from "../../bindings";
import { conflictView } from "./conflict";
import { lineDiff } from "../shared/diff";

const theirs: Config = {
  agents: [{ name: "coder", provider: "local", url: "http://x", tools: [{ agent: "lead", description: "boss" }] }],
  agent_tools: [{ agent: "coder", description: "writes code" }],
  primary: "coder",
};

describe("conflictView", () => {
  it("an agent edit against the agent on disk", () => {
    const view = conflictView(
      { op: "edit_agent", name: "coder", agent: { name: "coder", provider: "local", url: "http://y" } },
      theirs,
    );
    expect(view.subject).toBe("agent “coder”");
    expect(view.mine).toContain('"http://y"');
    expect(view.theirs).toContain('"http://x"');
    expect(view.diff).toContainEqual({ side: "mine", text: '  "url": "http://y"' });
    expect(view.diff).toContainEqual({ side: "theirs", text: '  "url": "http://x",' });
  });

  it("a tool switch against the entry on disk", () => {
    const view = conflictView({ op: "disable_tool", target: { kind: "global" }, tool_agent: "coder" }, theirs);
    expect(view.subject).toBe("the entry for “coder” in the global tool-agents");
    expect(JSON.parse(view.mine)).toEqual({ agent: "coder", description: "writes code", enabled: false });
  });

  it("an entry of an agent, and something gone from disk", () => {
    const view = conflictView(
      { op: "set_tool", target: { kind: "agent", agent: "coder" }, entry: { agent: "helper", description: "h" } },
      theirs,
    );
    expect(view.subject).toBe("the entry for “helper” in coder's tool-agents");
    expect(view.theirs).toBe("(not in the file)");
  });

  it("a role", () => {
    const view = conflictView({ op: "set_primary", agent: "lead" }, theirs);
    expect([view.subject, view.mine, view.theirs]).toEqual(["the primary agent", '"lead"', '"coder"']);
  });
});

it("mine is shown in theirs' key order, so the diff shows changes only", () => {
  const view = conflictView(
    {
      op: "edit_agent",
      name: "coder",
      agent: {
        name: "coder",
        provider: "local",
        tools: [{ description: "boss", agent: "lead" }],
        url: "http://x",
        model: "m",
      },
    },
    theirs,
  );
  const changed = view.diff.filter((line) => line.side !== "both").map((line) => line.text.trim());
  // The closing bracket before the new last key gains its comma; nothing else moves.
  expect(changed).toEqual(["]", "],", '"model": "m"']);
  expect(view.diff.find((line) => line.side === "both" && line.text.includes("url"))?.text).toBe(
    '  "url": "http://x",',
  );
});

it("lineDiff keeps common lines and marks the rest", () => {
  expect(lineDiff("a\nb\nc", "a\nx\nc")).toEqual([
    { side: "both", text: "a" },
    { side: "theirs", text: "b" },
    { side: "mine", text: "x" },
    { side: "both", text: "c" },
  ]);
});
