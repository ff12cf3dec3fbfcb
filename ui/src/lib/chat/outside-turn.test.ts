/** A turn that runs outside the window (an MCP client's call) in the chat: shown, streaming, ended, never busy. */
import { describe, expect, it } from "vitest";
import { chatStore } from "./state.svelte";

const line = "MCP client claude-code → agent_researcher: find otters";
const brief = () =>
  chatStore.entries.map((entry) => [entry.role, entry.content, entry.agent, entry.status, entry.error]);

describe("an outside turn", () => {
  it("shows its line and a streaming reply without making the chat busy, then ends as it ended", () => {
    chatStore.show("mcp-calls", []);
    chatStore.showOutsideTurn("m1", line, "researcher");
    expect(brief()).toEqual([
      ["user", line, null, "done", null],
      ["assistant", "", "researcher", "streaming", null],
    ]);
    expect(chatStore.busy).toBe(false);
    expect(chatStore.lastTurn()).toBeNull();

    chatStore.finishOutsideTurn(
      "m1",
      { status: "ok", text: "", answered_by: "researcher" },
      { answer: "Otters hold hands.", rootError: null },
    );
    expect(brief()[1]).toEqual(["assistant", "Otters hold hands.", "researcher", "done", null]);
    // Ended, it is still not the user's message to retry or edit.
    expect(chatStore.lastTurn()).toBeNull();
  });

  it("streams again when a replay showed it interrupted, and ends with the root's error", () => {
    chatStore.show("mcp-calls", [
      { id: "m2-user", role: "user", content: line, agent: null, turnId: "m2", status: "done", error: null },
      {
        id: "m2-reply",
        role: "assistant",
        content: "Half",
        agent: "researcher",
        turnId: "m2",
        status: "interrupted",
        error: "The app stopped before this turn finished; this is what had arrived.",
      },
    ]);
    chatStore.showOutsideTurn("m2", line, "researcher");
    expect(brief()).toHaveLength(2);
    expect(brief()[1]).toEqual(["assistant", "Half", "researcher", "streaming", null]);

    const rootError = { kind: "denied", message: "the user denied this call" } as const;
    chatStore.finishOutsideTurn(
      "m2",
      { status: "denied", text: "", answered_by: "researcher" },
      { answer: "", rootError },
    );
    expect(brief()[1]).toEqual(["assistant", "", "researcher", "error", "the user denied this call"]);
  });
});
