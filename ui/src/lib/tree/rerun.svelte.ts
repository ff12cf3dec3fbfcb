/**
 * Calls run again: the one being asked for (its form open in the details), the
 * one running, and the last comparison of a first run and its re-run, which the
 * calls panel shows until it is closed. The re-run itself is a turn of the session
 * the window follows live (its events arrive as an outside call's do).
 */
import { commands, type RerunOutcome_Serialize as RerunOutcome } from "../../bindings";

class Reruns {
  /** The comparison shown, once a re-run has ended. */
  shown = $state<RerunOutcome | null>(null);
  /** `turn/call` of the call running again, if one is. */
  running = $state<string | null>(null);
  error = $state<string | null>(null);

  async run(sessionId: string, ofTurn: string, ofCall: string, request: string | null): Promise<void> {
    const turnId = `r${Date.now()}-${Math.random().toString(16).slice(2, 14)}`;
    this.running = `${ofTurn}/${ofCall}`;
    this.error = null;
    try {
      const result = await commands.rerunCall(sessionId, turnId, ofTurn, ofCall, request);
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
