/** The fold queue: arrival order kept across frames, the time budget respected, everything folded on demand. */
import { describe, expect, it } from "vitest";
import { FoldQueue } from "./fold-queue";

/** A clock that advances by `step` every time it is read. */
function steppingClock(step: number): () => number {
  let time = 0;
  return () => (time += step);
}

describe("FoldQueue", () => {
  it("folds everything in arrival order when given no deadline", () => {
    const queue = new FoldQueue<number>();
    for (let item = 0; item < 1000; item++) queue.push(item);
    const folded: number[] = [];
    expect(queue.drain((item) => folded.push(item))).toBe(1000);
    expect(folded).toEqual([...Array(1000).keys()]);
    expect(queue.pending).toBe(0);
  });

  const budgets: Array<[string, number, number, number[]]> = [
    // [case, items, stride, items folded per drain while the clock passes the deadline at its second read]
    ["stops at the deadline, a stride at a time", 10, 3, [6, 4]],
    ["folds a whole stride before looking at the clock", 5, 8, [5]],
    ["keeps what is left for the next frames", 20, 4, [8, 8, 4]],
  ];
  it.each(budgets)("%s", (_, count, stride, expected) => {
    const queue = new FoldQueue<number>();
    for (let item = 0; item < count; item++) queue.push(item);
    const folded: number[] = [];
    const drains: number[] = [];
    while (queue.pending > 0) {
      // Each frame's clock reads 1, 2, …: the deadline of 2 is reached at its second read.
      drains.push(queue.drain((item) => folded.push(item), steppingClock(1), 2, stride));
    }
    expect(drains).toEqual(expected);
    expect(folded).toEqual([...Array(count).keys()]);
  });

  it("takes events pushed between frames after the ones still waiting", () => {
    const queue = new FoldQueue<string>();
    for (const item of ["a", "b", "c", "d"]) queue.push(item);
    const folded: string[] = [];
    queue.drain((item) => folded.push(item), steppingClock(10), 5, 2);
    queue.push("e");
    queue.drain((item) => folded.push(item));
    expect(folded).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("keeps order across the compaction of a long queue", () => {
    const queue = new FoldQueue<number>();
    for (let item = 0; item < 20_000; item++) queue.push(item);
    const folded: number[] = [];
    let reads = 0;
    // Stops after the first stride of every drain: the queue drops what it has folded on the way.
    while (queue.pending > 0)
      queue.drain(
        (item) => folded.push(item),
        () => ++reads,
        reads + 1,
        5000,
      );
    expect(folded.length).toBe(20_000);
    expect(folded.every((item, index) => item === index)).toBe(true);
  });

  it("forgets what waits when cleared", () => {
    const queue = new FoldQueue<number>();
    queue.push(1);
    queue.clear();
    expect(queue.drain(() => expect.unreachable())).toBe(0);
  });
});
