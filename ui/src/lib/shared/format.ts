/**
 * How numbers read in the window: token counts, durations and costs. Pure and
 * domain-free, so the chat, the tree and the usage panel format alike.
 */

/** A token count, shortened to thousands from 10,000; a dash when there is none yet. */
export function formatTokens(tokens: number | null | undefined): string {
  if (tokens === null || tokens === undefined) return "–";
  return tokens >= 10_000 ? `${(tokens / 1000).toFixed(1)}k` : String(tokens);
}

/** A duration in milliseconds, in the largest unit that reads well. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A cost in dollars: four decimals below a dollar, two above; a dash when unpriced. */
export function formatCost(cost: number | null): string {
  if (cost === null) return "–";
  return cost >= 1 ? `$${cost.toFixed(2)}` : `$${cost.toFixed(4)}`;
}

/**
 * The formatter of `formatClockTime`, made once as the window loads: `toLocaleTimeString`
 * builds one on every call, and the first one built (loading the locale's data) took
 * 15 to 20 ms of the frame that first showed a call's details.
 */
const clockFormat = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "numeric", second: "numeric" });

/** A moment's time of day as the user's locale writes it (what `Date.toLocaleTimeString` says). */
export function formatClockTime(ms: number): string {
  return clockFormat.format(ms);
}
