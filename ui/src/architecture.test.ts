/**
 * Architecture Invariants of the UI, checked on the source text. A domain
 * (`lib/<domain>/`) imports from outside `lib/` only the bindings, and from another
 * domain never its state module nor its components (pages in `views/` compose
 * domains); `lib/shared` imports no domain; the domains' imports form no cycle; and
 * every source file opens with a header that says what it is for. Model text reaches
 * the DOM as HTML only in `lib/chat/Markdown.svelte`, whose HTML comes from the
 * DOMPurify-sanitising renderer (`markdown.ts`; its tests try what could run code).
 */
import { describe, expect, it } from "vitest";

/** Every source file under src/, by its path relative to src/ (the bindings are generated, so left out). */
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(["./**/*.ts", "./**/*.svelte", "!./bindings.ts"], {
      query: "?raw",
      import: "default",
      eager: true,
    }),
  ).map(([path, source]) => [path.replace(/^\.\//, ""), source]),
);

/** The relative specifiers a file imports (statically, dynamically or by re-export). */
function relativeImports(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/\bfrom\s+["']([^"']+)["']|\bimport\s*\(?\s*["']([^"']+)["']/g)) {
    const specifier = match[1] ?? match[2];
    if (specifier.startsWith(".")) specifiers.push(specifier);
  }
  return specifiers;
}

/** The file a specifier of `from` names, relative to src/ (with `.ts` added when the file has it). */
function resolve(files: Record<string, string>, from: string, specifier: string): string {
  const path = new URL(specifier, `file:///src/${from}`).pathname.replace(/^\/src\//, "");
  return [path, `${path}.ts`, `${path}/index.ts`].find((candidate) => candidate in files) ?? path;
}

/** The domain a file belongs to (`lib/<domain>/…`), or null outside lib/. */
function domainOf(path: string): string | null {
  return /^lib\/([^/]+)\//.exec(path)?.[1] ?? null;
}

/** A cycle in a graph of domains, as a path that ends where it starts; null when there is none. */
function findCycle(graph: Map<string, Set<string>>): string[] | null {
  const done = new Set<string>();
  const visit = (node: string, path: string[]): string[] | null => {
    if (path.includes(node)) return [...path.slice(path.indexOf(node)), node];
    if (done.has(node)) return null;
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next, [...path, node]);
      if (cycle) return cycle;
    }
    done.add(node);
    return null;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return null;
}

/** Every import that breaks a rule of the layering, and a cycle of domains if there is one, as sentences. */
function layeringViolations(files: Record<string, string>): string[] {
  const violations: string[] = [];
  const graph = new Map<string, Set<string>>();
  for (const [path, source] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    const domain = domainOf(path);
    if (domain === null) continue;
    for (const specifier of relativeImports(source)) {
      const target = resolve(files, path, specifier);
      const targetDomain = domainOf(target);
      if (targetDomain === null) {
        if (target.replace(/\.ts$/, "") !== "bindings")
          violations.push(`${path} imports ${target}, outside lib/ (only bindings.ts may be)`);
        continue;
      }
      if (targetDomain === domain) continue;
      if (domain === "shared") violations.push(`${path} imports ${target}: lib/shared knows no domain`);
      else if (/(^|\/)state\.svelte\.ts$/.test(target))
        violations.push(`${path} imports ${target}, the state module of another domain`);
      else if (target.endsWith(".svelte") && targetDomain !== "shared")
        violations.push(`${path} imports ${target}, a component of another domain`);
      if (targetDomain !== "shared") graph.set(domain, (graph.get(domain) ?? new Set()).add(targetDomain));
    }
  }
  const cycle = findCycle(graph);
  if (cycle) violations.push(`the domains import each other in a cycle: ${cycle.join(" → ")}`);
  return violations;
}

/** Whether a file opens with its purpose: a `/** … *\/` block in TypeScript, an HTML comment in a component. */
function hasHeader(path: string, source: string): boolean {
  const header = path.endsWith(".svelte") ? /^<!--\s*\S[\s\S]*?-->/ : /^\/\*\*\s*\S[\s\S]*?\*\//;
  return header.test(source.trimStart());
}

describe("the layering check", () => {
  const cases: Array<[string, Record<string, string>, string[]]> = [
    [
      "allows a domain its own modules, shared code, the bindings and another domain's model",
      {
        "lib/a/View.svelte": `import { s } from "./state.svelte"; import { m } from "../b/model"; import { f } from "../shared/format"; import type { T } from "../../bindings";`,
        "lib/a/state.svelte.ts": "",
        "lib/b/model.ts": "",
        "lib/shared/format.ts": "",
        "bindings.ts": "",
      },
      [],
    ],
    [
      "allows a domain a shared component (one that knows no domain)",
      { "lib/a/X.svelte": `import C from "../shared/C.svelte";`, "lib/shared/C.svelte": "" },
      [],
    ],
    [
      "allows a view anything",
      { "views/Page.svelte": `import { s } from "../lib/a/state.svelte"; import B from "../lib/b/B.svelte";` },
      [],
    ],
    [
      "refuses another domain's state module",
      { "lib/a/x.ts": `import { s } from "../b/state.svelte";`, "lib/b/state.svelte.ts": "" },
      ["lib/a/x.ts imports lib/b/state.svelte.ts, the state module of another domain"],
    ],
    [
      "refuses another domain's component",
      { "lib/a/X.svelte": `import B from "../b/B.svelte";`, "lib/b/B.svelte": "" },
      ["lib/a/X.svelte imports lib/b/B.svelte, a component of another domain"],
    ],
    [
      "refuses a view, from a domain",
      { "lib/a/x.ts": `export { flow } from "../../views/flow";`, "views/flow.ts": "" },
      ["lib/a/x.ts imports views/flow.ts, outside lib/ (only bindings.ts may be)"],
    ],
    [
      "refuses a domain, from shared code",
      { "lib/shared/f.ts": `const m = await import("../a/model");`, "lib/a/model.ts": "" },
      ["lib/shared/f.ts imports lib/a/model.ts: lib/shared knows no domain"],
    ],
    [
      "refuses a cycle of domains, even through models",
      {
        "lib/a/model.ts": `import { b } from "../b/model";`,
        "lib/b/model.ts": `import { c } from "../c/model";`,
        "lib/c/model.ts": `import type { A } from "../a/model";`,
      },
      ["the domains import each other in a cycle: a → b → c → a"],
    ],
  ];
  it.each(cases)("%s", (_name, files, expected) => expect(layeringViolations(files)).toEqual(expected));

  const headers: Array<[string, string, boolean]> = [
    ["x.ts", "/** Why x exists. */\nexport const x = 1;", true],
    ["x.ts", "// Why x exists.\nexport const x = 1;", false],
    ["x.ts", "export const x = 1; /** late */", false],
    ["X.svelte", "<!--\n  Why X exists.\n-->\n<script></script>", true],
    ["X.svelte", "<script></script>\n<!-- late -->", false],
    ["X.svelte", "<!-- -->", false],
  ];
  it.each(headers)("header of %s: %j", (path, source, expected) => expect(hasHeader(path, source)).toBe(expected));
});

describe("Architecture Invariants", () => {
  it("reads the whole source tree", () => {
    expect(Object.keys(sources)).toEqual(expect.arrayContaining(["App.svelte", "main.ts", "lib/tree/state.svelte.ts"]));
  });

  it("domains import no other domain's state or components, shared code no domain, and no domain cycles", () => {
    expect(layeringViolations(sources)).toEqual([]);
  });

  it("every source file opens with a header that says what it is for", () => {
    const missing = Object.entries(sources)
      .filter(([path, source]) => !hasHeader(path, source))
      .map(([path]) => path);
    expect(missing).toEqual([]);
  });

  it("components call no backend command: IPC lives in their domain's state", () => {
    const calling = Object.entries(sources)
      .filter(([path]) => path.endsWith(".svelte"))
      .filter(([, source]) => /\bcommands\.[a-zA-Z]+\(/.test(source))
      .map(([path]) => path);
    expect(calling).toEqual([]);
  });

  it("HTML is put into the DOM only by the Markdown component, from the sanitising renderer", () => {
    const rawHtml = Object.entries(sources)
      .filter(([path]) => !path.endsWith(".test.ts"))
      .filter(
        ([, source]) => source.includes("{@html") || /\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML\(/.test(source),
      )
      .map(([path]) => path);
    expect(rawHtml).toEqual(["lib/chat/Markdown.svelte"]);
    expect(sources["lib/chat/Markdown.svelte"]).toMatch(/from "\.\/markdown"/);
    expect(sources["lib/chat/markdown.ts"]).toMatch(/DOMPurify\.sanitize\(/);
  });
});
