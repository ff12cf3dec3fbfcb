/**
 * The chat of the open session: messages, the turn in flight, sending a turn
 * through the IPC channel (its updates arrive there, each after it is logged; its
 * call events go to a `TurnSink` the caller gives), stopping it, and taking the last exchange back. Turns that run
 * outside the window (an MCP client's calls) are shown too, but are not the chat's
 * turn in flight: they never make it busy.
 */
import { Channel } from "@tauri-apps/api/core";
import {
  commands,
  type CallError,
  type CallEvent_Serialize as CallEvent,
  type CallStatus,
  type AppError_Serialize as AppError,
  type TurnOutcome_Serialize as TurnOutcome,
  type TurnUpdate_Deserialize,
  type TurnUpdate_Serialize as TurnUpdate,
} from "../../bindings";
import { finishReply, fullAnswer, type ChatEntry, type CommandNote } from "./entry";

export type { ChatEntry, CommandNote } from "./entry";

/**
 * Where a turn's call events go while it streams, and what the chat reads back once
 * they have all arrived. The chat knows nothing of call trees; the view that sends
 * a message supplies one that feeds them.
 */
export interface TurnSink {
  /** A turn starts; `label` is the user's message. */
  start(turnId: string, label: string): void;
  /** One event of the turn, in order, as it arrives. */
  push(turnId: string, event: CallEvent): void;
  /** The turn's command has returned: every event has arrived. What streamed, for a reply the summary left empty. */
  end(turnId: string): { answer: string; rootError: CallError | null };
}

/** The last exchange of the chat: its turn and the user's message. */
export interface LastTurn {
  turnId: string;
  text: string;
}

/** `@name rest` routes the turn to agent `name` (the human handoff). */
export function parseHandoff(text: string): { agent: string | null; message: string } {
  const match = /^@([^\s]+)\s+([\s\S]*)$/.exec(text.trim());
  if (!match) return { agent: null, message: text.trim() };
  return { agent: match[1], message: match[2].trim() };
}

/** The agent names that complete an `@` prefix being typed, or null when none is being typed. */
export function completions(draft: string, agents: string[]): string[] | null {
  const match = /^@(\S*)$/.exec(draft);
  if (!match) return null;
  const prefix = match[1].toLowerCase();
  return agents.filter((agent) => agent.toLowerCase().startsWith(prefix));
}

let counter = 0;
function newId(prefix: string): string {
  counter += 1;
  const random = typeof crypto !== "undefined" && "randomUUID" in crypto ? crypto.randomUUID() : String(Date.now());
  return `${prefix}-${counter}-${random}`;
}

/** What a turn's command answers: how it ended, or why it did not run. */
type Outcome = { status: "ok"; data: TurnOutcome } | { status: "error"; error: AppError };

class ChatStore {
  entries = $state<ChatEntry[]>([]);
  activeTurn = $state<string | null>(null);
  sessionId = $state<string | null>(null);

  get busy(): boolean {
    return this.activeTurn !== null;
  }

  /** Shows a session's messages (after a replay of its log). */
  show(sessionId: string | null, entries: ChatEntry[]): void {
    this.sessionId = sessionId;
    this.entries = entries;
  }

  /** Shows what a slash command answered, after the messages (it is not part of the session's log). */
  addNote(note: CommandNote): ChatEntry {
    this.entries.push({
      id: newId("note"),
      role: "command",
      content: note.text,
      agent: null,
      turnId: null,
      status: "done",
      error: null,
      note,
    });
    return this.entries[this.entries.length - 1];
  }

  /**
   * Sends a message in `sessionId`, streaming the reply, and the turn's call events
   * into `sink`: to the agent an `@agent` handoff names, else to `picked` (the chat's
   * agent), else to the primary.
   */
  async send(sessionId: string, text: string, sink: TurnSink, picked: string | null = null): Promise<void> {
    const handoff = parseHandoff(text);
    const message = handoff.message;
    const agent = handoff.agent ?? picked;
    if (!message || this.busy) return;
    await this.stream(sessionId, text.trim(), agent, sink, (turnId, channel) =>
      commands.sendMessage(
        { session_id: sessionId, turn_id: turnId, agent, handoff_typed: handoff.agent !== null, message },
        channel,
      ),
    );
  }

