/**
 * Copying text for the user: the asynchronous Clipboard API where the page may use
 * it, else the older copy command on a hidden selection (which WebKitGTK and
 * Chromium still honour inside a click). Never throws: it says whether it worked,
 * so a button can say "Copied" or "Select and copy by hand".
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (typeof navigator !== "undefined" && navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Refused (no permission, not a secure context): the older way may still work.
  }
  return copyBySelection(text);
}

function copyBySelection(text: string): boolean {
  if (typeof document === "undefined") return false;
  const scratch = document.createElement("textarea");
  scratch.value = text;
  scratch.setAttribute("readonly", "");
  scratch.style.position = "fixed";
  scratch.style.opacity = "0";
  document.body.appendChild(scratch);
  const focused = document.activeElement as HTMLElement | null;
  try {
    scratch.select();
    return document.execCommand("copy");
  } catch {
    return false;
  } finally {
    scratch.remove();
    focused?.focus?.();
  }
}
