/** The tree fold: nesting, statuses, usage, text, ordering guards, escalation answers, a call's parsed input. */
import { describe, expect, it } from "vitest";
import type { CallEvent_Serialize as CallEvent } from "../../bindings";
import {
  answerOf,
  applyEvent,
  emptyTree,
  elapsedMs,
  parseCallInput,
  rootOf,
  visibleNodes,
  waitedMs,
  waitingNodes,
  type CallInput,
} from "./model";

let seq = 0;
function event(
  callId: string,
  parentId: string | null,
  agent: string,
  depth: number,
  kind: Record<string, unknown>,
): CallEvent {
  seq += 1;
  return { seq, ts_ms: 1000 + seq * 10, call_id: callId, parent_id: parentId, agent, depth, ...kind } as CallEvent;
}
const started = (role: string, toolName: string | null = null) => ({
  type: "call_started",
  role,
  tool_name: toolName,
  input: null,
  tools: [],
  model: null,
});
const finished = (status: string, total: number | null) => ({
  type: "call_finished",
  status,
  result: "r",
  usage: total === null ? null : { input_tokens: total, output_tokens: 0, total_tokens: total },
  usage_total: total === null ? null : { input_tokens: total, output_tokens: 0, total_tokens: total },
  steps: 1,
  error: status === "error" ? { kind: "timeout", message: "no answer within 5 s" } : null,
  delivered: null,
});

describe("a call's text over its steps", () => {
  it("is a paragraph a step: the words before a tool call and the answer after it do not run together", () => {
    const tree = emptyTree();
    applyEvent(tree, event("r", null, "assistant", 0, started("turn")));
    applyEvent(tree, event("r", null, "assistant", 0, { type: "text_delta", text: "Let me ask the echo " }));
    applyEvent(tree, event("r", null, "assistant", 0, { type: "text_delta", text: "agent." }));
    applyEvent(tree, event("e", "r", "echo", 1, started("tool", "agent_echo")));
    applyEvent(tree, event("e", "r", "echo", 1, { type: "text_delta", text: "hi" }));
    applyEvent(tree, event("e", "r", "echo", 1, finished("ok", 3)));
    applyEvent(tree, event("r", null, "assistant", 0, { type: "text_delta", text: "The echo " }));
    applyEvent(tree, event("r", null, "assistant", 0, { type: "text_delta", text: "said hi." }));
    expect(rootOf(tree)?.text).toBe("Let me ask the echo agent.\n\nThe echo said hi.");
    expect(tree.nodes.get("e")?.text).toBe("hi");
  });
  it("adds no break when the step before said nothing", () => {
    const tree = emptyTree();
    applyEvent(tree, event("r", null, "assistant", 0, started("turn")));
    applyEvent(tree, event("e", "r", "echo", 1, started("tool", "agent_echo")));
    applyEvent(tree, event("r", null, "assistant", 0, { type: "text_delta", text: "Done." }));
    expect(rootOf(tree)?.text).toBe("Done.");
  });
});

describe("a remote agent's question", () => {
  it("makes the call wait with the question, and the answer (or a decline) lets it run on", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "assistant", 0, started("turn")));
    applyEvent(tree, event("c2", "c1", "scout", 1, started("tool", "agent_scout")));
    applyEvent(tree, event("c2", "c1", "scout", 1, { type: "input_requested", question: "Which river?" }));
    const scout = tree.nodes.get("c2")!;
    expect([scout.status, scout.question]).toEqual(["waiting", "Which river?"]);
    expect(waitingNodes(tree).map((node) => node.callId)).toEqual(["c2"]);
    applyEvent(tree, event("c2", "c1", "scout", 1, { type: "input_answered", answer: "the Rhine", by: "user" }));
    expect([scout.status, scout.question]).toEqual(["running", null]);
    expect(scout.answered).toEqual({ question: "Which river?", answer: "the Rhine", by: "user" });
    applyEvent(tree, event("c2", "c1", "scout", 1, { type: "input_requested", question: "Which bank?" }));
    applyEvent(tree, event("c2", "c1", "scout", 1, { type: "input_answered", answer: null, by: "policy" }));
    expect(scout.answered).toEqual({ question: "Which bank?", answer: null, by: "policy" });
    applyEvent(tree, event("c2", "c1", "scout", 1, finished("error", null)));
    expect([scout.status, scout.question]).toEqual(["error", null]);
    expect(waitingNodes(tree)).toEqual([]);
  });
});

