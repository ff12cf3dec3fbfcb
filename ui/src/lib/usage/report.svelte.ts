/**
 * The delegation report across sessions, as the Usage tab shows it: the range
 * picked (UTC days, either end open), the last report read for it, and why it
 * could not be read. Read when asked (the tab opened, the range changed, Refresh).
 */
import { commands, type DelegationReport_Serialize as DelegationReport } from "../../bindings";

class DelegationReportWatch {
  since = $state("");
  until = $state("");
  report = $state<DelegationReport | null>(null);
  error = $state<string | null>(null);
  loading = $state(false);
  #reads = 0;

  async load(): Promise<void> {
    const read = ++this.#reads;
    this.loading = true;
    try {
      const result = await commands.delegationReport(this.since || null, this.until || null);
      if (read !== this.#reads) return;
      if (result.status === "ok") {
        this.report = result.data;
        this.error = null;
      } else this.error = result.error.message;
    } catch (error) {
      if (read === this.#reads) this.error = String(error);
    } finally {
      if (read === this.#reads) this.loading = false;
    }
  }
}

export const delegationReport = new DelegationReportWatch();
