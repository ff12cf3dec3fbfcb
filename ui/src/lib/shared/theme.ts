/**
 * The theme the window shows: the one the user picked, or, until they pick one (or
 * after they choose to follow the system again), the system's light or dark setting.
 */
import type { Theme } from "../../bindings";

export type Shown = "light" | "dark";

export function shownTheme(choice: Theme | undefined, systemIsDark: boolean): Shown {
  if (choice === "light" || choice === "dark") return choice;
  return systemIsDark ? "dark" : "light";
}
