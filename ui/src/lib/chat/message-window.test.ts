/** The chat's message window: what is rendered for a scroll position, the spacers' heights, the pin to the bottom. */
import { describe, expect, it } from "vitest";
import { estimateHeight, isAtBottom, messageWindow, MESSAGE_GAP } from "./message-window";

describe("messageWindow", () => {
  const hundred = Array<number>(100).fill(50);
  const cases: Array<[string, number[], number, number, number, ReturnType<typeof messageWindow>]> = [
    ["the top of a long chat", hundred, 0, 400, 100, { start: 0, end: 10, before: 0, after: 4500 }],
    ["the middle", hundred, 2000, 400, 100, { start: 38, end: 50, before: 1900, after: 2500 }],
    ["the bottom", hundred, 4600, 400, 100, { start: 90, end: 100, before: 4500, after: 0 }],
    [
      "beyond the bottom (as when a session opens pinned)",
      hundred,
      1e9,
      400,
      100,
      {
        start: 90,
        end: 100,
        before: 4500,
        after: 0,
      },
    ],
    ["a chat shorter than the viewport", [30, 40, 50], 0, 400, 100, { start: 0, end: 3, before: 0, after: 0 }],
    ["no messages", [], 0, 400, 100, { start: 0, end: 0, before: 0, after: 0 }],
    ["uneven heights", [100, 300, 20, 20, 500, 10], 390, 50, 0, { start: 1, end: 4, before: 100, after: 510 }],
  ];
  it.each(cases)("%s", (_, heights, scrollTop, viewport, overscan, expected) => {
    const window = messageWindow(heights, scrollTop, viewport, overscan);
    expect(window).toEqual(expected);
    const rendered = heights.slice(window.start, window.end).reduce((sum, height) => sum + height, 0);
    expect(window.before + rendered + window.after).toBe(heights.reduce((sum, height) => sum + height, 0));
  });

  it("renders a bounded number of messages however long the chat", () => {
    const heights = Array<number>(100_000).fill(60);
    for (const scrollTop of [0, 3_000_000, 1e9]) {
      const window = messageWindow(heights, scrollTop, 800, 800);
      expect(window.end - window.start).toBeLessThanOrEqual(Math.ceil((800 * 3) / 60) + 1);
    }
  });
});

describe("estimateHeight", () => {
  it("grows with the text, and counts an answer's header line and the gap", () => {
    expect(estimateHeight({ role: "user", content: "hi" })).toBe(22 + 20 + MESSAGE_GAP);
    expect(estimateHeight({ role: "assistant", content: "hi" })).toBe(22 + 40 + MESSAGE_GAP);
    expect(estimateHeight({ role: "user", content: "x".repeat(141) })).toBe(22 + 60 + MESSAGE_GAP);
  });
});

describe("isAtBottom", () => {
  const cases: Array<[number, number, number, boolean]> = [
    [600, 400, 1000, true],
    [590, 400, 1000, true],
    [500, 400, 1000, false],
    [0, 400, 300, true],
  ];
  it.each(cases)("scrollTop %d, height %d of %d: %s", (scrollTop, height, scrollHeight, expected) => {
    expect(isAtBottom(scrollTop, height, scrollHeight)).toBe(expected);
  });
});
