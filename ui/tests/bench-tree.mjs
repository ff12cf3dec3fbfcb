/**
 * Frame-time benchmark of the live tree (not a test: it asserts nothing, it prints).
 * Replays a turn through the built UI (mocked IPC, headless Chromium) at the
 * benchmark's scale (1,000 calls, 20,000 text deltas) and at ten times it (10,000
 * calls, 200,000 deltas), and records, while the events arrive, each animation
 * frame's work and the interval between frames, and every main-thread task over
 * 50 ms, beside the same measures on the idle page in the same run. Then reopens
 * stored sessions (mocked logs) of 100 events (the baseline) and of 100,000 events
 * (2,084 turns) and prints the time from the click on the session to its last
 * message rendered, how many message elements the chat holds, and the page's
 * elements and JavaScript heap then.
 * Run: `make bench-ui`.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "./chromium.mjs";

const ui = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const port = process.env.BENCH_PORT ?? "4174";
const server = spawn(
  path.join(ui, "node_modules", ".bin", "vite"),
  ["preview", "--mode", "e2e", "--outDir", "dist-e2e", "--port", port],
  { cwd: ui, stdio: "ignore" },
);
const base = `http://127.0.0.1:${port}/e2e.html`;
/** The scales to replay (BENCH_SCALES=1,10 by default). */
const scales = (process.env.BENCH_SCALES ?? "1,10").split(",").filter(Boolean).map(Number);

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
 * after them, which covers the tree's fold, Svelte's updates, style, layout and
 * paint; and every main-thread task over 50 ms with its start (ms after this call).
 */
const recordFrames = () => {
  window.__frames = [];
  window.__work = [];
  window.__longTasks = [];
  const origin = performance.now();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      window.__longTasks.push({ start: Math.round(entry.startTime - origin), duration: Math.round(entry.duration) });
  });
  observer.observe({ type: "longtask" });
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
  window.__stopFrames = () => {
    running = false;
    for (const entry of observer.takeRecords())
      window.__longTasks.push({ start: Math.round(entry.startTime - origin), duration: Math.round(entry.duration) });
    observer.disconnect();
    return { frames: window.__frames.slice(1), work: window.__work.slice(1), longTasks: window.__longTasks };
  };
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
    `  ${label.padEnd(34)} ${String(stats.frames).padStart(5)} frames  median ${stats.median.toFixed(1)} ms  p95 ${stats.p95.toFixed(1)} ms  max ${stats.max.toFixed(1)} ms  over 50 ms: ${stats.over50}`,
  );

const showLongTasks = (label, tasks) =>
  console.log(
    `  ${label}: ${tasks.length ? tasks.map((task) => `${task.duration} ms at ${(task.start / 1000).toFixed(2)} s`).join(", ") : "none"}`,
  );

/**
 * The page's main-thread tasks over 50 ms in a Chromium trace, with the CPU time the
 * thread spent in each (`tdur`): on a loaded machine a task's wall time grows while
 * the thread waits for a core, its CPU time does not.
 */
function longTasksOnCpu(traceEvents) {
  const mainThreads = new Set(
    traceEvents
      .filter((event) => event.name === "thread_name" && event.args?.name === "CrRendererMain")
      .map((event) => `${event.pid}/${event.tid}`),
  );
  return traceEvents
    .filter(
      (event) =>
        // The task's name in this Chromium's trace ("RunTask" in older ones).
        (event.name === "ThreadControllerImpl::RunTask" || event.name === "RunTask") &&
        event.dur > 50_000 &&
        mainThreads.has(`${event.pid}/${event.tid}`),
    )
    .map((event) => ({ wall: Math.round(event.dur / 1000), cpu: Math.round((event.tdur ?? 0) / 1000) }));
}

