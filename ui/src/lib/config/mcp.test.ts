/** The MCP endpoint's settings: the port field and the problems the section explains. */
import { describe, expect, it } from "vitest";
import type { McpServerStatus_Serialize as McpServerStatus } from "../../bindings";
import { endpointProblem, parsePort, stoppedEndpoint } from "./mcp";

describe("parsePort", () => {
  const check = (text: string, expected: number | null | "invalid") => expect(parsePort(text)).toBe(expected);
  it.each([
    ["", null],
    ["  ", null],
    ["8765", 8765],
    [" 0 ", 0],
    ["65535", 65535],
    ["65536", "invalid"],
    ["-1", "invalid"],
    ["80.5", "invalid"],
    ["port", "invalid"],
  ] as const)("%j is %j", check);
});

describe("endpointProblem", () => {
  const status = (running: boolean, error: string | null): McpServerStatus => ({
    ...stoppedEndpoint,
    running,
    url: running ? "http://127.0.0.1:8765/mcp" : null,
    error,
  });
  const check = (running: boolean, error: string | null, switchedOn: boolean, expected: string | null) =>
    expect(endpointProblem(status(running, error), switchedOn)).toBe(expected);
  it.each([
    [true, null, true, null],
    [false, null, false, null],
    [
      false,
      null,
      true,
      "The MCP server is switched on but not running: it could not start when the app did. Try again, or choose another port.",
    ],
    [
      false,
      "cannot listen on 127.0.0.1:8765: Address already in use (os error 98)",
      true,
      "The MCP server could not start: cannot listen on 127.0.0.1:8765: Address already in use (os error 98). Another program is using that port: choose another port (0 picks a free one) and try again.",
    ],
    [
      false,
      "cannot listen on 127.0.0.1:80: Permission denied (os error 13)",
      true,
      "The MCP server could not start: cannot listen on 127.0.0.1:80: Permission denied (os error 13). Ports below 1024 need administrator rights: choose a port above 1024 and try again.",
    ],
    [false, "something odd.", true, "The MCP server could not start: something odd."],
  ] as const)("running %j, error %j, switched on %j", check);
});
