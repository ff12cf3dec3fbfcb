/**
 * The tool-agent entry form's model: an `AgentToolEntry` as typed (limits as text,
 * blank meaning "inherit"), its checks, and the way back to an entry for `set_tool`.
 * Also the words for why an entry is not offered to an agent, so that "why does X
 * not see Y" is answered on screen, and an approval in force (the core decides it) in
 * words. Pure; tested beside it.
 */
import type {
  Absence,
  AgentToolEntry_Deserialize as AgentToolEntry,
  AgentToolEntry_Serialize as AgentToolEntryShown,
  Approval,
  ApprovalFrom,
  EffectiveApprovals_Serialize as EffectiveApprovals,
  Limits_Deserialize as Limits,
  SessionMode,
} from "../../bindings";

/** A limit set as a number (narrowing, a switch, is kept as the file says). */
export type LimitField = Exclude<keyof Limits, "narrow_delegation">;

/** The limits an entry may set, with their labels; blank inherits the caller's or the global one. */
export const limitFields: Array<[LimitField, string, "whole" | "money"]> = [
  ["max_depth", "Max depth", "whole"],
  ["max_calls_per_turn", "Max calls per turn", "whole"],
  ["max_parallel", "Max parallel", "whole"],
  ["max_steps", "Max steps", "whole"],
  ["max_tokens_per_turn", "Max tokens per turn", "whole"],
  ["max_cost_per_turn", "Max cost per turn", "money"],
  ["timeout_secs", "Timeout (s)", "whole"],
  ["idle_timeout_secs", "Idle timeout (s)", "whole"],
];

/** An entry as the form holds it. */
export type ToolForm = {
  agent: string;
  description: string;
  enabled: boolean;
  /** Blank: the called agent's own `approval`, else ask. */
  approval: Approval | "";
  /** How many of the caller's last messages go along; blank is 0. */
  share_context: string;
  session: SessionMode;
  limits: Record<LimitField, string>;
};

export type ToolFormErrors = Partial<Record<"agent" | "description" | "share_context" | LimitField, string>>;

const text = (value: number | null | undefined) => (value === null || value === undefined ? "" : `${value}`);

/** The form for an entry (a new one when `entry` is null, for `agent` when given). */
export function toolFormFrom(entry: AgentToolEntry | AgentToolEntryShown | null, agent = ""): ToolForm {
  const limits = limitsText(entry?.limits);
  return {
    agent: entry?.agent ?? agent,
    description: entry?.description ?? "",
    enabled: entry?.enabled !== false,
    approval: entry?.approval ?? "",
    share_context: text(entry?.share_context),
    session: entry?.session ?? "fresh",
    limits,
  };
}

/**
 * The entry the form describes, or every field's message. `original` keeps what the
 * form does not show (and fields left as they were stay as written; a blank
 * `approval` leaves it to the called agent's own, else ask).
 */
export function entryFromToolForm(
  form: ToolForm,
  original: AgentToolEntry | AgentToolEntryShown | null,
): { entry: AgentToolEntry; errors: ToolFormErrors } {
  const errors: ToolFormErrors = {};
  const entry: AgentToolEntry = {
    ...(original as AgentToolEntry | null),
    agent: form.agent.trim(),
    description: form.description,
  };
  if (entry.agent === "") errors.agent = "Choose the agent this entry calls";
  if (form.description.trim() === "")
    errors.description = "Required: the calling model reads it to decide when to call";
  entry.enabled = form.enabled ? (original?.enabled === true ? true : null) : false;
  if (entry.enabled === null) delete entry.enabled;
  if (form.approval !== "") entry.approval = form.approval;
  else delete entry.approval;
  if (form.session !== "fresh" || original?.session) entry.session = form.session;
  else delete entry.session;
  const share = form.share_context.trim();
  delete entry.share_context;
  if (share !== "") {
    if (!/^\d+$/.test(share)) errors.share_context = "A whole number of messages (0 or more)";
    else entry.share_context = Number(share);
  }
  delete entry.limits;
  const limits = limitsFromForm(form.limits, original?.limits, errors);
  if (limits) entry.limits = limits;
  return { entry, errors };
}

