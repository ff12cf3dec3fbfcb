/**
 * Which of the window's side panels show: the sessions and the side panel (calls,
 * usage) fold on request (a header button, Ctrl+B, Ctrl+J); below
 * `FOLD_WIDTH` the sessions fold by themselves until asked for, so the chat keeps
 * room to read and write in. A choice holds until the next one (or a restart).
 */

/** Below this window width the sessions fold unless the user opened them. */
export const FOLD_WIDTH = 1100;

class Layout {
  /** The window's width (bound to it by the shell). */
  width = $state(typeof window === "undefined" ? 1280 : window.innerWidth);
  #sessions = $state<boolean | null>(null);
  #sidePanel = $state<boolean | null>(null);

  get sessionsShown(): boolean {
    return this.#sessions ?? this.width >= FOLD_WIDTH;
  }

  get sidePanelShown(): boolean {
    return this.#sidePanel ?? true;
  }

  toggleSessions(): void {
    this.#sessions = !this.sessionsShown;
  }

  toggleSidePanel(): void {
    this.#sidePanel = !this.sidePanelShown;
  }

  /** A call was picked (in the chat, by a notification): the side panel shows it. */
  showSidePanel(): void {
    this.#sidePanel = true;
  }
}

export const layout = new Layout();
