/**
 * The agent each chat talks to, picked in the composer: by session id, kept in the
 * preferences across restarts; a chat not started yet (no session) keeps its pick
 * under NEW until its first message makes the session. No pick: the primary
 * answers. An `@agent` handoff still goes to that agent for one message.
 */
import { prefs } from "../shared/prefs";

/** The key of the chat not started yet. */
const NEW = "";
/** The most chats whose pick is kept (the oldest picks go first). */
const KEPT = 1000;

class ChatAgents {
  byChat = $state<Record<string, string>>({});

  async load(): Promise<void> {
    const saved = await prefs.get("chatAgents");
    if (saved) this.byChat = { ...saved, ...this.byChat };
  }

  /** The agent picked for `chat` (null: the chat not started yet), or null for the primary. */
  of(chat: string | null): string | null {
    return this.byChat[chat ?? NEW] ?? null;
  }

  /** The pick of `chat` when `agents` (the configured ones) still has it, else null (the primary). */
  effective(chat: string | null, agents: string[]): string | null {
    const picked = this.of(chat);
    return picked !== null && agents.includes(picked) ? picked : null;
  }

  pick(chat: string | null, agent: string | null): void {
    const key = chat ?? NEW;
    if (agent === null) delete this.byChat[key];
    else {
      // Re-inserted last: the most recent pick is the one kept longest.
      delete this.byChat[key];
      this.byChat[key] = agent;
    }
    if (chat !== null) void this.save();
  }

  /** The new chat's pick becomes the pick of the session its first message made. */
  adopt(sessionId: string): void {
    const picked = this.byChat[NEW];
    if (picked === undefined) return;
    delete this.byChat[NEW];
    this.byChat[sessionId] = picked;
    void this.save();
  }

  /** A deleted chat's pick goes with it. */
  forget(sessionId: string): void {
    if (!(sessionId in this.byChat)) return;
    delete this.byChat[sessionId];
    void this.save();
  }

  private async save(): Promise<void> {
    const kept = Object.entries(this.byChat)
      .filter(([key]) => key !== NEW)
      .slice(-KEPT);
    await prefs.set("chatAgents", Object.fromEntries(kept));
  }
}

export const chatAgents = new ChatAgents();
