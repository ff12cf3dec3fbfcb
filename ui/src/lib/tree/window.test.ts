/** The virtual list window and the turn picker's choices. */
import { describe, expect, it } from "vitest";
import { turnChoices, visibleWindow } from "./window";

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

describe("turnChoices", () => {
  const turns = Array.from({ length: 1000 }, (_, index) => ({ turnId: `t${index + 1}` }));
  const numbers = (choices: Array<{ number: number }>) => [
    choices.length,
    choices[0]?.number,
    choices[choices.length - 1]?.number,
  ];
  const cases: Array<[string, string | null, number[]]> = [
    ["the last turn: the last 201", "t1000", [201, 800, 1000]],
    ["a turn in the middle: 100 either side", "t500", [201, 400, 600]],
    ["the first turn: the first 201", "t1", [201, 1, 201]],
    ["no turn selected: the first 201", null, [201, 1, 201]],
  ];
  it.each(cases)("%s", (_, selected, expected) => {
    const choices = turnChoices(turns, selected);
    expect(numbers(choices)).toEqual(expected);
    if (selected) expect(choices.some((choice) => choice.turn.turnId === selected)).toBe(true);
  });

  it("offers every turn of a short session, numbered", () => {
    expect(turnChoices(turns.slice(0, 3), "t2")).toEqual([
      { turn: { turnId: "t1" }, number: 1 },
      { turn: { turnId: "t2" }, number: 2 },
      { turn: { turnId: "t3" }, number: 3 },
    ]);
  });
});
