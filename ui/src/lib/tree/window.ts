/** Which rows of a long list to render (the visible ones and a few either side), and which turns the turn picker offers. Pure. */
export function visibleWindow(
  scrollTop: number,
  viewportHeight: number,
  total: number,
  rowHeight: number,
  overscan = 8,
): { start: number; end: number } {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const count = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, first - overscan);
  const end = Math.min(total, first + count + overscan);
  return { start, end: Math.max(start, end) };
}

/**
 * The turns the turn picker offers: all of them in a session of up to 2 × `radius`
 * + 1 turns, else the `radius` turns either side of the selected one (with their
 * numbers), so a session of thousands of turns does not lay out thousands of
 * options. An older turn is reached by its chips in the chat, or step by step.
 */
export function turnChoices<T extends { turnId: string }>(
  turns: readonly T[],
  selected: string | null,
  radius = 100,
): Array<{ turn: T; number: number }> {
  const at = Math.max(
    0,
    turns.findIndex((turn) => turn.turnId === selected),
  );
  const start = Math.max(0, Math.min(at - radius, turns.length - (2 * radius + 1)));
  const end = Math.min(turns.length, start + 2 * radius + 1);
  return turns.slice(start, end).map((turn, offset) => ({ turn, number: start + offset + 1 }));
}
