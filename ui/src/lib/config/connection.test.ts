/** The connection test's one-line summary: reached, only found, or a model to pick. */
import { describe, expect, it } from "vitest";
import type { ConnectionReport_Serialize as ConnectionReport } from "../../bindings";
import { summaryOf } from "./connection";

const report = (ok: boolean, steps: string[], models: string[] = []): ConnectionReport => ({
  ok,
  steps: steps.map((name) => ({ name, ok, detail: "", millis: 1 })),
  models,
  tools: [],
  first_token_ms: null,
  description: null,
});

describe("the connection test's summary", () => {
  it.each([
    [report(false, ["list models"]), "", "The connection test failed."],
    [report(true, ["find the program"]), "", "The program is there. It was not run: a test would start a real agent."],
    [
      report(true, ["list models"], ["a", "b"]),
      "",
      "The server answers. It lists models, and this agent names none: pick one below.",
    ],
    [report(true, ["list models", "stream a reply"], ["a"]), "a", "The connection works."],
  ])("%#", (tested, model, line) => expect(summaryOf(tested, model)).toBe(line));
});
