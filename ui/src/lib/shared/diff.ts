/**
 * A line diff of two texts (a config on disk and an edit; a call's first answer
 * and its re-run's): the longest common subsequence of their lines, bounded so a
 * huge text cannot stall the window. Pure; tested beside it.
 */

/** A line of the diff: in both, only in the first text ("theirs"), or only in the second ("mine"). */
export type DiffLine = { side: "both" | "mine" | "theirs"; text: string };

/** At most this many cells in the LCS table (lines of one × lines of the other). */
export const MAX_CELLS = 1_000_000;

/**
 * A line diff (longest common subsequence) from `theirs` to `mine`: lines only in
 * theirs would go, lines only in mine would come.
 */
export function lineDiff(theirs: string, mine: string): DiffLine[] {
  const a = theirs.split("\n");
  const b = mine.split("\n");
  // The table is quadratic: past a million cells (an agent's answer is not to be
  // trusted with the window's time), the two sides are shown one after the other.
  if (a.length * b.length > MAX_CELLS)
    return [
      ...a.map((text) => ({ side: "theirs" as const, text })),
      ...b.map((text) => ({ side: "mine" as const, text })),
    ];
  const common: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      lines.push({ side: "both", text: a[i] });
      i++;
      j++;
    } else if (common[i + 1][j] >= common[i][j + 1]) lines.push({ side: "theirs", text: a[i++] });
    else lines.push({ side: "mine", text: b[j++] });
  }
  while (i < a.length) lines.push({ side: "theirs", text: a[i++] });
  while (j < b.length) lines.push({ side: "mine", text: b[j++] });
  return lines;
}
