/**
 * Markdown for streamed replies, rendered incrementally: the text is cut at the
 * last block boundary outside a code fence; blocks before it are rendered once and
 * kept, only the tail is re-rendered as deltas arrive. Model text is untrusted: raw
 * HTML in it is shown as text, never rendered (a `<span hidden>` inside a code block
 * would make Copy copy what is not shown), the output is sanitized besides, code
 * blocks are highlighted and get a copy button.
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";
import { markedHighlight } from "marked-highlight";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";

for (const [name, language] of Object.entries({ bash, javascript, json, python, rust, typescript }))
  hljs.registerLanguage(name, language);
hljs.registerAliases(["sh", "shell"], { languageName: "bash" });
hljs.registerAliases(["js"], { languageName: "javascript" });
hljs.registerAliases(["ts"], { languageName: "typescript" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["rs"], { languageName: "rust" });

const marked = new Marked(
  markedHighlight({
    langPrefix: "hljs language-",
    highlight(code, language) {
      return language && hljs.getLanguage(language)
        ? hljs.highlight(code, { language }).value
        : code.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`);
    },
  }),
  {
    gfm: true,
    breaks: false,
    // Raw HTML, block or inline, is the model's text: shown, escaped, as written.
    renderer: { html: ({ text }) => escapeHtml(text) },
  },
);

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * What survives sanitizing besides Markdown's own markup: nothing that hides text,
 * takes an id (the focus shortcuts' targets) or acts as a control.
 */
const SANITIZE = {
  FORBID_TAGS: ["style", "form", "button", "textarea", "select", "option", "iframe"],
  FORBID_ATTR: ["id", "name", "style", "hidden", "form", "formaction", "tabindex", "accesskey"],
};

export function renderMarkdown(text: string): string {
  return withCopyButtons(DOMPurify.sanitize(marked.parse(text, { async: false }) as string, SANITIZE));
}

/** The label of a code block's copy button (the component copies the block it sits in). */
export const COPY_CODE_LABEL = "Copy code";

/**
 * Puts a copy button before each code block of sanitized HTML. Our own markup, added
 * after DOMPurify: a `<pre>` in the model's text was escaped by the `html` renderer,
 * so only Markdown's own blocks match.
 */
export function withCopyButtons(html: string): string {
  return html
    .replaceAll(
      "<pre>",
      `<div class="code-block"><button type="button" class="copy-code" aria-label="${COPY_CODE_LABEL}" title="${COPY_CODE_LABEL}">Copy</button><pre>`,
    )
    .replaceAll("</pre>", "</pre></div>");
}

/** The end of the longest prefix made of whole blocks: after the last blank line outside a code fence. */
export function stableEnd(text: string): number {
  let inFence = false;
  let end = 0;
  let lineStart = 0;
  while (lineStart < text.length) {
    const newline = text.indexOf("\n", lineStart);
    if (newline === -1) break;
    const line = text.slice(lineStart, newline);
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    else if (!inFence && line.trim() === "" && lineStart > 0) end = newline + 1;
    lineStart = newline + 1;
  }
  return end;
}

/** Renders a growing text, re-parsing only what changed since the last block boundary. */
export class IncrementalMarkdown {
  private text = "";
  private stable = 0;
  blocks: string[] = [];
  tail = "";

  /** `render` turns a whole-block text into HTML (the Markdown renderer unless given). */
  constructor(private readonly render: (text: string) => string = renderMarkdown) {}

  update(text: string): void {
    if (!text.startsWith(this.text.slice(0, this.stable))) {
      // The text was replaced, not extended: start over.
      this.stable = 0;
      this.blocks = [];
    }
    this.text = text;
    const end = stableEnd(text);
    if (end > this.stable) {
      this.blocks.push(this.render(text.slice(this.stable, end)));
      this.stable = end;
    }
    const rest = text.slice(this.stable);
    this.tail = rest ? this.render(rest) : "";
  }
}
