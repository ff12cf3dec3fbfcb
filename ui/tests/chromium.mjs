/**
 * Debian's Chromium for the browser suites, driven by playwright-core (which never
 * downloads a browser), with the flags that keep it off this machine's closed
 * network: one place for the launch the Playwright suite and the benchmark share.
 */
import { chromium } from "playwright-core";

export function launchChromium() {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
