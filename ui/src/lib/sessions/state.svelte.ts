/**
 * The session list of the sidebar and the open session: create, open (replaying
 * its log into the chat and the trees), rename, delete, search.
 */
import { commands, type SessionSummary } from "../../bindings";
import { chatStore } from "../chat/state.svelte";
import { treeStore } from "../tree/state.svelte";
import { prefs } from "../shared/prefs";
import { replaySession } from "./replay";

function unwrap<T>(result: { status: "ok"; data: T } | { status: "error"; error: { message: string } }): T {
  if (result.status === "error") throw new Error(result.error.message);
  return result.data;
}

/** A title from the first words of a message. */
export function titleFrom(message: string): string {
  const words = message
    .replace(/^@\S+\s+/, "")
    .trim()
    .split(/\s+/)
    .slice(0, 6)
    .join(" ");
  return words.length > 48 ? `${words.slice(0, 47)}…` : words || "New chat";
}

class SessionStore {
  sessions = $state<SessionSummary[]>([]);
  currentId = $state<string | null>(null);
  query = $state("");
  error = $state<string | null>(null);

  get filtered(): SessionSummary[] {
    const query = this.query.trim().toLowerCase();
    return query ? this.sessions.filter((session) => session.title.toLowerCase().includes(query)) : this.sessions;
  }

  async refresh(): Promise<void> {
    try {
      this.sessions = unwrap(await commands.listSessions());
      this.error = null;
    } catch (error) {
      this.error = String(error);
    }
  }

  /** Opens the last session used, if it still exists. */
  async restore(): Promise<void> {
    await this.refresh();
    const last = await prefs.get("lastSession");
    if (typeof last === "string" && this.sessions.some((session) => session.id === last)) await this.open(last);
  }

  async open(id: string): Promise<void> {
    if (chatStore.busy) return;
    try {
      const log = unwrap(await commands.loadSession(id));
      const replayed = replaySession(log.records);
      this.currentId = id;
      chatStore.show(id, replayed.entries);
      treeStore.reset(replayed.trees, replayed.turns);
      void prefs.set("lastSession", id);
      this.error =
        log.skipped_lines > 0 ? `${log.skipped_lines} damaged line(s) of this session's log were skipped` : null;
    } catch (error) {
      this.error = String(error);
    }
  }

  /** A fresh, empty chat; the session is created when its first message is sent. */
  startNew(): void {
    if (chatStore.busy) return;
    this.currentId = null;
    chatStore.show(null, []);
    treeStore.reset(new Map(), []);
  }

  /** The open session, created (titled after `message`) when there is none. */
  async ensure(message: string): Promise<string> {
    if (this.currentId) return this.currentId;
    const created = unwrap(await commands.createSession(titleFrom(message)));
    this.currentId = created.id;
    void prefs.set("lastSession", created.id);
    this.sessions = [created, ...this.sessions];
    return created.id;
  }

  async rename(id: string, title: string): Promise<void> {
    const trimmed = title.trim();
    if (!trimmed) return;
    try {
      unwrap(await commands.renameSession(id, trimmed));
      await this.refresh();
    } catch (error) {
      this.error = String(error);
    }
  }

  async remove(id: string): Promise<void> {
    try {
      unwrap(await commands.deleteSession(id));
      if (this.currentId === id) this.startNew();
      await this.refresh();
    } catch (error) {
      this.error = String(error);
    }
  }
}

export const sessionStore = new SessionStore();
