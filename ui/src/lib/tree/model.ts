/**
 * The call tree of one turn, folded from the ordered event stream. Pure and
 * framework-free: `applyEvent` mutates a plain structure in place (cheap at 20,000
 * deltas), and the state module decides when the view re-reads it.
 */
import type {
  ApprovalDecision,
  ApprovalLimits,
  CallEvent_Serialize as CallEvent,
  CallError,
  CallRole,
  CallStatus,
  Steering,
  Usage,
} from "../../bindings";

/** A call's status as the tree shows it: running (or waiting for approval) until `call_finished` says otherwise. */
/** `interrupted`: the call was running when the process that ran its turn died (read back from the log). */
export type NodeStatus = "running" | "waiting" | "interrupted" | CallStatus;

export interface CallNode {
  callId: string;
  parentId: string | null;
  agent: string;
  depth: number;
  role: CallRole;
  toolName: string | null;
  /** What the call was asked, parsed from `call_started`; null when its input was not an object (the root). */
  input: CallInput | null;
  tools: string[];
  model: string | null;
  status: NodeStatus;
  startedMs: number;
  finishedMs: number | null;
  text: string;
  reasoning: string;
  lastProgress: string | null;
  usage: Usage | null;
  usageTotal: Usage | null;
  cost: number | null;
  costTotal: number | null;
  result: string | null;
  delivered: string | null;
  error: CallError | null;
  steps: number;
  escalatedTo: string | null;
  /** The limits shown with a pending approval request. */
  approvalLimits: ApprovalLimits | null;
  approval: { decision: ApprovalDecision; by: string } | null;
  /** Milliseconds the call has waited for the user (approvals, questions) so far, a wait still open excluded. */
  waitedMs: number;
  /** When its open wait for the user began (null: not waiting). */
  waitingSinceMs: number | null;
  /** A remote agent's question waiting for the user's answer (the call is `waiting`). */
  question: string | null;
  /** How the last question was settled: the answer, or null when it was declined. */
  answered: { question: string; answer: string | null; by: string } | null;
  /** A remote agent's endpoint (an MCP server or an A2A agent), from its runner's first progress line. */
  remote: string | null;
  children: string[];
  /** Whether a message can be sent into the call while it runs, or why not. */
  steering: Steering;
  /** Messages sent into the call, in the order it reported them. */
  steers: SteerNote[];
  /** Its model's step ended in tool calls since its last text: the next text is a new paragraph. */
  stepEnded: boolean;
}

/**
 * A message sent into a running call: taken (before a model step, or accepted on
 * a remote task), or not: the call ended first, or the remote agent refused it (`why`).
 */
export interface SteerNote {
  message: string;
  by: string;
  taken: boolean;
  why: string | null;
  atMs: number;
}

/** What a call logged before steering existed reads as (the core's default). */
const UNKNOWN_STEERING: Steering = { way: "not", why: "this call was logged before calls could be steered" };

/**
 * What a call was asked, parsed once from the untyped `input` of `call_started`:
 * `{request, context, model}` for a delegation, `{reason}` for an escalation. A
 * field of the wrong type reads as absent.
 */
export interface CallInput {
  request: string | null;
  /** Why the call was escalated; an escalation has a reason instead of a request. */
  reason: string | null;
  /** The labelled context the caller passed along (any JSON). */
  context: unknown;
  /** The model the caller asked for (`ask_model`). */
  model: string | null;
}

export interface CallTree {
  nodes: Map<string, CallNode>;
  rootId: string | null;
  lastSeq: number;
  /** Events that arrived out of order or for an unknown call; kept for diagnosis. */
  anomalies: string[];
  /**
   * The calls whose status is `waiting`, kept as they change: the window asks for
   * them every frame, and a tree of ten thousand calls is too big to search that often.
   */
  waiting: Set<string>;
}

/** A turn of a session with its label (the start of the user's message) and its call tree. */
export interface TurnTree {
  turnId: string;
  label: string;
  tree: CallTree;
}

export function emptyTree(): CallTree {
  return { nodes: new Map(), rootId: null, lastSeq: 0, anomalies: [], waiting: new Set() };
}