/** Limits as text (blank inherits), from a form. */
export function limitsText(limits: Limits | null | undefined): Record<LimitField, string> {
  return Object.fromEntries(
    limitFields.map(([field]) => [field, text(limits?.[field] as number | null | undefined)]),
  ) as Record<LimitField, string>;
}

/**
 * The limits a form's fields say, or undefined when they set none; each bad
 * field's message goes into `errors` under its name. Fields of `original` the
 * form does not know are kept; the ones it shows are what the form says.
 */
export function limitsFromForm(
  values: Record<LimitField, string>,
  original: Limits | null | undefined,
  errors: Partial<Record<LimitField, string>>,
): Limits | undefined {
  const limits = Object.fromEntries(
    Object.entries(original ?? {}).filter(([field]) => !limitFields.some(([known]) => known === field)),
  ) as Limits;
  for (const [field, , kind] of limitFields) {
    const value = values[field].trim();
    if (value === "") continue;
    const number = Number(value);
    if (kind === "whole" && !/^\d+$/.test(value)) errors[field] = "A whole number";
    else if (kind === "money" && !(Number.isFinite(number) && number >= 0)) errors[field] = "A number, 0 or more";
    else if (field !== "max_depth" && kind === "whole" && number < 1) errors[field] = "At least 1";
    else limits[field] = number;
  }
  return Object.keys(limits).length > 0 ? limits : undefined;
}

/** Why an entry is absent from an agent's list, in plain words. */
export function absenceText(
  absence: Absence,
  entry: { tool_agent: string },
  caller: { name: string; provider?: string },
): string {
  switch (absence) {
    case "self_reference":
      return `calls itself (${caller.name} is never offered to ${caller.name})`;
    case "unknown_agent":
      return `no such agent: no agent named “${entry.tool_agent}” is configured`;
    case "disabled":
      return "disabled";
    case "not_callable":
      return "claude-cli agents are never called (they only call others)";
    case "depth_limit":
      return `depth limit 0: ${caller.name} may not delegate at all`;
    case "caller_cannot_call":
      return caller.provider
        ? `this provider cannot call tools (${caller.provider} agents only answer)`
        : "this provider cannot call tools";
  }
}

/** A short summary of an entry's limits ("depth 2 · 3 calls/turn"), empty when it sets none. */
export function limitsSummary(limits: Limits | null | undefined): string {
  if (!limits) return "";
  const parts: string[] = [];
  for (const [field, label] of limitFields) {
    const value = limits[field];
    if (value !== null && value !== undefined) parts.push(`${label.toLowerCase()} ${value}`);
  }
  return parts.join(" · ");
}

/** An approval in force as the core sends it, in words: the entry's own, the called agent's (said so), or ask by default. */
function approvalWords(approval: { approval: Approval; from: ApprovalFrom } | undefined): string {
  if (!approval) return "ask";
  return approval.from === "agent" ? `${approval.approval} (the agent's)` : approval.approval;
}

/** The approval in force for `toolAgent`'s entry in `owner`'s own list (the global list when null), in words. */
export function entryApprovalText(approvals: EffectiveApprovals, owner: string | null, toolAgent: string): string {
  return approvalWords(approvals.entries.find((row) => row.owner === owner && row.tool_agent === toolAgent));
}

/** What a call of `agent` gets through an entry that sets no approval, in words ("ask (it sets none)" by default). */
export function agentApprovalText(approvals: EffectiveApprovals, agent: string): string {
  const row = approvals.agents.find((candidate) => candidate.agent === agent);
  return !row || row.from === "default" ? "ask (it sets none)" : row.approval;
}
