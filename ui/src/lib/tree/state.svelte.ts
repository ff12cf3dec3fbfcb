/**
 * The call trees the view reads: one per turn of the open session, fed by the IPC
 * channel or rebuilt from the session log. Events are queued and folded once per
 * animation frame, so a burst of deltas costs one render; `version` tells the
 * view that something changed.
 */
import { commands, type ApprovalDecision, type CallEvent_Serialize as CallEvent } from "../../bindings";
import { applyEvent, emptyTree, type CallTree } from "./model";

class TreeStore {
  trees = new Map<string, CallTree>();
  /** The session's turns in order, with a label for the turn picker. */
  turns = $state<Array<{ turnId: string; label: string }>>([]);
  version = $state(0);
  selectedTurn = $state<string | null>(null);
  selectedCall = $state<string | null>(null);
  private queue: Array<[string, CallEvent]> = [];
  private scheduled = false;

  tree(turnId: string): CallTree {
    let tree = this.trees.get(turnId);
    if (!tree) {
      tree = emptyTree();
      this.trees.set(turnId, tree);
    }
    return tree;
  }

  /** Replaces everything with a session's trees (after a replay of its log). */
  reset(trees: Map<string, CallTree>, turns: Array<{ turnId: string; label: string }>): void {
    this.queue = [];
    this.trees = trees;
    this.turns = turns;
    const last = turns[turns.length - 1]?.turnId ?? null;
    this.select(last, null);
    this.version++;
  }

  startTurn(turnId: string, label: string): void {
    this.tree(turnId);
    this.turns = [...this.turns, { turnId, label: label.slice(0, 40) }];
    this.select(turnId, null);
  }

  dropTurn(turnId: string): void {
    this.trees.delete(turnId);
    this.turns = this.turns.filter((turn) => turn.turnId !== turnId);
    if (this.selectedTurn === turnId) this.select(this.turns[this.turns.length - 1]?.turnId ?? null, null);
    this.version++;
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
    for (const [turnId, event] of this.queue) applyEvent(this.tree(turnId), event);
    this.queue = [];
    this.version++;
  }

  /** Answers a waiting call's approval request; the tree updates from the events that follow. */
  async answerApproval(turnId: string, callId: string, decision: ApprovalDecision): Promise<boolean> {
    return commands.resolveApproval(turnId, callId, decision);
  }

  async cancelCall(turnId: string, callId: string): Promise<boolean> {
    return commands.cancelCall(turnId, callId);
  }

  select(turnId: string | null, callId: string | null): void {
    this.selectedTurn = turnId;
    this.selectedCall = callId;
  }
}

export const treeStore = new TreeStore();