/** Parses a call's `input`; null when it is not a JSON object. */
export function parseCallInput(input: unknown): CallInput | null {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return null;
  const fields = input as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  return {
    request: text(fields.request),
    reason: text(fields.reason),
    context: fields.context ?? null,
    model: text(fields.model),
  };
}

/** Folds one event into the tree. */
export function applyEvent(tree: CallTree, event: CallEvent): void {
  if (event.seq <= tree.lastSeq) {
    tree.anomalies.push(`event ${event.seq} arrived after ${tree.lastSeq}`);
    return;
  }
  tree.lastSeq = event.seq;
  if (event.type === "call_started") {
    const node: CallNode = {
      callId: event.call_id,
      parentId: event.parent_id,
      agent: event.agent,
      depth: event.depth,
      role: event.role,
      toolName: event.tool_name,
      input: parseCallInput(event.input),
      tools: event.tools,
      model: event.model,
      status: "running",
      startedMs: event.ts_ms,
      finishedMs: null,
      text: "",
      reasoning: "",
      lastProgress: null,
      usage: null,
      usageTotal: null,
      cost: null,
      costTotal: null,
      result: null,
      delivered: null,
      error: null,
      steps: 0,
      escalatedTo: null,
      approvalLimits: null,
      waitedMs: 0,
      waitingSinceMs: null,
      approval: null,
      question: null,
      answered: null,
      remote: null,
      children: [],
      steering: event.steering ?? UNKNOWN_STEERING,
      steers: [],
      stepEnded: false,
    };
    tree.nodes.set(node.callId, node);
    tree.waiting.delete(node.callId);
    if (event.parent_id === null) tree.rootId = node.callId;
    else {
      const parent = tree.nodes.get(event.parent_id);
      parent?.children.push(node.callId);
      if (parent) parent.stepEnded = true;
    }
    return;
  }
  const node = tree.nodes.get(event.call_id);
  if (!node) {
    tree.anomalies.push(`event ${event.seq} (${event.type}) for unknown call ${event.call_id}`);
    return;
  }
  switch (event.type) {
    case "text_delta":
      // A step's text and the next step's (after its tool calls) are paragraphs
      // apart, not run together ("agent.The").
      if (node.stepEnded && node.text.trim() !== "" && !node.text.endsWith("\n\n")) node.text += "\n\n";
      node.stepEnded = false;
      node.text += event.text;
      break;
    case "reasoning_delta":
      node.reasoning += event.text;
      break;
    case "tool_progress": {
      node.lastProgress = event.message;
      const remote = (event.data as { remote?: { endpoint?: unknown } } | null)?.remote?.endpoint;
      if (typeof remote === "string") node.remote = remote;
      break;
    }
    case "usage_updated":
      node.usage = event.usage;
      node.usageTotal = event.usage_total;
      node.cost = event.cost ?? null;
      node.costTotal = event.cost_total ?? null;
      break;
    case "escalated":
      node.escalatedTo = event.to;
      break;
    case "call_steered":
      node.steers.push({
        message: event.message,
        by: event.by,
        taken: event.taken,
        why: event.why ?? null,
        atMs: event.ts_ms,
      });
      // What the model says next answers the message: a new paragraph.
      if (event.taken) node.stepEnded = true;
      break;
    case "approval_requested":
      setStatus(tree, node, "waiting");
      node.approvalLimits = event.limits;
      node.waitingSinceMs ??= event.ts_ms;
      break;
    case "approval_resolved":
      node.approval = { decision: event.decision, by: event.by };
      if (node.status === "waiting") setStatus(tree, node, "running");
      endWait(node, event.ts_ms);
      break;
    case "input_requested":
      setStatus(tree, node, "waiting");
      node.question = event.question;
      node.waitingSinceMs ??= event.ts_ms;
      break;
    case "input_answered":
      node.answered = { question: node.question ?? "", answer: event.answer, by: event.by };
      node.question = null;
      if (node.status === "waiting") setStatus(tree, node, "running");
      endWait(node, event.ts_ms);
      break;
    case "call_finished":
      node.question = null;
      endWait(node, event.ts_ms);
      setStatus(tree, node, event.status);
      node.finishedMs = event.ts_ms;
      node.result = event.result;
      node.delivered = event.delivered;
      node.error = event.error;
      node.steps = event.steps;
      if (event.usage) node.usage = event.usage;
      if (event.usage_total) node.usageTotal = event.usage_total;
      if (event.cost != null) node.cost = event.cost;
      if (event.cost_total != null) node.costTotal = event.cost_total;
      break;
  }
}

