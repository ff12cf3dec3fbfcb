/** The traces form: its section round trip, and what is wrong said per field without repeating a secret. */
import { describe, expect, it } from "vitest";
import { telemetryForm, telemetryFrom } from "./telemetry-form";

describe("the traces form", () => {
  it("round-trips a section, headers by variable name", () => {
    const section = {
      enabled: true,
      endpoint: "http://127.0.0.1:4318",
      headers: { authorization: "OTLP_TOKEN" },
      include_content: true,
      service_name: "desk",
    };
    expect(telemetryFrom(telemetryForm(section))).toEqual({ section, errors: {} });
  });

  it("writes no section when export is off and nothing is set, and wants an endpoint to export", () => {
    expect(telemetryFrom(telemetryForm(null))).toEqual({ section: null, errors: {} });
    const on = { ...telemetryForm(null), enabled: true };
    expect(telemetryFrom(on).errors.endpoint).toMatch(/Required to export/);
    expect(telemetryFrom({ ...on, endpoint: "127.0.0.1:4318" }).errors.endpoint).toMatch(/http:\/\//);
  });

  it("refuses a header's value in place of its variable's name, without repeating it", () => {
    const form = {
      ...telemetryForm(null),
      enabled: true,
      endpoint: "http://x",
      headers: "x-api-key=sk-live-abc123def456",
    };
    const message = telemetryFrom(form).errors.headers ?? "";
    expect(message).toMatch(/line 1: the NAME/);
    expect(message).not.toContain("sk-live");
    expect(telemetryFrom({ ...form, headers: "no equals sign" }).errors.headers).toMatch(/header=VARIABLE/);
  });
});
