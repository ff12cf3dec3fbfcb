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
