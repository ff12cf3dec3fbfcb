/**
 * The events waiting to be folded into the call trees, drained in arrival order
 * within a time budget: a burst of a hundred thousand events is folded over several
 * frames instead of in one long task that would freeze the window. Pure (the clock
 * comes in as an argument), so the batching is tested without a browser.
 */

/** A first-in, first-out queue of events that a frame drains as far as its budget allows. */
export class FoldQueue<T> {
  private items: T[] = [];
  /** The index of the next item to fold (items before it are done; dropped now and then). */
  private head = 0;

  /** How many items wait. */
  get pending(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Forgets every waiting item (the trees they were for were replaced). */
  clear(): void {
    this.items = [];
    this.head = 0;
  }

  /**
   * Hands the waiting items to `fold`, oldest first, until none is left or the clock
   * (`now`, read every `stride` items, so a cheap fold is not slowed by the reads)
   * has reached `deadline`. Returns how many it folded; what is left stays in order
   * for the next call. Without a deadline it folds everything.
   */
  drain(fold: (item: T) => void, now: () => number = () => 0, deadline = Infinity, stride = 256): number {
    const start = this.head;
    while (this.head < this.items.length) {
      fold(this.items[this.head++]);
      if ((this.head - start) % stride === 0 && now() >= deadline) break;
    }
    const folded = this.head - start;
    if (this.head === this.items.length) this.clear();
    else if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return folded;
  }
}