describe("the waiting calls", () => {
  it("are kept as statuses change: asked, answered, asked again, finished", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "assistant", 0, started("turn")));
    applyEvent(tree, event("c2", "c1", "scout", 1, started("tool", "agent_scout")));
    applyEvent(tree, event("c3", "c1", "coder", 1, started("tool", "agent_coder")));
    const limits = { may_delegate: false, depth: 1, max_depth: 1, calls_left: 3, timeout_secs: null };
    const asked = { type: "approval_requested", tool_name: "agent_coder", input: null, limits };
    const waiting = () => [[...tree.waiting].sort(), waitingNodes(tree).map((node) => node.callId)];
    expect(waiting()).toEqual([[], []]);
    applyEvent(tree, event("c3", "c1", "coder", 1, asked));
    applyEvent(tree, event("c2", "c1", "scout", 1, { type: "input_requested", question: "Which?" }));
    // In the order the calls started, as before the set was kept.
    expect(waiting()).toEqual([
      ["c2", "c3"],
      ["c2", "c3"],
    ]);
    applyEvent(
      tree,
      event("c3", "c1", "coder", 1, { type: "approval_resolved", decision: "approve_once", by: "user" }),
    );
    expect(waiting()).toEqual([["c2"], ["c2"]]);
    applyEvent(tree, event("c3", "c1", "coder", 1, asked));
    applyEvent(tree, event("c3", "c1", "coder", 1, finished("denied", null)));
    applyEvent(tree, event("c2", "c1", "scout", 1, finished("cancelled", null)));
    expect(waiting()).toEqual([[], []]);
  });
});

describe("the time a call waited for the user", () => {
  it("adds each approval and question wait, counts an open one to now, and ends with the call", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "assistant", 0, started("turn"))); // ts 1010
    applyEvent(tree, event("c2", "c1", "coder", 1, started("tool", "agent_coder"))); // 1020
    const limits = { may_delegate: false, depth: 1, max_depth: 1, calls_left: 3, timeout_secs: null };
    const asked = { type: "approval_requested", tool_name: "agent_coder", input: null, limits };
    applyEvent(tree, event("c2", "c1", "coder", 1, asked)); // 1030
    const coder = tree.nodes.get("c2")!;
    expect(waitedMs(coder, 1055)).toBe(25);
    applyEvent(
      tree,
      event("c2", "c1", "coder", 1, { type: "approval_resolved", decision: "approve_once", by: "user" }),
    ); // 1040
    expect(waitedMs(coder, 5000)).toBe(10);
    applyEvent(tree, event("c2", "c1", "coder", 1, { type: "input_requested", question: "Which?" })); // 1050
    applyEvent(tree, event("c2", "c1", "coder", 1, finished("ok", 3))); // 1060: the call ended the wait
    expect(waitedMs(coder, 9000)).toBe(20);
    expect(elapsedMs(coder, 9000)).toBe(40);
  });
});

describe("applyEvent", () => {
  it("nests calls by parent_id and tracks each call's status and text", () => {
    seq = 0;
    const tree = emptyTree();
    const stream = [
      event("c1", null, "assistant", 0, started("turn")),
      event("c2", "c1", "researcher", 1, started("tool", "agent_researcher")),
      event("c3", "c1", "summariser", 1, started("tool", "agent_summariser")),
      event("c2", "c1", "researcher", 1, { type: "text_delta", text: "Find" }),
      event("c2", "c1", "researcher", 1, { type: "tool_progress", message: "checking", data: null }),
      event("c2", "c1", "researcher", 1, { type: "text_delta", text: "ings" }),
      event("c3", "c1", "summariser", 1, finished("error", null)),
      event("c2", "c1", "researcher", 1, finished("ok", 40)),
      event("c1", null, "assistant", 0, { type: "text_delta", text: "Done." }),
      event("c1", null, "assistant", 0, finished("ok", 100)),
    ];
    for (const item of stream) applyEvent(tree, item);
    expect(tree.rootId).toBe("c1");
    expect(tree.nodes.get("c1")?.children).toEqual(["c2", "c3"]);
    expect(tree.nodes.get("c2")?.text).toBe("Findings");
    expect(tree.nodes.get("c2")?.lastProgress).toBe("checking");
    expect(tree.nodes.get("c2")?.usageTotal?.total_tokens).toBe(40);
    expect(tree.nodes.get("c3")?.status).toBe("error");
    expect(tree.nodes.get("c3")?.error?.kind).toBe("timeout");
    expect(tree.nodes.get("c3")?.usage).toBeNull();
    expect(answerOf(tree)).toEqual({ text: "Done.", agent: "assistant" });
    expect(tree.anomalies).toEqual([]);
  });

  it("marks a call remote from its runner's progress data, and only that call", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "assistant", 0, started("turn")));
    applyEvent(tree, event("c2", "c1", "scout", 1, started("tool", "agent_scout")));
    const connected = { remote: { endpoint: "http://127.0.0.1:9000/a2a", connect_ms: 3 } };
    applyEvent(tree, event("c2", "c1", "scout", 1, { type: "tool_progress", message: "remote …", data: connected }));
    applyEvent(tree, event("c1", null, "assistant", 0, { type: "tool_progress", message: "x", data: { step: 1 } }));
    expect(tree.nodes.get("c2")?.remote).toBe("http://127.0.0.1:9000/a2a");
    expect(tree.nodes.get("c1")?.remote).toBeNull();
  });

  it("refuses out-of-order and orphan events without corrupting the tree", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "a", 0, started("turn")));
    const late = event("c1", null, "a", 0, { type: "text_delta", text: "x" });
    applyEvent(tree, event("c1", null, "a", 0, { type: "text_delta", text: "y" }));
    applyEvent(tree, late);
    applyEvent(tree, event("c9", "c1", "ghost", 1, { type: "text_delta", text: "z" }));
    expect(tree.nodes.get("c1")?.text).toBe("y");
    expect(tree.anomalies).toHaveLength(2);
  });

  it("answers with the escalation agent's text after a handoff", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "assistant", 0, started("turn")));
    applyEvent(
      tree,
      event("c1", null, "assistant", 0, { type: "escalated", from: "assistant", to: "expert", reason: null }),
    );
    applyEvent(tree, event("c2", "c1", "expert", 1, started("escalation", "escalate")));
    applyEvent(tree, event("c2", "c1", "expert", 1, { type: "text_delta", text: "Expert view" }));
    expect(answerOf(tree)).toEqual({ text: "Expert view", agent: "expert" });
    expect(tree.nodes.get("c1")?.escalatedTo).toBe("expert");
  });
});

