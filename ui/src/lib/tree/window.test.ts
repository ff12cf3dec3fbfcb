/** The virtual list window. */
import { describe, expect, it } from "vitest";
import { visibleWindow } from "./window";

describe("visibleWindow", () => {
  const cases: Array<[number, number, number, { start: number; end: number }]> = [
    [0, 280, 1000, { start: 0, end: 19 }],
    [2800, 280, 1000, { start: 92, end: 119 }],
    [27_900, 280, 1000, { start: 988, end: 1000 }],
    [0, 280, 3, { start: 0, end: 3 }],
    [0, 280, 0, { start: 0, end: 0 }],
  ];
  it.each(cases)("scrollTop %d, height %d, %d rows", (scrollTop, height, total, expected) => {
    expect(visibleWindow(scrollTop, height, total, 28)).toEqual(expected);
  });
});
