/** The `@agent` handoff parser. */
import { describe, expect, it } from "vitest";
import { parseHandoff } from "./state.svelte";

describe("parseHandoff", () => {
  const cases: Array<[string, string | null, string]> = [
    ["hello", null, "hello"],
    ["@expert why is the sky blue?", "expert", "why is the sky blue?"],
    ["  @researcher   find it  ", "researcher", "find it"],
    ["email me @ noon", null, "email me @ noon"],
    ["@alone", null, "@alone"],
  ];
  it.each(cases)("%s", (input, agent, message) => {
    expect(parseHandoff(input)).toEqual({ agent, message });
  });
});
