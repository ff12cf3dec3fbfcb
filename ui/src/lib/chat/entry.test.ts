/** The reply a finished turn shows: every step as it streamed when it ends with the answer. */
import { describe, expect, it } from "vitest";
import { fullAnswer } from "./entry";

describe("the reply of a finished turn", () => {
  it.each([
    [
      "The echo said hi.",
      "Let me ask the echo agent.\n\nThe echo said hi.",
      "Let me ask the echo agent.\n\nThe echo said hi.",
    ],
    ["The echo said hi.", "The echo said hi.\n", "The echo said hi."],
    // What streamed is not the answer (an escalation's, a fallback): the answer wins.
    ["Answer", "something else", "Answer"],
    // No answer: what streamed.
    ["", "partial words", "partial words"],
  ])("%j after %j shows %j", (final, streamed, shown) => expect(fullAnswer(final, streamed)).toBe(shown));
});
