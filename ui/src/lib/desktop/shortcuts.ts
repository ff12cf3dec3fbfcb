/**
 * The window's keyboard shortcuts: which key does what (the help sheet lists this
 * table), and which action a key press asks for. Ctrl on Linux and Windows, ⌘ on
 * macOS. Pure; the window carries the actions out.
 */

export type ShortcutAction =
  | "new-chat"
  | "search-sessions"
  | "stop-turn"
  | "focus-message"
  | "open-settings"
  | "open-config"
  | "toggle-sessions"
  | "toggle-side-panel"
  | "help";

export interface Shortcut {
  keys: string;
  does: string;
}

/** Every shortcut, as the help sheet shows them (the tree's own keys last). */
export const SHORTCUTS: Shortcut[] = [
  { keys: "Ctrl+N", does: "Start a new chat" },
  { keys: "Ctrl+K", does: "Search the sessions" },
  { keys: "Ctrl+L", does: "Focus the message box" },
  { keys: "Ctrl+.", does: "Stop the running turn" },
  { keys: "Ctrl+,", does: "Open the settings" },
  { keys: "Ctrl+E", does: "Edit the agents and tools" },
  { keys: "Escape", does: "Close the settings (back to the chat)" },
  { keys: "Ctrl+B", does: "Show or hide the sessions" },
  { keys: "Ctrl+J", does: "Show or hide the side panel (calls and usage)" },
  { keys: "? or F1", does: "Show these shortcuts" },
  { keys: "A", does: "Approve the focused call in the tree once" },
  { keys: "Shift+A", does: "Approve the focused call for the rest of the session" },
  { keys: "D", does: "Deny the focused call" },
  { keys: "↑ ↓ ← → Enter", does: "Move in the call tree, fold, open a call's details" },
];

/** The parts of a key press that choose a shortcut. */
export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
}

/**
 * The action a key press asks for, or null. `typing` says the focus is in a text
 * field, where a plain "?" is a character, not a request for help.
 */
export function shortcutOf(press: KeyPress, typing: boolean): ShortcutAction | null {
  if (press.key === "F1") return "help";
  const command = (press.ctrlKey || press.metaKey) && !press.altKey;
  if (!command) return press.key === "?" && !typing && !press.altKey ? "help" : null;
  switch (press.key.toLowerCase()) {
    case "n":
      return "new-chat";
    case "k":
      return "search-sessions";
    case "l":
      return "focus-message";
    case ".":
      return "stop-turn";
    case ",":
      return "open-settings";
    case "e":
      return "open-config";
    case "b":
      return "toggle-sessions";
    case "j":
      return "toggle-side-panel";
    default:
      return null;
  }
}

/** Whether an element takes typed text (a shortcut made of a plain character must leave it alone). */
export function isTextField(element: Element | null): boolean {
  if (!element) return false;
  const tag = element.tagName;
  return (
    tag === "TEXTAREA" ||
    tag === "SELECT" ||
    (tag === "INPUT" && (element as HTMLInputElement).type !== "checkbox") ||
    (element as HTMLElement).isContentEditable === true
  );
}
