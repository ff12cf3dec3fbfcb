/**
 * The chat of the current session: messages, the turn in flight, and sending a
 * turn through the IPC channel. Tree events go to the tree store as they arrive.
 */
import { Channel } from "@tauri-apps/api/core";
import { commands, type CallEvent_Deserialize, type CallEvent_Serialize as CallEvent, type ChatMessage } from "../../bindings";
import { treeStore } from "../tree/state.svelte";
import { answerOf } from "../tree/model";

export interface ChatEntry {
  id: string;
  role: "user" | "assistant";
  content: string;
  /** The agent that answered (after an escalation: the escalation agent). */
  agent: string | null;
  turnId: string | null;
  status: "streaming" | "done" | "error" | "cancelled";
  error: string | null;
}

/** `@name rest` routes the turn to agent `name` (the human handoff). */
export function parseHandoff(text: string): { agent: string | null; message: string } {
  const match = /^@([^\s]+)\s+([\s\S]*)$/.exec(text.trim());
  if (!match) return { agent: null, message: text.trim() };
  return { agent: match[1], message: match[2].trim() };
}

let counter = 0;
function newId(prefix: string): string {
  counter += 1;
  const random = typeof crypto !== "undefined" && "randomUUID" in crypto ? crypto.randomUUID() : String(Date.now());
  return `${prefix}-${counter}-${random}`;
}

class ChatStore {
  entries = $state<ChatEntry[]>([]);
  activeTurn = $state<string | null>(null);

  get busy(): boolean {
    return this.activeTurn !== null;
  }

  async send(text: string): Promise<void> {
    const { agent, message } = parseHandoff(text);
    if (!message || this.busy) return;
    const history: ChatMessage[] = this.entries
      .filter((entry) => entry.status === "done" && entry.content)
      .map((entry) => ({ role: entry.role, content: entry.content }));
    const turnId = newId("turn");
    this.entries.push({ id: newId("m"), role: "user", content: text.trim(), agent: null, turnId, status: "done", error: null });
    this.entries.push({ id: newId("m"), role: "assistant", content: "", agent: agent, turnId, status: "streaming", error: null });
    const reply = this.entries[this.entries.length - 1];
    this.activeTurn = turnId;
    treeStore.select(turnId, null);
    const channel = new Channel<CallEvent>();
    channel.onmessage = (event) => treeStore.push(turnId, event);
    try {
      // The generated signature names the Deserialize shape for a channel argument;
      // what arrives is what Rust serializes, so the channel is typed by that.
      const wireChannel = channel as unknown as Channel<CallEvent_Deserialize>;
      const result = await commands.sendMessage({ turn_id: turnId, agent, message, history }, wireChannel);
      treeStore.flush();
      if (result.status === "ok") {
        const summary = result.data;
        reply.content = summary.text || answerOf(treeStore.tree(turnId)).text;
        reply.agent = summary.answered_by;
        reply.status = summary.status === "ok" ? "done" : summary.status === "cancelled" ? "cancelled" : "error";
        if (summary.status !== "ok" && summary.status !== "cancelled") {
          const root = treeStore.tree(turnId);
          const rootNode = root.rootId ? root.nodes.get(root.rootId) : undefined;
          reply.error = rootNode?.error?.message ?? `the turn ended with status ${summary.status}`;
        }
      } else {
        reply.status = "error";
        reply.error = result.error.message;
      }
    } catch (error) {
      reply.status = "error";
      reply.error = String(error);
    } finally {
      this.activeTurn = null;
    }
  }

  async stop(): Promise<void> {
    if (this.activeTurn) await commands.cancelTurn(this.activeTurn);
  }
}

export const chatStore = new ChatStore();
