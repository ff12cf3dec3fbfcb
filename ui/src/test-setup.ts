/** jsdom has no layout and no ResizeObserver; components that bind sizes get an inert one. */
class InertResizeObserver {
  observe(): void {}
  unobserve(): void {}
  disconnect(): void {}
}
globalThis.ResizeObserver ??= InertResizeObserver as unknown as typeof ResizeObserver;
