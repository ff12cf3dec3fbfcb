/**
 * The traces form: the config's `telemetry` section as the form holds it (strings
 * as typed, headers one `header=VARIABLE` per line) and back, with what is wrong
 * said per field. A header's value is the NAME of an environment variable, never
 * the value itself, which the form never repeats.
 */
import type { TelemetryConfig_Deserialize as TelemetryConfig } from "../../bindings";
import { isVariableName, looksLikeKey } from "./agent-form";

export type TelemetryForm = {
  enabled: boolean;
  endpoint: string;
  /** `header=VARIABLE`, one per line. */
  headers: string;
  includeContent: boolean;
  serviceName: string;
};

export type TelemetryErrors = Partial<Record<keyof TelemetryForm, string>>;

/** The form for a section as the config holds it (none: export off, nothing set). */
export function telemetryForm(section: TelemetryConfig | null | undefined): TelemetryForm {
  return {
    enabled: section ? section.enabled !== false : false,
    endpoint: section?.endpoint ?? "",
    headers: Object.entries(section?.headers ?? {})
      .map(([header, variable]) => `${header}=${variable}`)
      .join("\n"),
    includeContent: section?.include_content === true,
    serviceName: section?.service_name ?? "",
  };
}

/** The section the form describes (null: no section, export off), or what is wrong with it. */
export function telemetryFrom(form: TelemetryForm): { section: TelemetryConfig | null; errors: TelemetryErrors } {
  const errors: TelemetryErrors = {};
  const endpoint = form.endpoint.trim();
  if (endpoint !== "" && !/^https?:\/\//.test(endpoint)) errors.endpoint = "Must start with http:// or https://";
  if (form.enabled && endpoint === "")
    errors.endpoint = "Required to export: the OTLP/HTTP address (such as http://127.0.0.1:4318)";
  const headers: Record<string, string> = {};
  form.headers.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const at = line.indexOf("=");
    const header = at > 0 ? line.slice(0, at).trim() : "";
    const variable = at > 0 ? line.slice(at + 1).trim() : "";
    if (!/^[A-Za-z0-9-]+$/.test(header))
      errors.headers = `line ${index + 1}: write header=VARIABLE (such as authorization=OTLP_TOKEN)`;
    else if (looksLikeKey(variable) || !isVariableName(variable))
      errors.headers = `line ${index + 1}: the NAME of the environment variable that holds the value, never the value`;
    else headers[header] = variable;
  });
  const nothing = !form.enabled && endpoint === "" && Object.keys(headers).length === 0;
  if (nothing) return { section: null, errors };
  const section: TelemetryConfig = { enabled: form.enabled };
  if (endpoint !== "") section.endpoint = endpoint;
  if (Object.keys(headers).length > 0) section.headers = headers;
  if (form.includeContent) section.include_content = true;
  if (form.serviceName.trim() !== "") section.service_name = form.serviceName.trim();
  return { section, errors };
}
