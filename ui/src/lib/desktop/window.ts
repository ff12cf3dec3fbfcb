/**
 * The window as the desktop sees it: its title (the waiting count shows in the task
 * bar), whether it has the focus, and desktop notifications with their clicks
 * (tauri-plugin-notification). Outside the app (a browser, the tests) each call does
 * what it can and never throws: the title goes to the page, a notification that
 * cannot be shown is skipped.
 */
import { getCurrentWindow } from "@tauri-apps/api/window";
import { isPermissionGranted, onAction, sendNotification } from "@tauri-apps/plugin-notification";

/** Sets the page's and the native window's title. */
export function setWindowTitle(title: string): void {
  if (document.title !== title) document.title = title;
  try {
    getCurrentWindow()
      .setTitle(title)
      .catch((error: unknown) => console.warn("could not set the window title:", error));
  } catch (error) {
    console.warn("could not set the window title:", error);
  }
}

/** Whether the user is looking at the window (it has the keyboard focus). */
export function windowHasFocus(): boolean {
  return document.hasFocus();
}

/** What a notification carries back when it is clicked. */
export type NotificationTarget = Record<string, string>;

/** Shows a desktop notification; false when notifications are not allowed or not available. */
export async function notify(title: string, body: string, target: NotificationTarget): Promise<boolean> {
  try {
    if (!(await isPermissionGranted())) return false;
    sendNotification({ title, body, extra: target });
    return true;
  } catch (error) {
    console.warn("could not show a notification:", error);
    return false;
  }
}

/**
 * Calls `onClick` with what a clicked notification carried (the shell raises the
 * window itself). The plugin's type says the callback gets the notification; what
 * arrives is `{actionId, notification}`, so it is read as that, leniently.
 */
export async function onNotificationClick(onClick: (target: NotificationTarget) => void): Promise<void> {
  try {
    await onAction((performed) => {
      const payload = performed as unknown as { actionId?: string; notification?: { extra?: Record<string, unknown> } };
      if (payload.actionId !== undefined && payload.actionId !== "tap") return;
      const extra = payload.notification?.extra ?? (performed.extra as Record<string, unknown> | undefined) ?? {};
      const target: NotificationTarget = {};
      for (const [key, value] of Object.entries(extra)) if (typeof value === "string") target[key] = value;
      onClick(target);
    });
  } catch (error) {
    console.warn("clicks on notifications will not select their call:", error);
  }
}
