/**
 * The window's theme: the user's pick (System, Light or Dark), kept in the
 * preferences, and the system's own setting, followed as it changes. The header's
 * select and Settings → Appearance both read and set it here.
 */
import type { Theme } from "../../bindings";
import { prefs } from "../shared/prefs";
import { shownTheme, type Shown } from "../shared/theme";

class Appearance {
  /** The user's pick; "system" (the default) follows the system's setting as it changes. */
  choice = $state<Theme>("system");
  systemIsDark = $state(false);

  /** The theme shown now. */
  get shown(): Shown {
    return shownTheme(this.choice, this.systemIsDark);
  }

  /** Reads the saved pick and follows the system's setting; the returned function stops following. */
  follow(): () => void {
    void prefs.get("theme").then((saved) => saved && (this.choice = saved));
    const system = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
    this.systemIsDark = system?.matches ?? false;
    const changed = (event: MediaQueryListEvent) => (this.systemIsDark = event.matches);
    system?.addEventListener("change", changed);
    return () => system?.removeEventListener("change", changed);
  }

  /** A pick of the theme, kept; it stays until the user follows the system again. */
  pick(choice: Theme): void {
    this.choice = choice;
    void prefs.set("theme", choice);
  }
}

export const appearance = new Appearance();
