/** One message of the chat as the view shows it, and how a finished turn sets its reply. */
import type { CallError, CallStatus } from "../../bindings";
import type { ToolRow } from "./commands";

/** A slash command and what it answered: shown in the chat, never sent to a model nor logged. */
export interface CommandNote {
  /** The command as typed (or the description sent after a prompt). */
  command: string;
  /** `done` applied, `error` refused or mistyped (the text as the backend or the parser said it), `prompt` waits for the next message. */
  outcome: "done" | "error" | "prompt";
  text: string;
  /** A listing's rows (`/agent tool list`). */
  rows?: ToolRow[];
}

/** One message of the chat as the view shows it. */
export interface ChatEntry {
  id: string;
  /** `command`: a slash command's note (`note`), local to this window. */
  role: "user" | "assistant" | "command";
  content: string;
  /** The agent that answered (after an escalation: the escalation agent), or the `@agent` asked. */
  agent: string | null;
  turnId: string | null;
  status: "streaming" | "done" | "error" | "cancelled" | "interrupted";
  error: string | null;
  note?: CommandNote;
  /** A turn the user did not type here (an MCP client's call, a call run again): not retried or edited. */
  outside?: boolean;
  /** An interrupted turn the core can resume (its process died; it did not end). */
  resumable?: boolean;
}

/** Sets a reply's status (and, for a failed turn, the root call's error) from how the turn ended. */
/**
 * The reply a chat shows for a finished turn: every step of the answering agent
 * as it streamed (its words before it called a tool-agent too) when that ends
 * with the final answer; else the final answer, or what streamed when the
 * answer is empty.
 */
export function fullAnswer(final: string, streamed: string): string {
  if (!final) return streamed;
  return streamed.trimEnd().endsWith(final.trim()) ? streamed.trimEnd() : final;
}

export function finishReply(reply: ChatEntry, status: CallStatus, rootError: CallError | null): void {
  reply.status = status === "ok" ? "done" : status === "cancelled" ? "cancelled" : "error";
  if (reply.status === "error") reply.error = rootError?.message ?? `the turn ended with status ${status}`;
}
