/**
 * Runs a slash command typed in the chat: parsed by `lib/chat/commands`, applied as
 * one edit through the config store (the backend validates and writes it), listed
 * from `explain_tools`, or the agent form opened; the answer is a note in the chat.
 * A view because it moves the chat and the config together. Nothing here reaches a
 * model; each note is kept in the session's log (a chat not started yet keeps its
 * notes until its first message makes the session), so a reopened chat shows it.
 */
import { commands } from "../bindings";
import {
  confirmation,
  describePending,
  globalRows,
  parse,
  toolRows,
  type CommandConfig,
  type Parsed,
  type PendingTool,
} from "../lib/chat/commands";
import type { CommandNote } from "../lib/chat/entry";
import { chatStore } from "../lib/chat/state.svelte";
import { configSheet } from "../lib/config/sheet.svelte";
import { configStore } from "../lib/config/state.svelte";
import { sessionStore } from "../lib/sessions/state.svelte";

/** The notes of a chat not started yet, logged once its session exists (`keepPendingNotes`). */
const pendingNotes: CommandNote[] = [];

/** Shows a note in the chat and keeps it in the session's log (or until there is a session). */
function note(shown: CommandNote): void {
  chatStore.addNote(shown);
  const sessionId = sessionStore.currentId;
  if (sessionId) void sessionStore.logNote(sessionId, shown);
  else pendingNotes.push(shown);
}

/** Logs the notes typed before `sessionId` existed (its first message just made it), in order. */
export async function keepPendingNotes(sessionId: string): Promise<void> {
  for (const pending of pendingNotes.splice(0)) await sessionStore.logNote(sessionId, pending);
}

/** A new chat starts without the old one's unlogged notes. */
export function dropPendingNotes(): void {
  pendingNotes.length = 0;
}

const noConfig: CommandConfig = { agents: [], agent_tools: [] };

/**
 * Runs `text` as a command, or, when `pending` waits for a description, as that
 * description. Returns what waits for the next message (a tool-agent's description), if anything.
 */
export async function runCommand(text: string, pending: PendingTool | null): Promise<PendingTool | null> {
  const config = configStore.state?.config ?? noConfig;
  const parsed = pending ? describePending(pending, text, config) : parse(text, config);
  const command = text.trim();
  try {
    return await answer(command, parsed);
  } catch (error) {
    note({ command, outcome: "error", text: error instanceof Error ? error.message : String(error) });
    return null;
  }
}

async function answer(command: string, parsed: Parsed): Promise<PendingTool | null> {
  switch (parsed.kind) {
    case "error":
      note({ command, outcome: "error", text: parsed.message });
      return null;
    case "cancelled":
      note({ command, outcome: "done", text: parsed.message });
      return null;
    case "describe":
      note({ command, outcome: "prompt", text: parsed.prompt });
      return parsed.pending;
    case "help":
      note({ command, outcome: "done", text: parsed.text });
      return null;
    case "open-config":
      configSheet.open({ form: "new" });
      note({ command, outcome: "done", text: "Opened a new agent's form." });
      return null;
    case "list":
      await list(command, parsed.agent);
      return null;
    case "edit":
      await edit(command, parsed.edit);
      return null;
  }
}

async function list(command: string, agent: string | null): Promise<void> {
  if (agent === null) {
    const rows = globalRows(configStore.state?.config ?? noConfig);
    const text = rows.length > 0 ? "Global tool-agents (agent_tools):" : "No global tool-agents.";
    note({ command, outcome: "done", text, rows });
    return;
  }
  const explained = await commands.explainTools(agent);
  if (explained.status === "error") {
    note({ command, outcome: "error", text: explained.error.message });
    return;
  }
  const rows = toolRows(explained.data.entries);
  const text = rows.length > 0 ? `Tool-agents of ${agent}:` : `${agent} has no tool-agents.`;
  note({ command, outcome: "done", text, rows });
}

async function edit(command: string, change: Parameters<typeof configStore.edit>[0]): Promise<void> {
  let result = await configStore.edit(change);
  // A command is one small change: made again on the file as it is now, it means what the user meant.
  if (result.kind === "conflict" && result.theirs.version)
    result = await configStore.editAgainst(result.theirs.version, change);
  if (result.kind === "applied") {
    note({ command, outcome: "done", text: confirmation(change, result.state.config) });
  } else if (result.kind === "error") {
    note({ command, outcome: "error", text: result.error.message });
  } else {
    note({
      command,
      outcome: "error",
      text: "The config file changed on disk while the command ran; nothing was written. Run it again.",
    });
  }
}