/** Closes a call's open wait for the user at `atMs`, adding it to what it waited. */
function endWait(node: CallNode, atMs: number): void {
  if (node.waitingSinceMs === null) return;
  node.waitedMs += Math.max(0, atMs - node.waitingSinceMs);
  node.waitingSinceMs = null;
}

/** Milliseconds a call has waited for the user: to `nowMs` for a wait still open. */
export function waitedMs(node: CallNode, nowMs: number): number {
  return node.waitedMs + (node.waitingSinceMs === null ? 0 : Math.max(0, nowMs - node.waitingSinceMs));
}

/** Sets a call's status, keeping the tree's set of waiting calls in step. */
function setStatus(tree: CallTree, node: CallNode, status: NodeStatus): void {
  node.status = status;
  if (status === "waiting") tree.waiting.add(node.callId);
  else tree.waiting.delete(node.callId);
}

/** Milliseconds a call has run: to its end, or to `nowMs` while it runs. */
export function elapsedMs(node: CallNode, nowMs: number): number {
  return Math.max(0, (node.finishedMs ?? nowMs) - node.startedMs);
}

/** The nodes in display order (depth first), skipping the subtrees of collapsed calls. */
export function visibleNodes(tree: CallTree, collapsed: ReadonlySet<string>): CallNode[] {
  const out: CallNode[] = [];
  const stack: string[] = tree.rootId ? [tree.rootId] : [];
  while (stack.length > 0) {
    const node = tree.nodes.get(stack.pop() as string);
    if (!node) continue;
    out.push(node);
    if (!collapsed.has(node.callId)) {
      for (let index = node.children.length - 1; index >= 0; index--) stack.push(node.children[index]);
    }
  }
  return out;
}

/** The turn's root call (the agent that answers the user), once it has started. */
export function rootOf(tree: CallTree): CallNode | undefined {
  return tree.rootId ? tree.nodes.get(tree.rootId) : undefined;
}

/** The text that answers the user: the root's, or the escalation agent's after a handoff. */
export function answerOf(tree: CallTree): { text: string; agent: string | null } {
  const root = rootOf(tree);
  if (!root) return { text: "", agent: null };
  const escalation = root.children.map((id) => tree.nodes.get(id)).find((child) => child?.role === "escalation");
  if (escalation) return { text: escalation.text, agent: escalation.agent };
  return { text: root.text, agent: root.agent };
}

/**
 * The calls of a turn that asked the user: those waiting now and those already
 * answered, in the order they started, so the chat's cards keep their places
 * while the turn runs (a card answered stays, saying so, and the next one does
 * not move up under the pointer).
 */
export function askedNodes(tree: CallTree): CallNode[] {
  return [...tree.nodes.values()].filter((node) => node.status === "waiting" || node.approval !== null);
}

/**
 * Calls of a tree that wait for an approval or an answer, in the order they
 * started. Free while nothing waits (the common case, asked every frame); the
 * calls are searched only when some wait.
 */
export function waitingNodes(tree: CallTree): CallNode[] {
  if (tree.waiting.size === 0) return [];
  return [...tree.nodes.values()].filter((node) => node.status === "waiting");
}

/** Marks every call of an interrupted turn's tree that had not ended as interrupted (nothing runs it now). */
export function markInterrupted(tree: CallTree): void {
  // Its clock stops at the last moment the log knows of.
  let lastMs = 0;
  for (const node of tree.nodes.values()) lastMs = Math.max(lastMs, node.finishedMs ?? node.startedMs);
  for (const node of tree.nodes.values()) {
    if (node.status !== "running" && node.status !== "waiting") continue;
    setStatus(tree, node, "interrupted");
    node.finishedMs = lastMs;
  }
}
