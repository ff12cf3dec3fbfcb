/**
 * What the window does across domains when the user acts on a session or a turn:
 * opening a session replays its log into the chat and the call trees, a new chat
 * empties both, a message streams its calls into the tree store, and taking a turn
 * back drops its tree; a turn the chat did not send (an MCP client's call, heard as
 * an `outside-call` event, or a re-run the user started, through its command's
 * channel: the same `TurnUpdate`s, keyed by turn) streams into the chat and the
 * tree when its session is open, and is a note on the session's row when it is not
 * (and, while it waits for the user, one of the waiting calls the window counts); a clicked
 * notification shows its call. The stores stay unaware of each other; this module is
 * the one place that moves them together.
 */
import { events, type OutsideCall_Serialize as OutsideCall } from "../bindings";
import { reruns } from "../lib/tree/rerun.svelte";
import { chatAgents } from "../lib/chat/chat-agents.svelte";
import { chatStore, type TurnSink } from "../lib/chat/state.svelte";
import { configStore } from "../lib/config/state.svelte";
import { sessionStore } from "../lib/sessions/state.svelte";
import { answerOf, rootOf } from "../lib/tree/model";
import { treeStore } from "../lib/tree/state.svelte";
import { followWaiting, forgetTurn, type WaitingCall } from "./attention";
import { hearCall, isUnshown, runningNote, runningTurns, withHeardCalls, type HeardCalls } from "./outside-calls";
import { replaySession } from "./replay";
import { dropPendingNotes, keepPendingNotes } from "./slash-commands";
import { outsideWaiting } from "./waiting.svelte";

/** The turns of the user's that have shown their first event (the sidebar was refreshed then). */
const countedTurns = new Set<string>();

/**
 * A turn's events go to the tree store (folded once per frame); its answer is read
 * back from the tree. Its first event refreshes the sidebar: the Rust side logs the
 * message before any event, so the session's count of turns includes the running one.
 */
const treeSink: TurnSink = {
  start: (turnId, label) => treeStore.startTurn(turnId, label),
  push(turnId, event) {
    if (!countedTurns.has(turnId)) {
      countedTurns.add(turnId);
      void sessionStore.refresh();
    }
    treeStore.push(turnId, event);
  },
  end(turnId) {
    countedTurns.delete(turnId);
    treeStore.flush();
    const tree = treeStore.current(turnId);
    return { answer: answerOf(tree).text, rootError: rootOf(tree)?.error ?? null };
  },
};

/** The outside calls the window has heard of and that have not ended (or whose session is being opened). */
const heardCalls: HeardCalls = new Map();
/** The sessions being opened: their log is being read, so the calls that end meanwhile are kept until it is replayed. */
const opening = new Set<string>();
/** The outside calls that wait for the user (an approval, a question), by turn and call. */
const waitingOutside = new Map<string, WaitingCall>();

/**
 * Opens a session: its log replayed into the chat and the trees, with what the
 * window heard of its outside calls that the log did not hold yet; a call still
 * running streams on. Nothing happens while a turn of the user's runs.
 */
export async function openSession(id: string): Promise<void> {
  if (chatStore.busy) return;
  opening.add(id);
  try {
    const log = await sessionStore.read(id);
    const records = withHeardCalls(log.records, heardCalls, id);
    const replayed = replaySession(records, runningTurns(heardCalls, id), log.interrupted);
    sessionStore.opened(id, log.skipped_lines);
    chatStore.show(id, replayed.entries);
    treeStore.reset(replayed.trees, replayed.turns);
    for (const [turnId, call] of heardCalls) {
      if (call.sessionId === id) call.shownSeq = replayed.trees.get(turnId)?.lastSeq ?? 0;
    }
  } catch (error) {
    sessionStore.error = String(error);
  } finally {
    opening.delete(id);
    forgetEndedCalls(id);
  }
}

/**
 * Follows the turns the chat does not send, for as long as the window lives: the
 * calls MCP clients make and the re-runs the user starts. Call once, at start.
 */
export async function followOutsideCalls(): Promise<() => void> {
  reruns.follow = (sessionId, turnId, update) => followTurn({ session_id: sessionId, turn_id: turnId, update });
  return events.outsideCall.listen(({ payload }) => followTurn(payload));
}

