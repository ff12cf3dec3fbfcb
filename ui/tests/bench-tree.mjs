/**
 * Frame-time benchmark of the live tree (not a test: it asserts nothing, it prints).
 * Replays a turn of 1,000 calls and 20,000 text deltas through the built UI (mocked
 * IPC, headless Chromium) and records the time between animation frames while the
 * events arrive, beside the same measure on the idle page in the same run.
 * Run: `make bench-ui`.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "./chromium.mjs";

const ui = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const server = spawn(
  path.join(ui, "node_modules", ".bin", "vite"),
  ["preview", "--mode", "e2e", "--outDir", "dist-e2e", "--port", "4174"],
  { cwd: ui, stdio: "ignore" },
);
const base = "http://127.0.0.1:4174/e2e.html?bench";

async function waitForServer() {
  for (let attempt = 0; attempt < 150; attempt++) {
    try {
      if ((await fetch(base)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("vite preview did not start");
}

/**
 * Records, per animation frame, the interval since the previous frame and the
 * frame's work: from the start of its animation-frame callbacks to the first task
 * after them, which covers the tree's fold, Svelte's updates, style, layout and paint.
 */
const recordFrames = () => {
  window.__frames = [];
  window.__work = [];
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push(Math.round(entry.duration));
  }).observe({ type: "longtask" });
  let last = performance.now();
  let running = true;
  const channel = new MessageChannel();
  let frameStart = 0;
  channel.port1.onmessage = () => window.__work.push(performance.now() - frameStart);
  const tick = (now) => {
    window.__frames.push(now - last);
    last = now;
    frameStart = performance.now();
    channel.port2.postMessage(null);
    if (running) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__stopFrames = () => (running = false);
};

function summary(frames) {
  const sorted = [...frames].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    frames: sorted.length,
    median: at(0.5),
    p95: at(0.95),
    max: sorted[sorted.length - 1],
    over50: sorted.filter((ms) => ms > 50).length,
  };
}

const show = (label, stats) =>
  console.log(
    `${label.padEnd(34)} ${String(stats.frames).padStart(5)} frames  median ${stats.median.toFixed(1)} ms  p95 ${stats.p95.toFixed(1)} ms  max ${stats.max.toFixed(1)} ms  over 50 ms: ${stats.over50}`,
  );

try {
  await waitForServer();
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(base);
  await page.getByRole("textbox", { name: "Message" }).waitFor();

  await page.evaluate(recordFrames);
  await page.waitForTimeout(2000);
  const idle = await page.evaluate(
    () => (window.__stopFrames(), { frames: window.__frames.slice(1), work: window.__work.slice(1) }),
  );

  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill("replay the big turn");
  await page.evaluate(recordFrames);
  const started = Date.now();
  await input.press("Enter");
  await page
    .getByRole("listitem", { name: "Answer from agent0" })
    .getByText("bench done")
    .waitFor({ timeout: 120_000 });
  const elapsed = Date.now() - started;
  const busy = await page.evaluate(
    () => (window.__stopFrames(), { frames: window.__frames.slice(1), work: window.__work.slice(1) }),
  );
  const items = await page.getByRole("treeitem").count();
  console.log(
    `replayed 1,000 calls and 20,000 deltas (23,000 events) in ${(elapsed / 1000).toFixed(1)} s; ${items} tree rows in the DOM (virtualized)`,
  );
  show("frame work, idle page (baseline)", summary(idle.work));
  show("frame work, while events stream", summary(busy.work));
  show("frame interval, idle (baseline)", summary(idle.frames));
  show("frame interval, while streaming", summary(busy.frames));
  const longTasks = await page.evaluate(() => window.__longTasks);
  console.log(
    `main-thread tasks over 50 ms during the replay (PerformanceObserver "longtask"): ${longTasks.length ? longTasks.join(", ") + " ms" : "none"}`,
  );
  const longest = busy.frames.indexOf(Math.max(...busy.frames));
  console.log(
    `longest interval: frame ${longest + 1} of ${busy.frames.length} (the first frames follow the click that starts the turn)`,
  );
  await browser.close();
} finally {
  server.kill("SIGTERM");
}
