/**
 * The call trees the view reads: one per turn of the open session, fed by the IPC
 * channel or rebuilt from the session log. Events are queued and folded once per
 * animation frame, so a burst of deltas costs one render; a frame folds for at most
 * FOLD_BUDGET_MS and leaves the rest, in order, to the next frames, so that even a
 * backlog of a hundred thousand events never makes one long task. The trees are
 * mutated in place (cheap), so components read them only through `current`,
 * `shapeOf` and `turnTrees`, which depend on change counters: Svelte re-reads them
 * after every fold (`shapeOf` only after one that started a call).
 */
import { commands, type ApprovalDecision, type CallEvent_Serialize as CallEvent } from "../../bindings";
import { FoldQueue } from "./fold-queue";
import { applyEvent, emptyTree, type CallTree, type TurnTree } from "./model";

/**
 * How long a frame may spend folding events: with Svelte's update, style, layout and
 * paint after it, the frame stays well under the 50 ms that makes a task long.
 */
const FOLD_BUDGET_MS = 8;

const clock = () => performance.now();

class TreeStore {
  /** The session's turns in order, with a label for the turn picker. */
  turns = $state<Array<{ turnId: string; label: string }>>([]);
  selectedTurn = $state<string | null>(null);
  selectedCall = $state<string | null>(null);
  private trees = new Map<string, CallTree>();
  /** Counts the changes to `trees` (folds, resets, dropped turns); the reactive reads below depend on it. */
  private changes = $state(0);
  /** Counts the changes to the trees' shape (a call started, a reset, a dropped turn), for `shapeOf`. */
  private shapes = $state(0);
  private queue = new FoldQueue<[string, CallEvent]>();
  private scheduled = false;

  /** The tree of `turnId` as of the last fold (an empty one if it has none); a reactive read. */
  current(turnId: string): CallTree {
    void this.changes;
    return this.trees.get(turnId) ?? emptyTree();
  }

  /**
   * The tree of `turnId` for what depends only on its calls and their nesting (the
   * display order): a reactive read that changes when a call starts, not with every
   * delta. Read a node's fields through `current`.
   */
  shapeOf(turnId: string): CallTree {
    void this.shapes;
    return this.trees.get(turnId) ?? emptyTree();
  }

  /** Every turn of the session with its tree, in order; a reactive read. */
  get turnTrees(): TurnTree[] {
    void this.changes;
    return this.turns.map((turn) => ({ ...turn, tree: this.trees.get(turn.turnId) ?? emptyTree() }));
  }

  /** Replaces everything with a session's trees (after a replay of its log). */
  reset(trees: Map<string, CallTree>, turns: Array<{ turnId: string; label: string }>): void {
    this.queue.clear();
    this.trees = trees;
    this.turns = turns;
    const last = turns[turns.length - 1]?.turnId ?? null;
    this.select(last, null);
    this.changes++;
    this.shapes++;
  }

  /** Adds a turn (a turn already there, replayed from the log, keeps its tree) and shows it. */
  startTurn(turnId: string, label: string): void {
    if (!this.trees.has(turnId)) this.shapes++;
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
    this.shapes++;
  }

  /** Queues an event of `turnId`; it is folded on the next frame. */
  push(turnId: string, event: CallEvent): void {
    this.queue.push([turnId, event]);
    this.schedule();
  }

  /** Folds every queued event now (a turn has ended: what it says is read from its tree). */
  flush(): void {
    this.fold(Infinity);
  }

  /** One frame's fold: the queued events, oldest first, for FOLD_BUDGET_MS; the rest on the next frame. */
  private foldFrame(): void {
    this.scheduled = false;
    this.fold(clock() + FOLD_BUDGET_MS);
    if (this.queue.pending > 0) this.schedule();
  }

  private fold(deadline: number): void {
    let started = false;
    const folded = this.queue.drain(
      ([turnId, event]) => {
        if (event.type === "call_started") started = true;
        applyEvent(this.treeOf(turnId), event);
      },
      clock,
      deadline,
    );
    if (folded === 0) return;
    this.changes++;
    if (started) this.shapes++;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const schedule =
      typeof requestAnimationFrame === "function"
        ? requestAnimationFrame
        : (callback: () => void) => setTimeout(callback, 16);
    schedule(() => this.foldFrame());
  }

  /** Answers a waiting call's approval request; the tree updates from the events that follow. */
  async answerApproval(turnId: string, callId: string, decision: ApprovalDecision): Promise<boolean> {
    return commands.resolveApproval(turnId, callId, decision);
  }

  /** Answers a remote agent's question (null declines it); the tree updates from the events that follow. */
  async answerQuestion(turnId: string, callId: string, answer: string | null): Promise<boolean> {
    return commands.answerInput(turnId, callId, answer);
  }

  /**
   * Writes turn `turnId` of `sessionId` as JSON where the user picks in the save
   * dialog: what to say (where it went, or why not), or null when it was cancelled.
   */
  async exportTurn(sessionId: string, turnId: string): Promise<string | null> {
    const result = await commands.exportTurn(sessionId, turnId);
    if (result.status === "error") return result.error.message;
    return result.data ? `Saved to ${result.data}` : null;
  }

  /** Sends a message into a running call: null when it was sent, else why not (the call reports it when it takes it). */
  async steerCall(turnId: string, callId: string, message: string): Promise<string | null> {
    const result = await commands.steerCall(turnId, callId, message);
    return result.status === "error" ? result.error.message : null;
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
