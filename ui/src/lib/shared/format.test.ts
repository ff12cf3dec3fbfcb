/** The shared formatters: tokens, durations, costs. */
import { describe, expect, it } from "vitest";
import { formatClockTime, formatCost, formatDuration, formatTokens } from "./format";

describe("formatDuration", () => {
  const cases: Array<[number, string]> = [
    [250, "250 ms"],
    [1500, "1.5 s"],
    [125_000, "2 min 5 s"],
  ];
  it.each(cases)("%d ms", (ms, expected) => expect(formatDuration(ms)).toBe(expected));
});

describe("formatTokens", () => {
  const cases: Array<[number | null | undefined, string]> = [
    [null, "–"],
    [undefined, "–"],
    [9_999, "9999"],
    [12_345, "12.3k"],
  ];
  it.each(cases)("%s", (tokens, expected) => expect(formatTokens(tokens)).toBe(expected));
});

describe("formatCost", () => {
  const cases: Array<[number | null, string]> = [
    [null, "–"],
    [0.01234, "$0.0123"],
    [12.5, "$12.50"],
  ];
  it.each(cases)("%s", (cost, expected) => expect(formatCost(cost)).toBe(expected));
});

describe("formatClockTime", () => {
  it("says what toLocaleTimeString says", () => {
    for (const ms of [0, 1_700_000_000_000, 1_700_000_045_678])
      expect(formatClockTime(ms)).toBe(new Date(ms).toLocaleTimeString());
  });
});
