/** Vite builds the UI into ui/dist, which the app embeds; vitest runs the unit and component tests. */
import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig(({ mode }) => ({
  plugins: [svelte()],
  clearScreen: false,
  server: { port: 5173, strictPort: true, host: "127.0.0.1" },
  // `--mode e2e` builds the same UI behind a mocked IPC (e2e.html) for Playwright.
  build:
    mode === "e2e"
      ? { target: "es2022", outDir: "dist-e2e", emptyOutDir: true, rollupOptions: { input: "e2e.html" } }
      : { target: "es2022", outDir: "dist", emptyOutDir: true },
  preview: { port: 4173, strictPort: true, host: "127.0.0.1" },
  resolve: { conditions: ["browser"] },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts"],
    setupFiles: ["src/test-setup.ts"],
  },
}));