describe("views of the tree", () => {
  it("lists nodes depth first and hides collapsed subtrees", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "a", 0, started("turn")));
    applyEvent(tree, event("c2", "c1", "b", 1, started("tool")));
    applyEvent(tree, event("c3", "c2", "c", 2, started("tool")));
    applyEvent(tree, event("c4", "c1", "d", 1, started("tool")));
    expect(visibleNodes(tree, new Set()).map((node) => node.callId)).toEqual(["c1", "c2", "c3", "c4"]);
    expect(visibleNodes(tree, new Set(["c2"])).map((node) => node.callId)).toEqual(["c1", "c2", "c4"]);
  });

  it("measures elapsed time", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "a", 0, started("turn")));
    const node = tree.nodes.get("c1");
    expect(node && elapsedMs(node, node.startedMs + 700)).toBe(700);
  });
});

describe("parseCallInput", () => {
  const none = { request: null, reason: null, context: null, model: null };
  const cases: Array<[string, unknown, CallInput | null]> = [
    ["null (the root)", null, null],
    ["a string", "do it", null],
    ["a number", 42, null],
    ["an array", [{ request: "x" }], null],
    ["an empty object", {}, none],
    [
      "a delegation",
      { request: "Find facts", context: { topic: "sky" } },
      { ...none, request: "Find facts", context: { topic: "sky" } },
    ],
    ["ask_model", { request: "Check", model: "big-model" }, { ...none, request: "Check", model: "big-model" }],
    ["an escalation", { reason: "too hard" }, { ...none, reason: "too hard" }],
    [
      "fields of the wrong type",
      { request: 7, reason: ["x"], model: { name: "m" }, context: "plain text" },
      { ...none, context: "plain text" },
    ],
  ];
  it.each(cases)("%s", (_name, input, expected) => expect(parseCallInput(input)).toEqual(expected));

  it("is parsed once, when call_started is folded", () => {
    seq = 0;
    const tree = emptyTree();
    applyEvent(tree, event("c1", null, "a", 0, started("turn")));
    applyEvent(tree, event("c2", "c1", "b", 1, { ...started("tool", "agent_b"), input: { request: "Summarise" } }));
    expect(rootOf(tree)?.input).toBeNull();
    expect(tree.nodes.get("c2")?.input).toEqual({ ...none, request: "Summarise" });
  });
});

describe("steering", () => {
  it("keeps how a call can be steered and the messages sent into it, taken or not", () => {
    const tree = emptyTree();
    applyEvent(tree, event("s1", null, "boss", 0, { ...started("turn"), steering: { way: "next_step" } }));
    applyEvent(
      tree,
      event("s2", "s1", "coder", 1, {
        ...started("tool", "agent_coder"),
        steering: { way: "not", why: "it runs its own loop" },
      }),
    );
    applyEvent(tree, event("s1", null, "boss", 0, { type: "text_delta", text: "Looking." }));
    applyEvent(
      tree,
      event("s1", null, "boss", 0, { type: "call_steered", message: "stop and summarise", by: "user", taken: true }),
    );
    applyEvent(tree, event("s1", null, "boss", 0, { type: "text_delta", text: "Summary." }));
    applyEvent(
      tree,
      event("s1", null, "boss", 0, { type: "call_steered", message: "one more", by: "user", taken: false }),
    );
    const boss = tree.nodes.get("s1")!;
    expect(boss.steering).toEqual({ way: "next_step" });
    expect(boss.steers.map(({ message, taken }) => [message, taken])).toEqual([
      ["stop and summarise", true],
      ["one more", false],
    ]);
    expect(boss.text).toBe("Looking.\n\nSummary.");
    expect(tree.nodes.get("s2")!.steering).toEqual({ way: "not", why: "it runs its own loop" });
  });

  it("reads a call logged before steering existed as not steerable", () => {
    const tree = emptyTree();
    applyEvent(tree, event("o1", null, "old", 0, started("turn")));
    expect(tree.nodes.get("o1")!.steering.way).toBe("not");
  });
});
