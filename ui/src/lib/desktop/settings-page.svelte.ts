/**
 * The settings page: whether it is open, and on which section. It takes the place
 * of the chat and the side panel (the sessions stay) until the user goes back to
 * the chat, opens a session or a call, or presses Escape.
 */

export type SettingsSection = "general" | "appearance" | "agents" | "mcp" | "traces" | "shortcuts";

/** The sections, in the order the page lists them, with their names. */
export const SETTINGS_SECTIONS: Array<[SettingsSection, string]> = [
  ["general", "General"],
  ["appearance", "Appearance"],
  ["agents", "Agents & tools"],
  ["mcp", "MCP"],
  ["traces", "Traces"],
  ["shortcuts", "Shortcuts"],
];

class SettingsPage {
  /** The section shown, or null while the page is closed. */
  section = $state<SettingsSection | null>(null);
  /** The section the page opens on next (the last one looked at). */
  #last: SettingsSection = "general";

  get isOpen(): boolean {
    return this.section !== null;
  }

  open(section: SettingsSection = this.#last): void {
    this.section = section;
    this.#last = section;
  }

  close(): void {
    this.section = null;
  }
}

export const settingsPage = new SettingsPage();
