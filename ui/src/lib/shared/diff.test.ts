/** The line diff stays linear in the window's time on texts too big for its table. */
import { expect, it } from "vitest";
import { lineDiff, MAX_CELLS } from "./diff";

it("past its table's bound, the two texts are shown one after the other", () => {
  const lines = Math.ceil(Math.sqrt(MAX_CELLS)) + 1;
  const first = Array.from({ length: lines }, (_, index) => `line ${index}`).join("\n");
  const diff = lineDiff(first, `${first}\nmore`);
  expect(diff.length).toBe(lines * 2 + 1);
  expect(diff[0]).toEqual({ side: "theirs", text: "line 0" });
  expect(diff.at(-1)).toEqual({ side: "mine", text: "more" });
  expect(lineDiff("a\nb", "a\nc")).toEqual([
    { side: "both", text: "a" },
    { side: "theirs", text: "b" },
    { side: "mine", text: "c" },
  ]);
});
