/**
 * The calls of MCP clients that wait for the user in sessions other than the open
 * one, as the session flow hears them: reactive, so the window's title, the Calls
 * tab and the notifications follow them (the open session's own waiting calls are
 * in its trees).
 */
import type { WaitingCall } from "./attention";

class OutsideWaiting {
  calls = $state<WaitingCall[]>([]);
}

export const outsideWaiting = new OutsideWaiting();
