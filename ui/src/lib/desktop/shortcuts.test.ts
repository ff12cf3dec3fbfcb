/** Which key press asks for which shortcut, in a text field and out of one. */
import { describe, expect, it } from "vitest";
import { shortcutOf, SHORTCUTS, type KeyPress, type ShortcutAction } from "./shortcuts";

const press = (key: string, modifiers: Partial<KeyPress> = {}): KeyPress => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...modifiers,
});

describe("shortcutOf", () => {
  const cases: Array<[string, KeyPress, boolean, ShortcutAction | null]> = [
    ["Ctrl+N", press("n", { ctrlKey: true }), false, "new-chat"],
    ["⌘N on macOS", press("n", { metaKey: true }), false, "new-chat"],
    ["Ctrl+Shift+N (caps)", press("N", { ctrlKey: true }), false, "new-chat"],
    ["Ctrl+K while typing", press("k", { ctrlKey: true }), true, "search-sessions"],
    ["Ctrl+L", press("l", { ctrlKey: true }), false, "focus-message"],
    ["Ctrl+.", press(".", { ctrlKey: true }), true, "stop-turn"],
    ["Ctrl+,", press(",", { ctrlKey: true }), false, "open-settings"],
    ["Ctrl+E while typing", press("e", { ctrlKey: true }), true, "open-config"],
    ["Ctrl+B while typing", press("b", { ctrlKey: true }), true, "toggle-sessions"],
    ["Ctrl+J", press("j", { ctrlKey: true }), false, "toggle-side-panel"],
    ["F1 while typing", press("F1"), true, "help"],
    ["? outside a text field", press("?"), false, "help"],
    ["? in a text field is a character", press("?"), true, null],
    ["a plain N is a character", press("n"), false, null],
    ["Ctrl+Alt+N is someone else's", press("n", { ctrlKey: true, altKey: true }), false, null],
    ["Ctrl+Q is not ours", press("q", { ctrlKey: true }), false, null],
  ];
  it.each(cases)("%s", (_name, keyPress, typing, expected) => expect(shortcutOf(keyPress, typing)).toBe(expected));
});

describe("SHORTCUTS", () => {
  it("lists every action's keys once", () => {
    const keys = SHORTCUTS.map((shortcut) => shortcut.keys);
    expect(new Set(keys).size).toBe(keys.length);
    for (const listed of ["Ctrl+N", "Ctrl+K", "Ctrl+L", "Ctrl+.", "Ctrl+,", "Ctrl+E", "? or F1", "A", "Shift+A", "D"])
      expect(keys).toContain(listed);
  });
});
