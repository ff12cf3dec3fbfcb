/**
 * API keys in the system keyring, by entry (an HTTP agent's `api_key_keyring`):
 * whether one is stored, never the key. Shared: the agent form and the setup
 * wizard both store keys. A key goes from the field to `store` and on to Rust;
 * nothing here keeps it.
 */
import { commands } from "../../bindings";

class StoredKeys {
  stored = $state<Record<string, boolean>>({});
  /** Why the keyring could not be asked, by entry (no Secret Service running, say). */
  problems = $state<Record<string, string>>({});

  async check(entry: string): Promise<void> {
    if (entry === "") return;
    const result = await commands.apiKeyStored(entry);
    if (result.status === "ok") {
      this.stored[entry] = result.data;
      delete this.problems[entry];
    } else this.problems[entry] = result.error.message;
  }

  /** Stores `key` as `entry`; the keyring's error when it refused, null when stored. */
  async store(entry: string, key: string): Promise<string | null> {
    const result = await commands.storeApiKey(entry, key);
    if (result.status === "error") return result.error.message;
    this.stored[entry] = true;
    delete this.problems[entry];
    return null;
  }

  /** Deletes the key stored as `entry`; the keyring's error, or null. */
  async remove(entry: string): Promise<string | null> {
    const result = await commands.deleteApiKey(entry);
    if (result.status === "error") return result.error.message;
    this.stored[entry] = false;
    return null;
  }
}

export const storedKeys = new StoredKeys();
