/**
 * Rebuilds a chat from its session log: messages, slash commands' notes, each turn's call tree (from every
 * logged event), retracted turns dropped (and interrupted ones another turn resumed), a
 * turn the core found interrupted (its process died) shown as such with what had
 * streamed and what had finished, ready to resume, and one that is still running
 * elsewhere (an MCP client's call) shown streaming. Pure; it lives with the views
 * because it composes two domains (the chat's entries, the tree's calls) from a third's log.
 */
import type { CallEvent_Serialize, InterruptedTurn, SessionRecord } from "../bindings";
import { finishReply, fullAnswer, type ChatEntry } from "../lib/chat/entry";
import { answerOf, applyEvent, emptyTree, markInterrupted, rootOf, type CallTree } from "../lib/tree/model";

export interface ReplayedSession {
  title: string;
  entries: ChatEntry[];
  trees: Map<string, CallTree>;
  /** Turns in order, with a label (the start of the user's message). */
  turns: Array<{ turnId: string; label: string }>;
}

/**
 * Replays `records`; the turns in `running` have not ended yet, and their replies
 * stream on; `interrupted` is what the core says of the turns whose process died.
 */
export function replaySession(
  records: SessionRecord[],
  running: ReadonlySet<string> = new Set(),
  interrupted: InterruptedTurn[] = [],
): ReplayedSession {
  let title = "";
  const entries: ChatEntry[] = [];
  const trees = new Map<string, CallTree>();
  const retracted = new Set<string>();
  const ended = new Set<string>();
  /** Each turn's reply, the first one logged: a session of thousands of turns is not searched once per turn. */
  const replies = new Map<string, ChatEntry>();
  for (const record of records) {
    switch (record.type) {
      case "created":
      case "renamed":
        title = record.title;
        break;
      case "user_message":
        entries.push({
          id: `${record.turn_id}-user`,
          role: "user",
          // As it was typed: a typed handoff's @agent stays in front of the message;
          // an agent picked in the window was not typed (logs before `handoff`: typed).
          content:
            record.agent && (record.handoff ?? true) && !record.text.startsWith(`@${record.agent}`)
              ? `@${record.agent} ${record.text}`
              : record.text,
          agent: null,
          turnId: record.turn_id,
          status: "done",
          error: null,
        });
        entries.push({
          id: `${record.turn_id}-reply`,
          role: "assistant",
          content: "",
          agent: record.agent ?? null,
          turnId: record.turn_id,
          status: "streaming",
          error: null,
        });
        if (!replies.has(record.turn_id)) replies.set(record.turn_id, entries[entries.length - 1]);
        trees.set(record.turn_id, emptyTree());
        break;
      case "event": {
        let tree = trees.get(record.turn_id);
        if (!tree) trees.set(record.turn_id, (tree = emptyTree()));
        // Logged as Rust serialized it: the _Serialize shape.
        applyEvent(tree, record.event as CallEvent_Serialize);
        break;
      }
      case "turn_ended": {
        ended.add(record.turn_id);
        const reply = replies.get(record.turn_id);
        if (reply) {
          const tree = trees.get(record.turn_id);
          reply.content = fullAnswer(record.text, tree ? answerOf(tree).text : "");
          reply.agent = record.answered_by;
          finishReply(reply, record.status, (tree && rootOf(tree)?.error) ?? null);
        }
        break;
      }
      case "retracted":
        retracted.add(record.turn_id);
        break;
      // The turn that resumed an interrupted one stands in its place.
      case "resumed":
        retracted.add(record.of_turn);
        break;
      // A call run again is a turn of its own (its message says which call), not the user's to retry.
      case "rerun":
        for (const entry of entries) if (entry.turnId === record.turn_id) entry.outside = true;
        break;
      case "command_note": {
        const outcome = record.outcome === "error" || record.outcome === "prompt" ? record.outcome : "done";
        entries.push({
          id: `note-${entries.length}`,
          role: "command",
          content: record.text,
          agent: null,
          turnId: null,
          status: "done",
          error: null,
          note: { command: record.command, outcome, text: record.text },
        });
        break;
      }
    }
  }
  const stopped = new Map(interrupted.map((turn) => [turn.turn_id, turn]));
  for (const entry of entries) {
    if (entry.role === "assistant" && entry.turnId && !ended.has(entry.turnId) && !running.has(entry.turnId)) {
      const tree = trees.get(entry.turnId);
      const partial = tree ? answerOf(tree) : { text: "", agent: null };
      entry.content = partial.text;
      entry.agent = partial.agent ?? entry.agent;
      entry.status = "interrupted";
      const turn = stopped.get(entry.turnId);
      entry.error = turn ? interruptedWords(turn) : "This turn did not finish; this is what had arrived.";
      entry.resumable = turn !== undefined;
      if (tree) markInterrupted(tree);
    }
  }
  const kept = entries.filter((entry) => !(entry.turnId && retracted.has(entry.turnId)));
  for (const turnId of retracted) trees.delete(turnId);
  const turns = kept
    .filter((entry) => entry.role === "user" && entry.turnId)
    .map((entry) => ({ turnId: entry.turnId as string, label: entry.content.slice(0, 40) }));
  return { title, entries: kept, trees, turns };
}

/** What the chat says of an interrupted turn: what had finished, what was running. */
export function interruptedWords(turn: InterruptedTurn): string {
  const list = (agents: string[]) => (agents.length ? agents.join(", ") : "nothing");
  const waiting = turn.waiting.map(
    (approval) =>
      ` ${approval.agent} was waiting for your approval (asked by ${approval.asked_by ?? "you"}, depth ${approval.depth}): "${approval.request}"; Resume asks again.`,
  );
  return `The app stopped before this turn finished; this is what had arrived. Finished: ${list(turn.finished)}. Was running: ${list(turn.running)}.${waiting.join("")} Resume runs what was running; what finished is not asked again.`;
}