  /**
   * Resumes interrupted turn `ofTurn` (its message `text`, to `agent`): its entries
   * give way to the new turn's, which streams like a sent one; the calls it had
   * finished are answered from the log, not run again.
   */
  async resume(sessionId: string, ofTurn: string, text: string, agent: string | null, sink: TurnSink): Promise<void> {
    if (this.busy) return;
    this.entries = this.entries.filter((entry) => entry.turnId !== ofTurn);
    await this.stream(sessionId, text, agent, sink, (turnId, channel) =>
      commands.resumeTurn(sessionId, ofTurn, turnId, channel),
    );
  }

  /** A turn of the chat's: its message and a reply that streams its updates into `sink` until `invoke` answers. */
  private async stream(
    sessionId: string,
    text: string,
    agent: string | null,
    sink: TurnSink,
    invoke: (turnId: string, channel: Channel<TurnUpdate_Deserialize>) => Promise<Outcome>,
  ): Promise<void> {
    this.sessionId = sessionId;
    const turnId = newId("turn");
    this.entries.push({
      id: newId("m"),
      role: "user",
      content: text,
      agent: null,
      turnId,
      status: "done",
      error: null,
    });
    this.entries.push({
      id: newId("m"),
      role: "assistant",
      content: "",
      agent,
      turnId,
      status: "streaming",
      error: null,
    });
    const reply = this.entries[this.entries.length - 1];
    this.activeTurn = turnId;
    sink.start(turnId, text);
    const channel = new Channel<TurnUpdate>();
    // Its start and end are the chat's own (the message shown, the command's answer).
    channel.onmessage = (update) => {
      if (update.phase === "event") sink.push(turnId, update.event);
    };
    try {
      // The generated signature names the Deserialize shape for a channel argument;
      // what arrives is what Rust serializes, so the channel is typed by that.
      const result = await invoke(turnId, channel as unknown as Channel<TurnUpdate_Deserialize>);
      const streamed = sink.end(turnId);
      if (result.status === "ok") {
        const summary = result.data;
        reply.content = fullAnswer(summary.text, streamed.answer);
        reply.agent = summary.answered_by;
        finishReply(reply, summary.status, streamed.rootError);
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

  /**
   * Shows a turn that runs outside the window: `line` as its message and a reply
   * that streams. A turn already shown (its session was just replayed) only streams again.
   */
  showOutsideTurn(turnId: string, line: string, agent: string): void {
    const reply = this.replyOf(turnId);
    if (reply) {
      reply.status = "streaming";
      reply.error = null;
      return;
    }
    const entry = { agent: null, turnId, status: "done", error: null, outside: true } as const;
    this.entries.push({ ...entry, id: `${turnId}-user`, role: "user", content: line });
    this.entries.push({ ...entry, id: `${turnId}-reply`, role: "assistant", content: "", agent, status: "streaming" });
  }

  /** Ends the reply of an outside turn as it ended; `streamed` is what its tree says, for a reply left empty. */
  finishOutsideTurn(
    turnId: string,
    ended: { status: CallStatus; text: string; answered_by: string },
    streamed: { answer: string; rootError: CallError | null },
  ): void {
    const reply = this.replyOf(turnId);
    if (!reply) return;
    reply.content = fullAnswer(ended.text, streamed.answer);
    reply.agent = ended.answered_by;
    reply.error = null;
    finishReply(reply, ended.status, streamed.rootError);
  }

  async stop(): Promise<void> {
    if (this.activeTurn) await commands.cancelTurn(this.activeTurn);
  }

  /** The last exchange, if it can be retried or edited (nothing is running, here or outside). */
  lastTurn(): LastTurn | null {
    if (this.busy) return null;
    const user = [...this.entries].reverse().find((entry) => entry.role === "user");
    // The last exchange is an outside turn (a call run again): there is no message of the user's to retry.
    if (!user?.turnId || user.outside || this.replyOf(user.turnId)?.status === "streaming") return null;
    return { turnId: user.turnId, text: user.content };
  }

  /** Takes the last exchange back (logged as retracted) and returns it. */
  async takeBackLast(): Promise<LastTurn | null> {
    const last = this.lastTurn();
    if (!last || !this.sessionId) return null;
    const result = await commands.retractTurn(this.sessionId, last.turnId);
    if (result.status === "error") throw new Error(result.error.message);
    this.entries = this.entries.filter((entry) => entry.turnId !== last.turnId);
    return last;
  }

  private replyOf(turnId: string): ChatEntry | undefined {
    return this.entries.find((entry) => entry.turnId === turnId && entry.role === "assistant");
  }
}

export const chatStore = new ChatStore();
