/**
 * What the window does across domains when the user acts on a session or a turn:
 * opening a session replays its log into the chat and the call trees, a new chat
 * empties both, a message streams its calls into the tree store, and taking a turn
 * back drops its tree. The stores stay unaware of each other; this module is the
 * one place that moves them together.
 */
import { chatStore, type TurnSink } from "../lib/chat/state.svelte";
import { sessionStore } from "../lib/sessions/state.svelte";
import { answerOf, rootOf } from "../lib/tree/model";
import { treeStore } from "../lib/tree/state.svelte";
import { replaySession } from "./replay";

/** A turn's events go to the tree store (folded once per frame); its answer is read back from the tree. */
const treeSink: TurnSink = {
  start: (turnId, label) => treeStore.startTurn(turnId, label),
  push: (turnId, event) => treeStore.push(turnId, event),
  end(turnId) {
    treeStore.flush();
    const tree = treeStore.current(turnId);
    return { answer: answerOf(tree).text, rootError: rootOf(tree)?.error ?? null };
  },
};

/** Opens a session: its log replayed into the chat and the trees. Nothing happens while a turn runs. */
export async function openSession(id: string): Promise<void> {
  if (chatStore.busy) return;
  try {
    const log = await sessionStore.read(id);
    const replayed = replaySession(log.records);
    sessionStore.opened(id, log.skipped_lines);
    chatStore.show(id, replayed.entries);
    treeStore.reset(replayed.trees, replayed.turns);
  } catch (error) {
    sessionStore.error = String(error);
  }
}

/** Reopens the session used last, if it still exists. */
export async function restoreLastSession(): Promise<void> {
  const last = await sessionStore.lastUsed();
  if (last) await openSession(last);
}

/** A fresh, empty chat; its session is created when its first message is sent. */
export function startNewChat(): void {
  if (chatStore.busy) return;
  sessionStore.close();
  chatStore.show(null, []);
  treeStore.reset(new Map(), []);
}

/** Deletes a session; if it was the open one, the window moves to a new chat. */
export async function deleteSession(id: string): Promise<void> {
  if (!(await sessionStore.remove(id))) return;
  if (sessionStore.currentId === id) startNewChat();
  await sessionStore.refresh();
}

/** Sends a message in the open session (created, titled after it, if there is none); throws if it cannot start. */
export async function sendMessage(text: string): Promise<void> {
  const sessionId = await sessionStore.ensure(text);
  await chatStore.send(sessionId, text, treeSink);
  void sessionStore.refresh();
}

/** Takes the last exchange back (its tree too) and returns its message, for editing. */
export async function takeBackLast(): Promise<string | null> {
  const last = await chatStore.takeBackLast();
  if (!last) return null;
  treeStore.dropTurn(last.turnId);
  return last.text;
}

/** Takes the last exchange back and sends its message again. */
export async function retryLast(): Promise<void> {
  const text = await takeBackLast();
  if (text && chatStore.sessionId) await chatStore.send(chatStore.sessionId, text, treeSink);
}
