/**
 * Whether the Agents & tools sheet is open, and on what: one store the window, the
 * settings, the shortcuts and the chat's `/agent add` all open it through (no
 * window event to listen for).
 */
import type { ConfigStart } from "./ConfigSheet.svelte";

class ConfigSheetState {
  /** What the open sheet started on; null while it is closed. */
  start = $state<ConfigStart | null>(null);

  open(start: ConfigStart): void {
    this.start = start;
  }

  close(): void {
    this.start = null;
  }
}

export const configSheet = new ConfigSheetState();
