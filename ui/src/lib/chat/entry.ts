/** One message of the chat as the view shows it, and how a finished turn sets its reply. */
import type { CallError, CallStatus } from "../../bindings";

/** One message of the chat as the view shows it. */
export interface ChatEntry {
  id: string;
  role: "user" | "assistant";
  content: string;
  /** The agent that answered (after an escalation: the escalation agent), or the `@agent` asked. */
  agent: string | null;
  turnId: string | null;
  status: "streaming" | "done" | "error" | "cancelled" | "interrupted";
  error: string | null;
}

/** Sets a reply's status (and, for a failed turn, the root call's error) from how the turn ended. */
export function finishReply(reply: ChatEntry, status: CallStatus, rootError: CallError | null): void {
  reply.status = status === "ok" ? "done" : status === "cancelled" ? "cancelled" : "error";
  if (reply.status === "error") reply.error = rootError?.message ?? `the turn ended with status ${status}`;
}
