/**
 * The built-in MCP endpoint's settings in words and numbers: the port the user
 * typed, and what to say when the endpoint is switched on but not running. Pure, so
 * the settings section stays presentational.
 */
import type { McpServerStatus_Serialize as McpServerStatus } from "../../bindings";

/** The endpoint as it is when switched off (or before anything is known). */
export const stoppedEndpoint: McpServerStatus = {
  running: false,
  url: null,
  client_config: null,
  error: null,
  clients: [],
  token: null,
  token_kept: false,
  token_env: null,
};

/** The port the user typed: null when the field is empty (the last one used), "invalid" when it is no port. */
export function parsePort(text: string): number | null | "invalid" {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  if (!/^\d+$/.test(trimmed)) return "invalid";
  const port = Number(trimmed);
  return port <= 65535 ? port : "invalid";
}

/**
 * What the settings say is wrong with the endpoint, in plain words, or null: why it
 * did not start (the system's reason kept, with what to do about the usual ones), or
 * that it is switched on but not running (it could not start with the app).
 */
export function endpointProblem(status: McpServerStatus, switchedOn: boolean): string | null {
  if (status.running) return null;
  const reason = status.error;
  if (reason) {
    const lowered = reason.toLowerCase();
    const advice =
      lowered.includes("in use") || lowered.includes("os error 98")
        ? " Another program is using that port: choose another port (0 picks a free one) and try again."
        : lowered.includes("permission denied") || lowered.includes("os error 13")
          ? " Ports below 1024 need administrator rights: choose a port above 1024 and try again."
          : "";
    return `The MCP server could not start: ${reason.replace(/\.$/, "")}.${advice}`;
  }
  return switchedOn
    ? "The MCP server is switched on but not running: it could not start when the app did. Try again, or choose another port."
    : null;
}
