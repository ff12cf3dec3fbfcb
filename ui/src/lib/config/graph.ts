/**
 * The "who can call whom" graph, laid out: agents on a circle (the primary at the
 * top, then clockwise in config order), one arrow per offered tool-agent entry,
 * bent apart when two agents call each other. On a circle no chord passes through
 * another node, so a plain layout stays readable. Pure geometry for an SVG; tested.
 */

/** An arrow: `from` is offered `to` as a tool-agent. */
export type CallEdge = { from: string; to: string };

export type GraphNode = { name: string; x: number; y: number; primary: boolean; escalation: boolean };

export type GraphEdge = CallEdge & {
  /** An SVG path from the caller's rim to the callee's rim. */
  path: string;
  /** Where the arrow ends (its head), for tests and labels. */
  end: { x: number; y: number };
};

export type GraphLayout = { width: number; height: number; radius: number; nodes: GraphNode[]; edges: GraphEdge[] };

/** Node circles' radius, in SVG units. */
export const nodeRadius = 40;

const round = (value: number) => Math.round(value * 10) / 10;

/**
 * Places `agents` on a circle inside `width` × `height` and draws `edges` between
 * them (edges naming an unknown agent are left out; one agent alone sits in the middle).
 */
export function layoutGraph(
  agents: string[],
  edges: CallEdge[],
  roles: { primary: string | null; escalation: string | null },
  width = 640,
  height = 480,
): GraphLayout {
  const ordered =
    roles.primary && agents.includes(roles.primary)
      ? [roles.primary, ...agents.filter((name) => name !== roles.primary)]
      : [...agents];
  const center = { x: width / 2, y: height / 2 };
  const radius = ordered.length <= 1 ? 0 : Math.max(60, Math.min(width, height) / 2 - nodeRadius - 40);
  const nodes: GraphNode[] = ordered.map((name, index) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * index) / Math.max(1, ordered.length);
    return {
      name,
      x: round(center.x + radius * Math.cos(angle)),
      y: round(center.y + radius * Math.sin(angle)),
      primary: name === roles.primary,
      escalation: name === roles.escalation,
    };
  });
  const byName = new Map(nodes.map((node) => [node.name, node]));
  const pairs = new Set(edges.map((edge) => `${edge.from}\u0000${edge.to}`));
  const laidOut: GraphEdge[] = [];
  for (const edge of edges) {
    const from = byName.get(edge.from);
    const to = byName.get(edge.to);
    if (!from || !to || from === to) continue;
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const length = Math.hypot(dx, dy) || 1;
    const unit = { x: dx / length, y: dy / length };
    // Two agents that call each other get two arcs, one on each side of the chord.
    const bend = pairs.has(`${edge.to}\u0000${edge.from}`) ? 22 : 0;
    const normal = { x: -unit.y, y: unit.x };
    const control = { x: (from.x + to.x) / 2 + normal.x * bend, y: (from.y + to.y) / 2 + normal.y * bend };
    const leave = towards(from, control, nodeRadius);
    const arrive = towards(to, control, nodeRadius + 4);
    const path =
      bend === 0
        ? `M${round(leave.x)},${round(leave.y)} L${round(arrive.x)},${round(arrive.y)}`
        : `M${round(leave.x)},${round(leave.y)} Q${round(control.x)},${round(control.y)} ${round(arrive.x)},${round(arrive.y)}`;
    laidOut.push({ ...edge, path, end: { x: round(arrive.x), y: round(arrive.y) } });
  }
  return { width, height, radius: round(radius), nodes, edges: laidOut };
}

/** The point `distance` from `point` in the direction of `target`. */
function towards(point: { x: number; y: number }, target: { x: number; y: number }, distance: number) {
  const dx = target.x - point.x;
  const dy = target.y - point.y;
  const length = Math.hypot(dx, dy) || 1;
  return { x: point.x + (dx / length) * distance, y: point.y + (dy / length) * distance };
}

/** The graph as sentences, for a screen reader and as the text fallback. */
export function describeGraph(agents: string[], edges: CallEdge[]): string[] {
  return agents.map((agent) => {
    const callees = edges.filter((edge) => edge.from === agent).map((edge) => edge.to);
    return callees.length === 0 ? `${agent} calls no agent` : `${agent} can call ${callees.join(", ")}`;
  });
}

/** One link of a call chain as the core explains it (`ToolsExplained.chains`). */
export interface ChainStep {
  callers: string[];
  agent: string;
  depth: number;
  narrowed: boolean;
  offered: string[];
  narrowed_away: string[];
}

/** A chain link in words: who calls it, what it is offered there, and what narrowing took away. */
export function chainLine(link: ChainStep): string {
  const via = link.callers.length > 0 ? `${link.callers.join(" → ")} → ` : "";
  const offered = link.offered.length > 0 ? link.offered.join(", ") : "nothing";
  const away = link.narrowed_away.length > 0 ? `; narrowing takes away ${link.narrowed_away.join(", ")}` : "";
  return `${via}${link.agent} (depth ${link.depth}${link.narrowed ? ", narrowed" : ""}) is offered ${offered}${away}`;
}