/** Replays the benchmark turn at `scale` in a fresh page and prints its figures beside the idle page's. */
async function replayAt(browser, scale) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}?bench=${scale}`);
  const input = page.getByRole("textbox", { name: "Message" });
  await input.waitFor();
  // The Calls tab, so that the live tree is on screen while the turn streams.
  await page.getByRole("tab", { name: "Calls" }).click();

  await page.evaluate(recordFrames);
  await page.waitForTimeout(2000);
  const idle = await page.evaluate(() => window.__stopFrames());

  await input.fill("replay the big turn");
  await browser.startTracing(page, { categories: ["toplevel"] });
  await page.evaluate(recordFrames);
  const started = Date.now();
  await input.press("Enter");
  await page
    .getByRole("listitem", { name: "Answer from agent0" })
    .getByText("bench done")
    .waitFor({ timeout: 600_000 });
  const elapsed = Date.now() - started;
  const busy = await page.evaluate(() => window.__stopFrames());
  const cpu = longTasksOnCpu(JSON.parse((await browser.stopTracing()).toString()).traceEvents);
  const items = await page.getByRole("treeitem").count();
  const calls = 1_000 * scale;
  const deltas = 20_000 * scale;
  console.log(
    `\nscale ${scale}×: replayed ${calls.toLocaleString("en")} calls and ${deltas.toLocaleString("en")} deltas (${(calls * 2 + deltas).toLocaleString("en")} events) in ${(elapsed / 1000).toFixed(1)} s; ${items} tree rows in the DOM (virtualized)`,
  );
  show("frame work, idle page (baseline)", summary(idle.work));
  show("frame work, while events stream", summary(busy.work));
  show("frame interval, idle (baseline)", summary(idle.frames));
  show("frame interval, while streaming", summary(busy.frames));
  showLongTasks('tasks over 50 ms, idle (PerformanceObserver "longtask")', idle.longTasks);
  showLongTasks("tasks over 50 ms during the replay (from the Enter)", busy.longTasks);
  console.log(
    `  the same from a trace, wall / CPU time of the page's thread (under load, wall time includes waiting for a core): ${cpu.length ? cpu.map((task) => `${task.wall} / ${task.cpu} ms`).join(", ") : "none"}`,
  );
  const longest = busy.frames.indexOf(Math.max(...busy.frames));
  console.log(
    `  longest interval: frame ${longest + 1} of ${busy.frames.length} (the first frames follow the key press that starts the turn)`,
  );
  await page.close();
}

/**
 * Opens the stored session of `events` events in a page where another session is
 * open: the time from the click on its row to the frame that shows its last
 * message, measured in the page, and the message elements in the DOM then.
 */
async function reopen(page, events) {
  const name = `Stored session of ${events.toLocaleString("en")} events`;
  const row = page.getByRole("list", { name: "Session list" }).getByRole("button", { name: new RegExp(`^${name}`) });
  await row.waitFor();
  const ms = await row.evaluate(
    (button) =>
      new Promise((resolve) => {
        const clicked = performance.now();
        button.click();
        const check = () => {
          const last = [...document.querySelectorAll('[aria-label="Chat"] ol > li')].find((item) =>
            item.textContent.includes("The last answer of the session."),
          );
          // The frame after the one the message is in: it has been laid out and painted.
          if (last) requestAnimationFrame(() => resolve(performance.now() - clicked));
          else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }),
  );
  // The chat's own items (each message is named), not the list items inside messages' Markdown.
  const [inDom, total, elements] = await page.evaluate(() => {
    const items = document.querySelectorAll('[aria-label="Chat"] ol > li[aria-label]');
    return [
      items.length,
      Number(items[0]?.getAttribute("aria-setsize") ?? items.length),
      document.getElementsByTagName("*").length,
    ];
  });
  // The page's JavaScript heap after a full collection. Both stored logs live in it
  // (the mocked backend runs in the page), so only the difference between the two
  // sessions is the open session's own: its chat entries and call trees.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize } = await cdp.send("Runtime.getHeapUsage");
  await cdp.detach();
  console.log(
    `  ${name.padEnd(34)} ${total.toLocaleString("en").padStart(6)} messages: the last shown ${ms.toFixed(0).padStart(5)} ms after the click; ${inDom} message elements, ${elements} elements in the DOM; JS heap ${(usedSize / 2 ** 20).toFixed(1)} MB`,
  );
}

try {
  await waitForServer();
  const browser = await launchChromium();
  for (const scale of scales) await replayAt(browser, scale);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}?stored=100,100000`);
  console.log("\nreopening a stored session (the chat and the trees replayed from its log):");
  // Each is opened from the other, twice; the second time is after the page's code has warmed up.
  for (const events of [100, 100_000, 100, 100_000]) await reopen(page, events);
  await page.close();
  await browser.close();
} finally {
  server.kill("SIGTERM");
}
