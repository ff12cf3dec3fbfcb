/**
 * The delegation report's words and series (pure; tested beside it): whether a
 * primary's delegating turns paid, in a sentence; how a tool-agent's calls ended; and the calls and tokens of all
 * tool-agents per day, for the chart over time.
 */
import type {
  DelegationReport_Serialize as DelegationReport,
  AgentFigures_Serialize as AgentFigures,
  PrimaryFigures_Serialize as PrimaryFigures,
} from "../../bindings";

/** How a tool-agent's calls ended, the kinds it had ("4 ok · 1 denied"). */
export function endings(agent: AgentFigures): string {
  const kinds: Array<[number, string]> = [
    [agent.ok, "ok"],
    [agent.error, "error"],
    [agent.denied, "denied"],
    [agent.limited, "limited"],
    [agent.cancelled, "cancelled"],
  ];
  return kinds
    .filter(([count]) => count > 0)
    .map(([count, kind]) => `${count} ${kind}`)
    .join(" · ");
}

/** A primary's delegating turns against its plain ones, in words. */
export function multipleText(primary: PrimaryFigures): string {
  const turns = (count: number, kind: string) => `${count} ${kind} turn${count === 1 ? "" : "s"}`;
  const counts = `${turns(primary.delegating_turns, "delegating")}, ${turns(primary.plain_turns, "plain")}`;
  if (primary.token_multiple === null || primary.token_multiple === undefined)
    return `${primary.primary}: ${counts}; no multiple until it has turns of both kinds.`;
  const cost =
    primary.cost_multiple === null || primary.cost_multiple === undefined
      ? ""
      : ` and ${primary.cost_multiple.toFixed(1)}× the cost`;
  return `${primary.primary}: a turn that delegated took ${primary.token_multiple.toFixed(1)}× the tokens${cost} of one that did not (${counts}).`;
}

/** Calls and tokens of every tool-agent per day, oldest first. */
export function perDay(report: DelegationReport): Array<{ day: string; calls: number; tokens: number }> {
  const days = new Map<string, { day: string; calls: number; tokens: number }>();
  for (const row of report.days) {
    const day = days.get(row.day) ?? { day: row.day, calls: 0, tokens: 0 };
    day.calls += row.calls;
    day.tokens += row.tokens;
    days.set(row.day, day);
  }
  return [...days.values()].sort((a, b) => a.day.localeCompare(b.day));
}
