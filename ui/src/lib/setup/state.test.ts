/** The wizard offers itself once, on a first start only; a button opens it any time. */
import { describe, expect, it } from "vitest";
import { setupWizard } from "./state.svelte";

describe("setupWizard", () => {
  it("opens by itself once on a first start, and from a button after", () => {
    setupWizard.offerOnFirstStart(false);
    expect(setupWizard.isOpen).toBe(false);
    setupWizard.offerOnFirstStart(true);
    expect(setupWizard.isOpen).toBe(true);
    setupWizard.close();
    setupWizard.offerOnFirstStart(true);
    expect(setupWizard.isOpen).toBe(false);
    setupWizard.open();
    expect(setupWizard.isOpen).toBe(true);
  });
});
