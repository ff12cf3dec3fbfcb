/**
 * How a call's status and error read to people, in the tree, the details and the
 * chat. The one place that turns a status or an error kind into words.
 */
import type { CallError } from "../../bindings";
import type { NodeStatus } from "./model";

/** The status as people read it (and as the tree's accessible names say it). */
export function statusLabel(status: NodeStatus): string {
  return status === "waiting" ? "waiting for approval" : status;
}

/**
 * A call's error as the details show it: its kind, then its message. `kind` is a
 * plain string in today's bindings; once they make it the closed `CallErrorKind`
 * union, a `switch` here can give each kind its own phrase, checked for
 * exhaustiveness. Until then every kind reads as its wire name.
 */
export function describeError(error: CallError): string {
  return `${error.kind}: ${error.message}`;
}
