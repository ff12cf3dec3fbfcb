/** The shown theme: the user's pick, else the system's. */
import { describe, expect, it } from "vitest";
import type { Theme } from "../../bindings";
import { shownTheme, type Shown } from "./theme";

describe("shownTheme", () => {
  const cases: Array<[Theme | undefined, boolean, Shown]> = [
    [undefined, true, "dark"],
    [undefined, false, "light"],
    ["system", true, "dark"],
    ["system", false, "light"],
    ["light", true, "light"],
    ["dark", false, "dark"],
  ];
  it.each(cases)("choice %s, system dark %s", (choice, systemIsDark, expected) =>
    expect(shownTheme(choice, systemIsDark)).toBe(expected),
  );
});
