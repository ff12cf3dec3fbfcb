/**
 * The setup wizard's state: the backend's discovery and a hand-added server's
 * probe, which the wizard asks for, and whether the wizard is open.
 */
import { commands, type LocalServer, type SetupDiscovery_Serialize as SetupDiscovery } from "../../bindings";

/** The local servers and command-line agents the wizard offers, or why they could not be looked for. */
export async function discoverSetup(): Promise<{ ok: true; found: SetupDiscovery } | { ok: false; message: string }> {
  try {
    const result = await commands.discoverSetup();
    return result.status === "ok" ? { ok: true, found: result.data } : { ok: false, message: result.error.message };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** A server added by its URL, with the models it lists, or why it cannot be used. */
export async function probeServer(
  url: string,
): Promise<{ ok: true; server: LocalServer } | { ok: false; message: string }> {
  try {
    const result = await commands.testConnection({ name: "setup-test", provider: "local", url });
    if (result.status === "error") return { ok: false, message: result.error.message };
    if (result.data.models.length === 0)
      return {
        ok: false,
        message:
          result.data.steps
            .filter((attempt) => !attempt.ok)
            .map((attempt) => attempt.detail)
            .join(" ") || `${url}/models lists no models.`,
      };
    return { ok: true, server: { kind: "Server", url, models: result.data.models } };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Whether the setup wizard is open. It opens by itself once, on the first start
 * (the app has just written the demo config), and whenever a "Run setup…" button
 * calls `setupWizard.open()`.
 */
class SetupWizardState {
  isOpen = $state(false);
  /** Whether the wizard was ever offered by itself, so that it is offered once. */
  private offeredOnFirstStart = false;

  open(): void {
    this.isOpen = true;
  }

  close(): void {
    this.isOpen = false;
  }

  /** Opens the wizard when the config is the demo one the app just wrote, once per run. */
  offerOnFirstStart(firstStart: boolean): void {
    if (!firstStart || this.offeredOnFirstStart) return;
    this.offeredOnFirstStart = true;
    this.isOpen = true;
  }
}

export const setupWizard = new SetupWizardState();
