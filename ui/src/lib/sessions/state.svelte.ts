/**
 * The session list of the sidebar and which session is open: list, search, create,
 * read a session's log, rename, delete, remember the last one used, and a note per
 * session row (an outside call running in it). What opening
 * a session does to the chat and the trees is the view's business (views/session-flow).
 */
import { commands, type OpenedSession_Serialize as OpenedSession, type SessionSummary } from "../../bindings";
import { prefs } from "../shared/prefs";

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
  /** A short line shown on a session's row, by session id (what an MCP client's call in it is doing). */
  notes = $state<Record<string, string>>({});

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

  /** Refreshes the list and names the last session used, if it still exists. */
  async lastUsed(): Promise<string | null> {
    await this.refresh();
    const last = await prefs.get("lastSession");
    return typeof last === "string" && this.sessions.some((session) => session.id === last) ? last : null;
  }

  /** A session's log as stored, with its interrupted turns; throws when it cannot be read. */
  async read(id: string): Promise<OpenedSession> {
    return unwrap(await commands.loadSession(id));
  }

  /** Marks `id` as the open session (and the one to reopen next time); says so if its log had damaged lines. */
  opened(id: string, skippedLines: number): void {
    this.currentId = id;
    // "Exported to …" is news about the export just made, not a lasting state.
    this.exported = null;
    void prefs.set("lastSession", id);
    this.error = skippedLines > 0 ? `${skippedLines} damaged line(s) of this session's log were skipped` : null;
  }

  /** Sets (or, with null, clears) the note on a session's row. */
  note(id: string, text: string | null): void {
    if ((this.notes[id] ?? null) === text) return;
    const { [id]: _previous, ...others } = this.notes;
    this.notes = text === null ? others : { ...others, [id]: text };
  }

  /** No session is open: the next message creates one. */
  close(): void {
    this.currentId = null;
    this.exported = null;
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

  /** Keeps a slash command's note in session `id`'s log (a failure is only said in the console: the note is shown). */
  async logNote(id: string, note: { command: string; outcome: string; text: string }): Promise<void> {
    try {
      const result = await commands.logCommandNote(id, note.command, note.outcome, note.text);
      if (result.status === "error") console.warn("could not keep a command's note:", result.error.message);
    } catch (error) {
      console.warn("could not keep a command's note:", error);
    }
  }

  /** Where the last export was written ("" when its dialog was cancelled), until another session opens or a new chat starts. */
  exported = $state<{ id: string; path: string } | null>(null);

  /** Writes a session as Markdown where the user picks in the save dialog. */
  async exportMarkdown(id: string): Promise<void> {
    try {
      const path = unwrap(await commands.exportSessionMarkdown(id));
      this.exported = { id, path: path ?? "" };
    } catch (error) {
      this.error = String(error);
    }
  }

  /** Deletes a session's log; false, with the error shown, when that failed. */
  async remove(id: string): Promise<boolean> {
    try {
      unwrap(await commands.deleteSession(id));
      return true;
    } catch (error) {
      this.error = String(error);
      return false;
    }
  }
}

export const sessionStore = new SessionStore();
