/**
 * UI preferences (theme, panel width, last session), kept by the Rust side in the
 * app's data folder: the window asks for them and sends changes, and never names a
 * file. Preferences that cannot be read never break the UI: reads fall back to
 * defaults and failed writes are only logged.
 */
import { commands, type Preferences_Serialize as Preferences } from "../../bindings";

export type Prefs = Required<Preferences>;

export const prefs = {
  async get<K extends keyof Prefs>(key: K): Promise<Prefs[K] | undefined> {
    try {
      const saved: Preferences = await commands.getPreferences();
      return saved[key] as Prefs[K] | undefined;
    } catch {
      return undefined;
    }
  },
  async set<K extends keyof Prefs>(key: K, value: Prefs[K]): Promise<void> {
    try {
      const result = await commands.setPreferences({ [key]: value });
      if (result.status === "error") console.warn(`could not save preference ${key}:`, result.error.message);
    } catch (error) {
      console.warn(`could not save preference ${key}:`, error);
    }
  },
};
