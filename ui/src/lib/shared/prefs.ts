/**
 * UI preferences (theme, panel width, last session) in tauri-plugin-store's
 * `prefs.json`. A store that cannot be read never breaks the UI: reads fall back
 * to defaults and failed writes are only logged.
 */
import { load, type Store } from "@tauri-apps/plugin-store";

export interface Prefs {
  theme: "light" | "dark";
  rightWidth: number;
  lastSession: string;
}

let store: Promise<Store | null> | null = null;

function open(): Promise<Store | null> {
  store ??= load("prefs.json", { defaults: {}, autoSave: 200 }).catch((error) => {
    console.warn("preferences unavailable:", error);
    return null;
  });
  return store;
}

export const prefs = {
  async get<K extends keyof Prefs>(key: K): Promise<Prefs[K] | undefined> {
    try {
      return (await (await open())?.get<Prefs[K]>(key)) ?? undefined;
    } catch {
      return undefined;
    }
  },
  async set<K extends keyof Prefs>(key: K, value: Prefs[K]): Promise<void> {
    try {
      await (await open())?.set(key, value);
    } catch (error) {
      console.warn(`could not save preference ${key}:`, error);
    }
  },
};