/** One update of a turn the chat did not send: into the chat and the tree if its session is open, else a note on its row. */
function followTurn(outside: OutsideCall): void {
  const turnId = outside.turn_id;
  const call = hearCall(heardCalls, outside, Date.now());
  const isOpen = sessionStore.currentId === outside.session_id;
  const update = outside.update;
  // The first the window hears of a call is its start, or (when the window opened
  // while it ran) one of its events: either way it joins the open chat and tree. A
  // tree replayed from a log read just now may hold some of its events already.
  const firstHeard = call.records.length === 1;
  if (isOpen && firstHeard) {
    const agent = update.phase === "started" ? update.agent : update.phase === "event" ? update.event.agent : "";
    chatStore.showOutsideTurn(turnId, call.line, agent);
    treeStore.startTurn(turnId, call.line);
    call.shownSeq = treeStore.current(turnId).lastSeq;
  }
  switch (update.phase) {
    case "started":
      void sessionStore.refresh();
      break;
    case "event":
      if (isOpen && isUnshown(call, update.event)) treeStore.push(turnId, update.event);
      if (followWaiting(waitingOutside, outside.session_id, turnId, update.event))
        outsideWaiting.calls = [...waitingOutside.values()];
      break;
    case "finished":
      if (forgetTurn(waitingOutside, turnId)) outsideWaiting.calls = [...waitingOutside.values()];
      if (isOpen) {
        treeStore.flush();
        const tree = treeStore.current(turnId);
        const streamed = { answer: answerOf(tree).text, rootError: rootOf(tree)?.error ?? null };
        chatStore.finishOutsideTurn(turnId, update, streamed);
      }
      forgetEndedCalls(outside.session_id);
      void sessionStore.refresh();
      break;
  }
  sessionStore.note(outside.session_id, runningNote(heardCalls, outside.session_id));
}

/** Drops the ended calls of a session, unless it is being opened (its log may not hold their end yet). */
function forgetEndedCalls(sessionId: string): void {
  if (opening.has(sessionId)) return;
  for (const [turnId, call] of heardCalls) if (call.sessionId === sessionId && call.ended) heardCalls.delete(turnId);
}

/**
 * Shows a call the user is asked about (a clicked notification): its session opened
 * if another is open (not while a turn of the user's runs), its turn and the call
 * selected in the Calls tab.
 */
export async function showCall(target: { sessionId?: string; turnId?: string; callId?: string }): Promise<void> {
  const { sessionId, turnId, callId } = target;
  if (!turnId || !callId) return;
  if (sessionId && sessionId !== sessionStore.currentId) {
    if (chatStore.busy) return;
    await openSession(sessionId);
  }
  if (treeStore.turns.some((turn) => turn.turnId === turnId)) treeStore.select(turnId, callId);
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
  dropPendingNotes();
  chatStore.show(null, []);
  treeStore.reset(new Map(), []);
}

/** Deletes a session; if it was the open one, the window moves to a new chat. */
export async function deleteSession(id: string): Promise<void> {
  if (!(await sessionStore.remove(id))) return;
  chatAgents.forget(id);
  if (sessionStore.currentId === id) startNewChat();
  await sessionStore.refresh();
}

/** Sends a message in the open session (created, titled after it, if there is none); throws if it cannot start. */
export async function sendMessage(text: string): Promise<void> {
  const sessionId = await sessionStore.ensure(text);
  chatAgents.adopt(sessionId);
  await keepPendingNotes(sessionId);
  await chatStore.send(sessionId, text, treeSink, pickedAgent(sessionId));
  void sessionStore.refresh();
}

/** The agent picked for a chat, while it is configured (null: the primary answers). */
export function pickedAgent(sessionId: string | null): string | null {
  const agents = (configStore.state?.config.agents ?? []).map((agent) => agent.name);
  return chatAgents.effective(sessionId, agents);
}

/**
 * Resumes an interrupted turn of the open session: its entries and tree give way
 * to the new turn, which streams like a sent one (what had finished is not asked again).
 */
export async function resumeTurn(ofTurn: string): Promise<void> {
  const sessionId = chatStore.sessionId;
  const message = chatStore.entries.find((entry) => entry.turnId === ofTurn && entry.role === "user");
  const reply = chatStore.entries.find((entry) => entry.turnId === ofTurn && entry.role === "assistant");
  if (!sessionId || !message || chatStore.busy) return;
  treeStore.dropTurn(ofTurn);
  await chatStore.resume(sessionId, ofTurn, message.content, reply?.agent ?? null, treeSink);
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
  if (text && chatStore.sessionId)
    await chatStore.send(chatStore.sessionId, text, treeSink, pickedAgent(chatStore.sessionId));
}
