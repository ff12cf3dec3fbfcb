/** The call graph's layout: the primary on top, nodes on a circle, arrows from rim to rim. */
import { describe, expect, it } from "vitest";
import { chainLine, describeGraph, layoutGraph, nodeRadius } from "./graph";

describe("layoutGraph", () => {
  const agents = ["helper", "lead", "coder", "expert"];
  const edges = [
    { from: "lead", to: "helper" },
    { from: "lead", to: "coder" },
    { from: "coder", to: "lead" },
    { from: "lead", to: "ghost" },
  ];
  const layout = layoutGraph(agents, edges, { primary: "lead", escalation: "expert" }, 400, 400);

  it("puts the primary at the top and every node on the circle", () => {
    expect(layout.nodes.map((node) => node.name)).toEqual(["lead", "helper", "coder", "expert"]);
    expect(layout.nodes[0]).toMatchObject({ x: 200, y: 200 - layout.radius, primary: true, escalation: false });
    for (const node of layout.nodes) expect(Math.hypot(node.x - 200, node.y - 200)).toBeCloseTo(layout.radius, 0);
    expect(layout.nodes.find((node) => node.name === "expert")?.escalation).toBe(true);
  });

  it("keeps nodes inside the box", () => {
    for (const node of layout.nodes) {
      expect(node.x - nodeRadius).toBeGreaterThanOrEqual(0);
      expect(node.y + nodeRadius).toBeLessThanOrEqual(400);
    }
  });

  it("draws known edges only, bending the two of a pair apart", () => {
    expect(layout.edges.map((edge) => `${edge.from}>${edge.to}`)).toEqual(["lead>helper", "lead>coder", "coder>lead"]);
    expect(layout.edges[0].path).toMatch(/^M[\d.]+,[\d.]+ L/);
    expect(layout.edges[1].path).toMatch(/ Q/);
    expect(layout.edges[2].path).toMatch(/ Q/);
    expect(layout.edges[1].path).not.toEqual(layout.edges[2].path);
  });

  it("ends an arrow at the callee's rim, not its centre", () => {
    const helper = layout.nodes.find((node) => node.name === "helper")!;
    const end = layout.edges[0].end;
    expect(Math.hypot(end.x - helper.x, end.y - helper.y)).toBeCloseTo(nodeRadius + 4, 0);
  });

  it("puts a lone agent in the middle", () => {
    const single = layoutGraph(["only"], [], { primary: null, escalation: null }, 300, 200);
    expect(single.nodes[0]).toMatchObject({ x: 150, y: 100 });
  });
});

it("describes the graph in sentences", () => {
  expect(describeGraph(["a", "b"], [{ from: "a", to: "b" }])).toEqual(["a can call b", "b calls no agent"]);
});

describe("chainLine", () => {
  it("says who calls the agent, what it is offered there and what narrowing took away", () => {
    const root = { callers: [], agent: "x", depth: 0, narrowed: false, offered: ["y"], narrowed_away: [] };
    const deputy = { callers: ["x"], agent: "y", depth: 1, narrowed: true, offered: [], narrowed_away: ["z"] };
    expect(chainLine(root)).toBe("x (depth 0) is offered y");
    expect(chainLine(deputy)).toBe("x → y (depth 1, narrowed) is offered nothing; narrowing takes away z");
  });
});
