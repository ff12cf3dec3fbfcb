/**
 * How a call's status and error read to people, in the tree, the details and the
 * chat. The one place that turns a status or an error kind into words.
 */
import type { ApprovalDecision, CallError, CallErrorKind } from "../../bindings";
import type { CallNode, NodeStatus } from "./model";

/** The status as people read it (and as the tree's accessible names say it). */
export function statusLabel(status: NodeStatus): string {
  return status === "waiting" ? "waiting for approval" : status;
}

/** A tree row's status: as `statusLabel`, but a call waiting on a remote agent's question "asks a question". */
export function rowStatus(node: Pick<CallNode, "status" | "question">): string {
  return node.status === "waiting" && node.question !== null ? "asks a question" : statusLabel(node.status);
}

/** What each kind of error means, in plain words (the switch fails to compile when a kind is added). */
export function errorKindMeaning(kind: CallErrorKind): string {
  switch (kind) {
    case "unreachable":
      return "the model server could not be reached";
    case "timeout":
      return "it took longer than its time limit";
    case "http":
      return "the model server answered with an error";
    case "malformed_stream":
      return "the model server's stream broke off or was not valid";
    case "subprocess":
      return "the agent's program failed or could not start";
    case "remote":
      return "the remote agent (an MCP tool or an A2A agent) reported a failure";
    case "config":
      return "the agent's configuration cannot be used";
    case "internal":
      return "a bug in Switchboard";
    case "unknown_agent":
      return "no such agent is configured";
    case "unknown_tool":
      return "the model called a tool that does not exist";
    case "bad_arguments":
      return "the model's arguments for the call were not usable";
    case "not_offered":
      return "this tool was not offered to the caller here";
    case "cycle":
      return "the agent is already on the call path";
    case "max_calls_per_turn":
      return "the turn reached its limit of tool-agent calls";
    case "budget":
      return "the turn's token or cost budget is spent";
    case "narrowed":
      return "narrowing keeps this delegate to what its caller could call";
    case "denied":
      return "the call was denied";
    case "cancelled":
      return "the call was cancelled";
    case "limited":
      return "the call reached its limit of model steps";
    default: {
      const unhandled: never = kind;
      return unhandled;
    }
  }
}

/** A call's error as the details show it: its kind, then its message. */
export function describeError(error: CallError): string {
  return `${error.kind}: ${error.message}`;
}

/** An answered approval in words ("approved once by the policy"), never the decision's wire name. */
export function describeApproval(approval: { decision: ApprovalDecision; by: string }): string {
  const decided =
    approval.decision === "approve_once"
      ? "approved once"
      : approval.decision === "approve_always"
        ? "approved for the session"
        : "denied";
  return `${decided} by the ${approval.by}`;
}

/**
 * What a call's Output says when it streamed no text: "…" while it runs; after,
 * why there is none (it handed the turn over, or it said nothing).
 */
export function emptyOutput(node: Pick<CallNode, "status" | "escalatedTo">): string {
  if (node.escalatedTo)
    return `No output of its own: it handed the turn to ${node.escalatedTo}, whose answer is the turn's.`;
  if (node.status === "running" || node.status === "waiting") return "…";
  return "No output.";
}
