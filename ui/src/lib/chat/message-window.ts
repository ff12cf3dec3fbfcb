/**
 * Which messages of a long chat to render: the ones in view and a margin either
 * side, with the height of the messages left out above and below (spacers keep the
 * scroll bar true). Heights are measured once a message has been rendered and
 * estimated from its text until then. Pure, so the windowing is tested without a
 * browser; the view measures and scrolls.
 */
import type { ChatEntry } from "./entry";

/** The space between two messages, which each message's measured height includes. */
export const MESSAGE_GAP = 12;

/** The slice of the messages to render and the room the others take. */
export interface MessageWindow {
  /** The first message rendered. */
  start: number;
  /** One past the last message rendered. */
  end: number;
  /** The height of the messages before `start`. */
  before: number;
  /** The height of the messages from `end` on. */
  after: number;
}

/**
 * A guess at a message's height (gap included) before it has been rendered: a line
 * for its header and one per 70 characters of text. Only the scroll bar's accuracy
 * depends on it; a message is measured as soon as it is rendered.
 */
export function estimateHeight(entry: Pick<ChatEntry, "role" | "content">): number {
  const lines = Math.max(1, Math.ceil(entry.content.length / 70)) + (entry.role === "user" ? 0 : 1);
  return 22 + lines * 20 + MESSAGE_GAP;
}

/**
 * The messages to render for a viewport of `viewportHeight` scrolled to `scrollTop`
 * (clamped to the content), with `overscan` pixels of messages rendered beyond each
 * edge. `heights[i]` is message i's height, gap included.
 */
export function messageWindow(
  heights: readonly number[],
  scrollTop: number,
  viewportHeight: number,
  overscan: number,
): MessageWindow {
  let total = 0;
  for (const height of heights) total += height;
  const top = Math.max(0, Math.min(scrollTop, total - viewportHeight));
  const from = top - overscan;
  const to = top + viewportHeight + overscan;
  let start = 0;
  let before = 0;
  while (start < heights.length && before + heights[start] <= from) before += heights[start++];
  let end = start;
  let bottom = before;
  while (end < heights.length && bottom < to) bottom += heights[end++];
  return { start, end, before, after: total - bottom };
}

/** Whether a scroll container shows its end (within `slack` pixels): new content then keeps it there. */
export function isAtBottom(scrollTop: number, clientHeight: number, scrollHeight: number, slack = 24): boolean {
  return scrollTop + clientHeight >= scrollHeight - slack;
}
