/** What delegation costs, from the session's call trees: per agent, and per turn. Pure. */
import { rootOf, type CallTree, type TurnTree } from "../tree/model";

export interface AgentRow {
  agent: string;
  calls: number;
  errors: number;
  refused: number;
  tokens: number;
  cost: number | null;
}

export interface TurnRow {
  turnId: string;
  label: string;
  tokens: number;
  cost: number | null;
}

/** Per agent over every call of every tree: own tokens and cost (no double counting of subtrees). */
export function usageByAgent(trees: CallTree[]): AgentRow[] {
  const rows = new Map<string, AgentRow>();
  for (const tree of trees) {
    for (const node of tree.nodes.values()) {
      const row = rows.get(node.agent) ?? { agent: node.agent, calls: 0, errors: 0, refused: 0, tokens: 0, cost: null };
      row.calls += 1;
      if (node.status === "error") row.errors += 1;
      if (node.status === "limited" || node.status === "denied") row.refused += 1;
      row.tokens += node.usage?.total_tokens ?? 0;
      if (node.cost !== null) row.cost = (row.cost ?? 0) + node.cost;
      rows.set(node.agent, row);
    }
  }
  return [...rows.values()].sort((a, b) => b.tokens - a.tokens || a.agent.localeCompare(b.agent));
}

/** Per turn: the root's subtree totals. */
export function usageByTurn(turns: TurnTree[]): TurnRow[] {
  return turns.map(({ turnId, label, tree }) => {
    const root = rootOf(tree);
    return { turnId, label, tokens: root?.usageTotal?.total_tokens ?? 0, cost: root?.costTotal ?? null };
  });
}

/**
 * Which of `count` columns carry their value and axis label: all up to 16, then
 * every k-th (so about 12 are labelled), always the last.
 */
export function columnLabels(count: number): Set<number> {
  const step = count <= 16 ? 1 : Math.ceil(count / 12);
  const labelled = new Set<number>();
  for (let index = 0; index < count; index += step) labelled.add(index);
  if (count > 0) labelled.add(count - 1);
  return labelled;
}
