/**
 * The call trees the view reads: one per turn of the open session, fed by the IPC
 * channel or rebuilt from the session log. Events are queued and folded once per
 * animation frame, so a burst of deltas costs one render. The trees are mutated in
 * place (cheap), so components read them only through `current` and `turnTrees`,
 * which depend on a change counter: Svelte re-reads them after every fold.
 */
import { commands, type ApprovalDecision, type CallEvent_Serialize as CallEvent } from "../../bindings";
import { applyEvent, emptyTree, type CallTree, type TurnTree } from "./model";

class TreeStore {
  /** The session's turns in order, with a label for the turn picker. */
  turns = $state<Array<{ turnId: string; label: string }>>([]);
  selectedTurn = $state<string | null>(null);
  selectedCall = $state<string | null>(null);
  private trees = new Map<string, CallTree>();
  /** Counts the changes to `trees` (folds, resets, dropped turns); the reactive reads below depend on it. */
  private changes = $state(0);
  private queue: Array<[string, CallEvent]> = [];
  private scheduled = false;

  /** The tree of `turnId` as of the last fold (an empty one if it has none); a reactive read. */
  current(turnId: string): CallTree {
    void this.changes;
    return this.trees.get(turnId) ?? emptyTree();
  }

  /** Every turn of the session with its tree, in order; a reactive read. */
  get turnTrees(): TurnTree[] {
    void this.changes;
    return this.turns.map((turn) => ({ ...turn, tree: this.trees.get(turn.turnId) ?? emptyTree() }));
  }

  /** Replaces everything with a session's trees (after a replay of its log). */
  reset(trees: Map<string, CallTree>, turns: Array<{ turnId: string; label: string }>): void {
    this.queue = [];
    this.trees = trees;
    this.turns = turns;
    const last = turns[turns.length - 1]?.turnId ?? null;
    this.select(last, null);
    this.changes++;
  }

  /** Adds a turn (a turn already there, replayed from the log, keeps its tree) and shows it. */
  startTurn(turnId: string, label: string): void {
    this.treeOf(turnId);
    if (!this.turns.some((turn) => turn.turnId === turnId))
      this.turns = [...this.turns, { turnId, label: label.slice(0, 40) }];
    this.select(turnId, null);
  }

  dropTurn(turnId: string): void {
    this.trees.delete(turnId);
    this.turns = this.turns.filter((turn) => turn.turnId !== turnId);
    if (this.selectedTurn === turnId) this.select(this.turns[this.turns.length - 1]?.turnId ?? null, null);
    this.changes++;
  }

  /** Queues an event of `turnId`; it is folded on the next frame. */
  push(turnId: string, event: CallEvent): void {
    this.queue.push([turnId, event]);
    if (!this.scheduled) {
      this.scheduled = true;
      const schedule =
        typeof requestAnimationFrame === "function"
          ? requestAnimationFrame
          : (callback: () => void) => setTimeout(callback, 16);
      schedule(() => this.flush());
    }
  }

  /** Folds every queued event now. */
  flush(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    for (const [turnId, event] of this.queue) applyEvent(this.treeOf(turnId), event);
    this.queue = [];
    this.changes++;
  }

  /** Answers a waiting call's approval request; the tree updates from the events that follow. */
  async answerApproval(turnId: string, callId: string, decision: ApprovalDecision): Promise<boolean> {
    return commands.resolveApproval(turnId, callId, decision);
  }

  /** Answers a remote agent's question (null declines it); the tree updates from the events that follow. */
  async answerQuestion(turnId: string, callId: string, answer: string | null): Promise<boolean> {
    return commands.answerInput(turnId, callId, answer);
  }

  async cancelCall(turnId: string, callId: string): Promise<boolean> {
    return commands.cancelCall(turnId, callId);
  }

  select(turnId: string | null, callId: string | null): void {
    this.selectedTurn = turnId;
    this.selectedCall = callId;
  }

  private treeOf(turnId: string): CallTree {
    let tree = this.trees.get(turnId);
    if (!tree) {
      tree = emptyTree();
      this.trees.set(turnId, tree);
    }
    return tree;
  }
}

export const treeStore = new TreeStore();
