/**
 * Calls run again: the one being asked for (its form open in the details), the
 * one running, and the last comparison of a first run and its re-run, which the
 * calls panel shows until it is closed. The re-run itself is a turn of the session
 * the window follows live: its updates (start, events, end) arrive through the
 * command's channel and go to `follow`, which the window sets (it shows them as it
 * shows any turn the chat did not send).
 */
import { Channel } from "@tauri-apps/api/core";
import {
  commands,
  type RerunOutcome_Serialize as RerunOutcome,
  type TurnUpdate_Deserialize,
  type TurnUpdate_Serialize as TurnUpdate,
} from "../../bindings";

/** Where a re-run's updates go: its session, its turn and the update. */
export type FollowTurn = (sessionId: string, turnId: string, update: TurnUpdate) => void;

class Reruns {
  /** The comparison shown, once a re-run has ended. */
  shown = $state<RerunOutcome | null>(null);
  /** `turn/call` of the call running again, if one is. */
  running = $state<string | null>(null);
  error = $state<string | null>(null);
  /** Shows a running re-run's updates (set once by the window; dropped when unset). */
  follow: FollowTurn = () => {};

  async run(sessionId: string, ofTurn: string, ofCall: string, request: string | null): Promise<void> {
    const turnId = `r${Date.now()}-${Math.random().toString(16).slice(2, 14)}`;
    this.running = `${ofTurn}/${ofCall}`;
    this.error = null;
    try {
      const channel = new Channel<TurnUpdate>();
      channel.onmessage = (update) => this.follow(sessionId, turnId, update);
      // Typed by what Rust serializes, as the chat's channel is.
      const wireChannel = channel as unknown as Channel<TurnUpdate_Deserialize>;
      const result = await commands.rerunCall(sessionId, turnId, ofTurn, ofCall, request, wireChannel);
      if (result.status === "ok") this.shown = result.data;
      else this.error = result.error.message;
    } catch (error) {
      this.error = String(error);
    } finally {
      this.running = null;
    }
  }

  close(): void {
    this.shown = null;
    this.error = null;
  }
}

export const reruns = new Reruns();
