/** Status labels and error descriptions, as the tree's accessible names and the details show them. */
import { describe, expect, it } from "vitest";
import type { ApprovalDecision, CallError } from "../../bindings";
import { describeApproval, describeError, emptyOutput, errorKindMeaning, rowStatus, statusLabel } from "./labels";
import type { NodeStatus } from "./model";

describe("statusLabel", () => {
  const cases: Array<[NodeStatus, string]> = [
    ["running", "running"],
    ["waiting", "waiting for approval"],
    ["ok", "ok"],
    ["denied", "denied"],
  ];
  it.each(cases)("%s", (status, expected) => expect(statusLabel(status)).toBe(expected));
});

describe("describeError", () => {
  const cases: Array<[CallError, string]> = [
    [{ kind: "timeout", message: "no answer within 30 s" }, "timeout: no answer within 30 s"],
    [{ kind: "unreachable", message: "connection refused" }, "unreachable: connection refused"],
  ];
  it.each(cases)("%j", (error, expected) => expect(describeError(error)).toBe(expected));
});

describe("errorKindMeaning", () => {
  it("says a refusal and a failure in different words", () => {
    expect(errorKindMeaning("cycle")).toBe("the agent is already on the call path");
    expect(errorKindMeaning("unreachable")).toBe("the model server could not be reached");
  });
});

describe("rowStatus", () => {
  it("says a call waiting on a question asks one, and otherwise reads as the status", () => {
    expect(rowStatus({ status: "waiting", question: "Which river?" })).toBe("asks a question");
    expect(rowStatus({ status: "waiting", question: null })).toBe("waiting for approval");
    expect(rowStatus({ status: "ok", question: null })).toBe("ok");
  });
});

describe("describeApproval", () => {
  const cases: Array<[ApprovalDecision, string, string]> = [
    ["approve_once", "policy", "approved once by the policy"],
    ["approve_always", "user", "approved for the session by the user"],
    ["deny", "user", "denied by the user"],
  ];
  it.each(cases)("%s by the %s", (decision, by, expected) => expect(describeApproval({ decision, by })).toBe(expected));
});

describe("an empty output", () => {
  it("is … while the call runs, and says why once it ended", () => {
    expect(emptyOutput({ status: "running", escalatedTo: null })).toBe("…");
    expect(emptyOutput({ status: "ok", escalatedTo: "expert" })).toMatch(/handed the turn to expert/);
    expect(emptyOutput({ status: "ok", escalatedTo: null })).toBe("No output.");
  });
});
