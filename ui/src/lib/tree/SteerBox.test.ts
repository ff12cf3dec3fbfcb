/** The steer box of a running call: sends a message, shows it waiting until the call reports it, says why a call cannot be steered. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/svelte";
import { flushSync } from "svelte";
import type { CallEvent_Serialize as CallEvent } from "../../bindings";
import SteerBox from "./SteerBox.svelte";
import { treeStore } from "./state.svelte";

function start(turnId: string, callId: string, steering: unknown) {
  const base = { seq: 1, ts_ms: 1000, call_id: callId, parent_id: null, agent: "worker", depth: 0 };
  treeStore.push(turnId, {
    ...base,
    type: "call_started",
    role: "turn",
    tool_name: null,
    input: null,
    tools: [],
    model: null,
    steering,
  } as CallEvent);
  treeStore.flush();
  return treeStore.current(turnId).nodes.get(callId)!;
}

afterEach(cleanup);

describe("SteerBox", () => {
  it("sends a message with Enter, and shows it waiting until the call says it took it", async () => {
    const steer = vi.spyOn(treeStore, "steerCall").mockResolvedValue(null);
    const node = start("st1", "w1", { way: "next_step" });
    const view = render(SteerBox, { turnId: "st1", node });
    const box = screen.getByLabelText("Tell worker");
    await fireEvent.input(box, { target: { value: "  stop and summarise " } });
    await fireEvent.keyDown(box, { key: "Enter" });
    await vi.waitFor(() => expect(screen.getByText(/sent, waiting for its next step/)).toBeTruthy());
    expect(steer.mock.calls).toEqual([["st1", "w1", "stop and summarise"]]);
    expect((box as HTMLTextAreaElement).value).toBe("");

    treeStore.push("st1", {
      seq: 2,
      ts_ms: 1100,
      call_id: "w1",
      parent_id: null,
      agent: "worker",
      depth: 0,
      type: "call_steered",
      message: "stop and summarise",
      by: "user",
      taken: true,
    } as CallEvent);
    treeStore.flush();
    await view.rerender({ turnId: "st1", node: treeStore.current("st1").nodes.get("w1")! });
    flushSync();
    expect(screen.queryByText(/waiting for its next step/)).toBeNull();
    expect(screen.getByText(/taken, from the user/)).toBeTruthy();
    steer.mockRestore();
  });

  it("says why a message was not sent", async () => {
    const steer = vi.spyOn(treeStore, "steerCall").mockResolvedValue("that call is not running");
    const node = start("st2", "w2", { way: "next_step" });
    render(SteerBox, { turnId: "st2", node });
    await fireEvent.input(screen.getByLabelText("Tell worker"), { target: { value: "change course" } });
    await fireEvent.click(screen.getByRole("button", { name: "Send" }));
    await vi.waitFor(() => expect(screen.getByRole("alert").textContent).toBe("Not sent: that call is not running"));
    expect(screen.queryByText(/waiting for its next step/)).toBeNull();
    steer.mockRestore();
  });

  it("sends to a remote task at once, and says why the agent did not take a message", async () => {
    const steer = vi.spyOn(treeStore, "steerCall").mockResolvedValue(null);
    const node = start("st4", "w4", { way: "on_task" });
    const view = render(SteerBox, { turnId: "st4", node });
    expect(screen.getByText(/as a message on the task/)).toBeTruthy();
    const box = screen.getByLabelText("Tell worker");
    await fireEvent.input(box, { target: { value: "also the otters" } });
    await fireEvent.keyDown(box, { key: "Enter" });
    await vi.waitFor(() => expect(screen.getByText(/sent, on its way to the task/)).toBeTruthy());
    const steered = { seq: 2, call_id: "w4", parent_id: null, agent: "worker", depth: 0, type: "call_steered" };
    treeStore.push("st4", {
      ...steered,
      ts_ms: 1100,
      message: "also the otters",
      by: "user",
      taken: false,
      why: "the task had ended (completed)",
    } as CallEvent);
    treeStore.push("st4", {
      ...steered,
      seq: 3,
      ts_ms: 1200,
      message: "and the weirs",
      by: "user",
      taken: true,
    } as CallEvent);
    treeStore.flush();
    await view.rerender({ turnId: "st4", node: treeStore.current("st4").nodes.get("w4")! });
    flushSync();
    expect(screen.queryByText(/on its way to the task/)).toBeNull();
    const notes = screen.getByRole("list", { name: "Messages sent into the call" }).textContent!;
    expect(notes).toContain("“also the otters” — not taken: the task had ended (completed)");
    expect(notes).toContain("“and the weirs” — taken on its task, from the user");
    steer.mockRestore();
  });

  it("says that a message to a CLI agent goes to its input, read when its turn ends", () => {
    const node = start("st5", "w5", { way: "stdin" });
    render(SteerBox, { turnId: "st5", node });
    expect(screen.getByRole("form", { name: "Steer worker" }).textContent).toContain(
      "written to its input at once; it reads it when the turn it is on ends",
    );
  });

  it("shows why a call that runs its own loop cannot be steered, with no box", () => {
    const node = start("st3", "w3", {
      way: "not",
      why: '"coder" runs its own loop on the request it was started with',
    });
    render(SteerBox, { turnId: "st3", node });
    expect(screen.queryByRole("form", { name: "Steer worker" })).toBeNull();
    expect(screen.getByLabelText("Not steerable").textContent).toContain("runs its own loop");
  });
});
