/**
 * What a connection test's report says in one line: whether the agent was
 * reached, or only found (a command-line agent's program is looked for, never
 * started: a run would be a real, billed turn), and whether the server lists
 * models the agent should name one of.
 */
import type { ConnectionReport_Serialize as ConnectionReport } from "../../bindings";

/** The report's first line; `model` is the form's model (blank when none is named). */
export function summaryOf(report: ConnectionReport, model: string): string {
  if (!report.ok) return "The connection test failed.";
  const found = report.steps.length > 0 && report.steps.every((step) => step.name === "find the program");
  if (found) return "The program is there. It was not run: a test would start a real agent.";
  if (report.models.length > 0 && model.trim() === "")
    return "The server answers. It lists models, and this agent names none: pick one below.";
  return "The connection works.";
}
