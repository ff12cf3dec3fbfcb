/**
 * Whether the setup wizard is open. It opens by itself once, on the first start
 * (the app has just written the demo config), and whenever a "Run setup…" button
 * calls `setupWizard.open()`.
 */
class SetupWizardState {
  isOpen = $state(false);
  /** Whether the wizard was ever offered by itself, so that it is offered once. */
  private offeredOnFirstStart = false;

  open(): void {
    this.isOpen = true;
  }

  close(): void {
    this.isOpen = false;
  }

  /** Opens the wizard when the config is the demo one the app just wrote, once per run. */
  offerOnFirstStart(firstStart: boolean): void {
    if (!firstStart || this.offeredOnFirstStart) return;
    this.offeredOnFirstStart = true;
    this.isOpen = true;
  }
}

export const setupWizard = new SetupWizardState();
