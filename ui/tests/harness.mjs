/**
 * What every browser suite shares: the built e2e UI served by `vite preview` on
 * the suites' port (4173, or E2E_PORT; a port in use ends it at once, so a suite
 * never tests someone else's server), Debian's Chromium, pages that collect the
 * page's errors, and a screenshot of a failure. `browserSuite` registers the
 * suite's `before` and `after` hooks; a suite adds its own hooks beside them.
 */
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { launchChromium } from "./chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const ui = path.resolve(here, "..");
export const artifacts = path.resolve(ui, "..", "tests", "artifacts");
mkdirSync(artifacts, { recursive: true });

const SERVER_START_MS = 15_000;
const ANSI_ESCAPE = /\x1b\[[0-9;]*m/g;

async function waitForServer(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not come up within ${timeoutMs} ms`);
}

/**
 * Serves the e2e build and opens Chromium for the suite. `query` is what a page
 * opens with unless told otherwise; `ignored(text)` says which console errors are
 * expected; `failurePrefix` names the failure screenshots.
 */
export function browserSuite({ query: defaultQuery = "", ignored = () => false, failurePrefix = "failure" } = {}) {
  const port = process.env.E2E_PORT ?? "4173";
  const suite = { base: `http://127.0.0.1:${port}/e2e.html`, browser: null, server: null };

  before(async () => {
    // The vite binary itself, not npx, so that killing it leaves no server behind.
    // NO_COLOR: vite colours its output when CI is set (picocolors), which would
    // split the address it prints with escape codes.
    suite.server = spawn(
      path.join(ui, "node_modules", ".bin", "vite"),
      ["preview", "--mode", "e2e", "--outDir", "dist-e2e", "--port", port],
      { cwd: ui, stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } },
    );
    // Ready when it says it serves on the port (escape codes ignored all the same),
    // or an error within SERVER_START_MS.
    await new Promise((resolve, reject) => {
      let printed = "";
      const timer = setTimeout(() => {
        reject(
          new Error(`vite preview did not say it serves on port ${port} within ${SERVER_START_MS} ms: ${printed}`),
        );
      }, SERVER_START_MS);
      suite.server.stdout.on("data", (chunk) => {
        printed += chunk;
        if (printed.replace(ANSI_ESCAPE, "").includes(`127.0.0.1:${port}/`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      suite.server.once("exit", () => {
        clearTimeout(timer);
        reject(new Error(`vite preview could not serve on port ${port}`));
      });
    });
    await waitForServer(suite.base, SERVER_START_MS);
    suite.browser = await launchChromium();
  });

  after(async () => {
    await suite.browser?.close();
    suite.server?.kill("SIGTERM");
  });

  /** A fresh 1280×800 page at `query`, with the errors it logs. */
  suite.openPage = async (query = defaultQuery) => {
    const page = await suite.browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = [];
    page.on("pageerror", (error) => problems.push(String(error)));
    page.on(
      "console",
      (message) => message.type() === "error" && !ignored(message.text()) && problems.push(message.text()),
    );
    await page.goto(suite.base + query);
    return { page, problems };
  };

  /** Runs `scenario` on a page (opened at `query`, or given as an opened one), which must log no error; a screenshot when it fails. */
  suite.withPage = async (name, scenario, query = defaultQuery) => {
    const { page, problems } = typeof query === "string" ? await suite.openPage(query) : await query;
    try {
      await scenario(page);
      assert.deepEqual(problems, []);
    } catch (error) {
      await page.screenshot({ path: path.join(artifacts, `${failurePrefix}-${name}.png`) });
      throw error;
    } finally {
      await page.close();
    }
  };

  return suite;
}

/**
 * Opens the settings page from the header, as a person does, on one of its
 * sections (General, Appearance, Agents & tools, MCP, Traces, Shortcuts).
 */
export async function openSettings(page, section) {
  const settings = page.getByRole("region", { name: "Settings" });
  if ((await settings.count()) === 0) await page.getByRole("button", { name: "Settings", exact: true }).click();
  await settings.getByRole("tab", { name: section, exact: true }).click();
  return settings;
}

/** Goes back to the chat from the settings page. */
export async function closeSettings(page) {
  await page.getByRole("button", { name: "← Back to chat" }).click();
  await page.getByRole("region", { name: "Settings" }).waitFor({ state: "detached" });
}
