/** The tree component: ARIA tree pattern, accessible names with agent and status, keyboard collapse and approval, live updates per fold. */
import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { flushSync } from "svelte";
import type { CallEvent_Serialize as CallEvent } from "../../bindings";
import CallTree from "./CallTree.svelte";
import { treeStore } from "./state.svelte";

function push(turnId: string, events: Array<Record<string, unknown>>) {
  events.forEach((event, index) =>
    treeStore.push(turnId, { seq: index + 1, ts_ms: 1000 + index, depth: 0, parent_id: null, ...event } as CallEvent),
  );
  treeStore.flush();
}

describe("CallTree", () => {
  it("renders one treeitem per call, named by agent and status, and collapses with the keyboard", async () => {
    const start = { type: "call_started", tool_name: null, input: null, tools: [], model: null } as const;
    push("t1", [
      { ...start, call_id: "c1", agent: "assistant", role: "turn" },
      { ...start, call_id: "c2", parent_id: "c1", depth: 1, agent: "researcher", role: "tool" },
      {
        type: "call_finished",
        call_id: "c2",
        parent_id: "c1",
        depth: 1,
        agent: "researcher",
        status: "ok",
        result: "x",
        usage: null,
        usage_total: null,
        cost: null,
        cost_total: null,
        steps: 1,
        error: null,
        delivered: null,
      },
    ]);
    render(CallTree, { turnId: "t1", now: 5000 });
    expect(screen.getByRole("tree", { name: "Call tree" })).toBeTruthy();
    const root = screen.getByRole("treeitem", { name: "assistant, running" });
    expect(root.getAttribute("aria-expanded")).toBe("true");
    const child = screen.getByRole("treeitem", { name: "researcher, ok" });
    expect(child.getAttribute("aria-level")).toBe("2");
    expect(child.getAttribute("aria-expanded")).toBeNull();

    root.focus();
    await fireEvent.keyDown(root, { key: "ArrowLeft" });
    flushSync();
    expect(screen.queryByRole("treeitem", { name: "researcher, ok" })).toBeNull();
    expect(root.getAttribute("aria-expanded")).toBe("false");
    await fireEvent.keyDown(root, { key: "ArrowRight" });
    flushSync();
    expect(screen.getByRole("treeitem", { name: "researcher, ok" })).toBeTruthy();
  });

  it("answers the focused row's approval request from the keyboard: A once, Shift+A always, D deny", async () => {
    const start = { type: "call_started", tool_name: null, input: null, tools: [], model: null } as const;
    const limits = { may_delegate: false, depth: 1, max_depth: 1, calls_left: 5, timeout_secs: null };
    push("t3", [
      { ...start, call_id: "c1", agent: "assistant", role: "turn" },
      { ...start, call_id: "c2", parent_id: "c1", depth: 1, agent: "researcher", role: "tool" },
      {
        type: "approval_requested",
        call_id: "c2",
        parent_id: "c1",
        depth: 1,
        agent: "researcher",
        tool_name: "agent_researcher",
        input: null,
        limits,
      },
    ]);
    const answer = vi.spyOn(treeStore, "answerApproval").mockResolvedValue(true);
    const view = within(render(CallTree, { turnId: "t3", now: 5000 }).container);
    const root = view.getByRole("treeitem", { name: "assistant, running" });
    root.focus();
    await fireEvent.keyDown(root, { key: "a" });
    expect(answer).not.toHaveBeenCalled();
    await fireEvent.keyDown(root, { key: "ArrowDown" });
    flushSync();
    const waiting = view.getByRole("treeitem", { name: "researcher, waiting for approval" });
    await fireEvent.keyDown(waiting, { key: "a" });
    await fireEvent.keyDown(waiting, { key: "A", shiftKey: true });
    await fireEvent.keyDown(waiting, { key: "d" });
    await fireEvent.keyDown(waiting, { key: "a", ctrlKey: true });
    expect(answer.mock.calls).toEqual([
      ["t3", "c2", "approve_once"],
      ["t3", "c2", "approve_always"],
      ["t3", "c2", "deny"],
    ]);
    answer.mockRestore();
  });

  it("shows queued events once they are folded, and not before", () => {
    const start = { type: "call_started", tool_name: null, input: null, tools: [], model: null } as const;
    push("t2", [{ ...start, call_id: "c1", agent: "assistant", role: "turn" }]);
    render(CallTree, { turnId: "t2", now: 5000 });
    const child: Record<string, unknown> = {
      ...start,
      call_id: "c2",
      parent_id: "c1",
      depth: 1,
      agent: "coder",
      role: "tool",
    };
    treeStore.push("t2", { seq: 2, ts_ms: 1002, ...child } as CallEvent);
    flushSync();
    expect(screen.queryByRole("treeitem", { name: "coder, running" })).toBeNull();
    treeStore.flush();
    flushSync();
    expect(screen.getByRole("treeitem", { name: "coder, running" })).toBeTruthy();
  });
});

describe("the tree store's fold", () => {
  const delta = (seq: number) =>
    ({
      seq,
      ts_ms: 1000 + seq,
      call_id: "c1",
      parent_id: null,
      agent: "assistant",
      depth: 0,
      type: "text_delta",
      text: `${seq} `,
    }) as CallEvent;
  const start = {
    seq: 1,
    ts_ms: 1000,
    call_id: "c1",
    parent_id: null,
    agent: "assistant",
    depth: 0,
    type: "call_started",
    role: "turn",
    tool_name: null,
    input: null,
    tools: [],
    model: null,
    steering: { way: "next_step" },
  } as CallEvent;

  it("folds a backlog over several frames within its budget, in order, and all of it on flush", async () => {
    // A frame the tests above asked for runs first, so that the next push asks for one of ours.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const frames: Array<() => void> = [];
    vi.stubGlobal("requestAnimationFrame", (callback: () => void) => frames.push(callback));
    // Each read of the clock is 1 ms later: a frame's budget runs out after a few strides.
    let time = 0;
    const now = vi.spyOn(performance, "now").mockImplementation(() => (time += 1));
    try {
      treeStore.reset(new Map(), []);
      treeStore.push("fold", start);
      for (let seq = 2; seq <= 20_001; seq++) treeStore.push("fold", delta(seq));
      frames.shift()?.();
      const first = treeStore.current("fold").nodes.get("c1")!.text.length;
      expect(first).toBeGreaterThan(0);
      expect(treeStore.current("fold").lastSeq).toBeLessThan(20_001);
      // The rest waits for the next frame, which was asked for.
      expect(frames).toHaveLength(1);
      frames.shift()?.();
      expect(treeStore.current("fold").nodes.get("c1")!.text.length).toBeGreaterThan(first);
      treeStore.flush();
      const tree = treeStore.current("fold");
      expect([tree.lastSeq, tree.anomalies]).toEqual([20_001, []]);
      expect(tree.nodes.get("c1")!.text.startsWith("2 3 4 ")).toBe(true);
      expect(tree.nodes.get("c1")!.text.endsWith(" 19999 20000 20001 ")).toBe(true);
    } finally {
      now.mockRestore();
      vi.unstubAllGlobals();
      treeStore.reset(new Map(), []);
    }
  });
});
