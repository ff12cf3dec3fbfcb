/**
 * Playwright (playwright-core) in Debian's Chromium against the built UI with its
 * IPC mocked (vite build --mode e2e, served by vite preview): the window's three
 * areas, a turn streaming into the chat, a tree node in every status, the details
 * of a call, keyboard navigation, both themes, the MCP server's settings and an MCP
 * client's calls live in their session. Screenshots go to tests/artifacts/ for a
 * person to look at.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { artifacts, browserSuite, closeSettings, openSettings } from "./harness.mjs";

const suite = browserSuite();
const { openPage } = suite;

test("a turn streams into the chat and every node status shows in the tree", async () => {
  const { page, problems } = await openPage();
  await openSettings(page, "Agents & tools");
  await page.getByRole("list", { name: "Agents" }).getByText("researcher").first().waitFor();
  await closeSettings(page);
  await page.getByRole("tab", { name: "Calls" }).click();
  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill("How do agents call agents?");
  await input.press("Enter");

  const tree = page.getByRole("tree", { name: "Call tree" });
  // The summariser asks for approval: the tree shows it waiting, the chat prompts.
  await tree.getByRole("treeitem", { name: "summariser, waiting for approval" }).waitFor();
  const prompt = page.getByRole("alertdialog", { name: "summariser waits for approval" });
  await prompt.getByText("Again").waitFor();
  await page.screenshot({ path: path.join(artifacts, "approval-waiting.png") });
  await prompt.getByRole("button", { name: "Deny summariser" }).click();
  assert.deepEqual(
    await page.evaluate(() => window.__approvalAnswers.map(({ callId, decision }) => ({ callId, decision }))),
    [{ callId: "c5", decision: "deny" }],
  );
  for (const name of [
    "assistant, ok",
    "researcher, ok",
    "summariser, error",
    "coder, cancelled",
    "summariser, denied",
    "researcher, limited",
  ]) {
    await tree.getByRole("treeitem", { name }).waitFor({ timeout: 10_000 });
  }
  const answer = page.getByRole("listitem", { name: "Answer from assistant" });
  await answer.locator("strong", { hasText: "from the mocked turn" }).waitFor();
  assert.equal(
    await answer.locator("code.language-rust .hljs-keyword").first().textContent(),
    "fn",
    "code is highlighted",
  );
  assert.equal(await tree.getByRole("treeitem").count(), 6);
  assert.equal(await tree.getByRole("treeitem", { name: "assistant, ok" }).getAttribute("aria-expanded"), "true");

  // Chips in the answer open their node.
  await page.getByRole("button", { name: "Open call to summariser, error" }).click();
  const details = page.getByRole("region", { name: "Details of summariser" });
  await details.getByText("timeout: no answer within 30 s").waitFor();
  // A call that failed before it said anything shows its error, not an empty output above it.
  assert.equal(await details.getByLabel("Streamed output").count(), 0);
  await page.screenshot({ path: path.join(artifacts, "tree-statuses-light.png") });

  // Keyboard: from the root, Down moves to the first child; Enter opens it.
  await tree.getByRole("treeitem", { name: "assistant, ok" }).click();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await page
    .getByRole("region", { name: "Details of researcher" })
    .getByText("Find facts: How do agents call agents?")
    .waitFor();

  await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
  await page.screenshot({ path: path.join(artifacts, "tree-statuses-dark.png") });
  assert.deepEqual(problems, []);
  await page.close();
});

test("a running call shows a spinner, its progress line and a cancel button", async () => {
  const { page, problems } = await openPage("?hold");
  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill("hold on");
  await input.press("Enter");
  // Approve from the tree row this time.
  await page.getByRole("tree").getByRole("button", { name: "Always approve summariser" }).click();
  await page.getByRole("treeitem", { name: "summariser, ok" }).waitFor();
  // Once the other researcher (c6) is refused, the streaming one is the only one running.
  await page.getByRole("treeitem", { name: "researcher, limited" }).waitFor();
  const running = page.getByRole("treeitem", { name: "researcher, running" });
  await running.waitFor();
  await page.getByRole("tree").getByText("checking the facts").waitFor();
  await page.getByRole("button", { name: "Stop" }).waitFor();
  await running.click();
  await page.getByRole("button", { name: "Cancel researcher" }).waitFor();
  await page.screenshot({ path: path.join(artifacts, "tree-running.png") });
  await page.evaluate(() => window.__releaseTurn?.());
  await page.getByRole("treeitem", { name: "researcher, ok" }).waitFor();
  await page.getByRole("treeitem", { name: "assistant, ok" }).waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});

test("sessions persist and reopen, retry and edit, @agent completion, usage and export", async () => {
  const { page, problems } = await openPage();
  try {
    await sessionsScenario(page, problems);
  } catch (error) {
    await page.screenshot({ path: path.join(artifacts, "failure-sessions.png") });
    throw error;
  } finally {
    await page.close();
  }
});

async function sessionsScenario(page, problems) {
  const input = page.getByRole("textbox", { name: "Message" });
  const sessions = page.getByRole("list", { name: "Session list" });

  // @ completion of agent names.
  await input.fill("@re");
  await page.getByRole("listbox", { name: "Agents" }).getByRole("option", { name: "@researcher" }).waitFor();
  await input.press("Tab");
  assert.equal(await input.inputValue(), "@researcher ");

  // The first message creates a session titled after it.
  await input.fill("Plan the garden layout please");
  await input.press("Enter");
  const approveOnce = page.getByRole("button", { name: "Approve summariser once" }).first();
  await approveOnce.click();
  await page
    .getByRole("button", { name: "Retry the last message" })
    .waitFor()
    .catch(async (error) => {
      await page.screenshot({ path: path.join(artifacts, "debug-retry.png") });
      throw error;
    });
  await sessions.getByRole("button", { name: /^Plan the garden layout please/ }).waitFor();

  // A second session, then back to the first: its messages and tree are replayed from the log.
  await page.getByRole("button", { name: "New chat" }).click();
  await input.fill("Another topic entirely");
  await input.press("Enter");
  await page.getByRole("button", { name: "Deny summariser" }).first().click();
  await page
    .getByRole("button", { name: "Retry the last message" })
    .waitFor()
    .catch(async (error) => {
      await page.screenshot({ path: path.join(artifacts, "debug-retry.png") });
      throw error;
    });
  await sessions.getByRole("button", { name: /^Plan the garden/ }).click();
  await page.getByRole("listitem", { name: "You" }).getByText("Plan the garden layout please").waitFor();
  await page.getByRole("tree", { name: "Call tree" }).getByRole("treeitem", { name: "summariser, ok" }).waitFor();
  assert.equal(await page.getByRole("listitem", { name: "You" }).count(), 1);

  // Edit and resend: the last exchange comes back into the input.
  await page.getByRole("button", { name: "Edit and resend the last message" }).click();
  assert.equal(await input.inputValue(), "Plan the garden layout please");
  assert.equal(await page.getByRole("listitem", { name: "You" }).count(), 0);
  await input.fill("Plan the vegetable garden instead");
  await input.press("Enter");
  await page.getByRole("button", { name: "Always approve summariser" }).first().click();
  // What the UI sends is checked here; that the session then remembers the answer
  // (the retry below is not asked again) is the mock's stand-in for the engine,
  // whose own remembering is tested by the core's `approval_once_always_and_deny_from_the_user`
  // and `approve_always_comes_back_from_the_log_after_a_restart`, and on the real window.
  assert.equal(await page.evaluate(() => window.__approvalAnswers.at(-1).decision), "approve_always");
  await page.getByRole("button", { name: "Retry the last message" }).click();
  await page.getByRole("button", { name: "Retry the last message" }).waitFor();
  assert.equal(await page.getByRole("listitem", { name: "You" }).count(), 1, "retry replaces the last exchange");

  // Usage per agent, with charts; export of the shown turn.
  await page.getByRole("tab", { name: "Usage" }).click();
  const table = page.getByRole("table", { name: "Usage per agent" });
  await table.getByRole("cell", { name: "researcher" }).waitFor();
  await page.getByRole("img", { name: "Tokens per agent" }).waitFor();
  await page.getByRole("img", { name: "Cost per agent" }).waitFor();
  // Tokens per turn reads without hovering: each column its number and its turn.
  const perTurn = page.getByRole("list", { name: "Tokens per turn" }).getByRole("listitem");
  assert.equal(await perTurn.count(), 1);
  assert.match(await perTurn.first().innerText(), /^\d+(\.\d+k)?\n#1$/);
  const column = await perTurn.first().boundingBox();
  assert.ok(column && column.width <= 48, `one turn is one column, not a block: ${column?.width} px`);
  await page.screenshot({ path: path.join(artifacts, "usage.png") });
  // Every label and value sits inside its chart: none is cut at an edge.
  const outside = await page.evaluate(() =>
    [...document.querySelectorAll('svg.chart[aria-label$="per agent"] text')]
      .map((text) => ({ text: text.textContent, box: text.getBBox() }))
      .filter(({ box }) => box.x < 0 || box.x + box.width > 300)
      .map(({ text }) => text),
  );
  assert.deepEqual(outside, []);
  await page.getByRole("tab", { name: "Calls" }).click();
  await page.getByRole("button", { name: "Export JSON…" }).click();
  await page
    .getByRole("status")
    .getByText(/^Saved to \/home\/user\/Documents\/.*\.json$/)
    .waitFor();

  // Rename, search, delete.
  await page.getByRole("button", { name: "Rename Another topic entirely" }).click({ force: true });
  const rename = page.getByRole("textbox", { name: "New name for Another topic entirely" });
  await rename.fill("Side quest");
  await rename.press("Enter");
  await sessions.getByRole("button", { name: /^Side quest/ }).waitFor();
  await page.getByRole("searchbox", { name: "Search sessions" }).fill("garden");
  assert.equal(await sessions.getByRole("button", { name: /^Side quest/ }).count(), 0);
  await page.getByRole("searchbox", { name: "Search sessions" }).fill("");
  page.once("dialog", (dialog) => dialog.accept());
  // The delete icon is drawn by the UI: no emoji, which needs a font the machine may lack.
  const remove = page.getByRole("button", { name: "Delete Side quest" });
  assert.equal(await remove.locator("svg").count(), 1);
  assert.doesNotMatch(await remove.textContent(), /\p{Extended_Pictographic}/u);
  await remove.click({ force: true });
  await sessions.getByRole("button", { name: /^Side quest/ }).waitFor({ state: "detached" });
  await page.screenshot({ path: path.join(artifacts, "sessions.png") });
  assert.deepEqual(problems, []);
}

test("the MCP server switch shows the address and a client config to copy, and why it did not start", async () => {
  const { page, problems } = await openPage();
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(suite.base).origin });
  await openSettings(page, "MCP");
  const section = page.getByRole("region", { name: "MCP server" });
  const toggle = section.getByTestId("mcp-switch");
  assert.equal(await toggle.isChecked(), false, "off by default");
  assert.equal(await section.getByTestId("mcp-url").count(), 0);

  // A port the system refuses: the reason and what to do, in words; the switch stays on.
  await section.getByRole("textbox", { name: "Port" }).fill("80");
  await toggle.check();
  const error = section.getByTestId("mcp-error");
  await error.getByText("cannot listen on 127.0.0.1:80").waitFor();
  assert.match(await error.textContent(), /^The MCP server could not start: .*choose a port above 1024/);
  assert.equal(await toggle.isChecked(), true);
  await section.screenshot({ path: path.join(artifacts, "settings-mcp-error.png") });

  // Another port, tried again: the address and the snippet, which copies.
  await section.getByRole("textbox", { name: "Port" }).fill("8766");
  await section.getByRole("button", { name: "Try again" }).click();
  await section.getByTestId("mcp-url").getByText("http://127.0.0.1:8766/mcp").waitFor();
  assert.equal(await section.getByTestId("mcp-error").count(), 0);
  // Its token, shown this once, copies; the clients' configs name its variable, not it.
  const token = (await section.getByTestId("mcp-token").textContent()).trim();
  assert.match(token, /^[0-9a-f]{64}$/);
  await section.getByRole("button", { name: "Copy token" }).click();
  await section.getByRole("button", { name: "Copied" }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
  assert.match(await section.textContent(), /export SWITCHBOARD_MCP_TOKEN="\$\(switchboard mcp token\)"/);
  const snippet = JSON.parse(await section.getByTestId("mcp-snippet").textContent());
  const headers = { Authorization: "Bearer ${SWITCHBOARD_MCP_TOKEN}" };
  assert.deepEqual(snippet, {
    mcpServers: { switchboard: { type: "http", url: "http://127.0.0.1:8766/mcp", headers } },
  });
  assert.ok(!(await section.getByTestId("mcp-snippet").textContent()).includes(token));
  assert.equal(await section.getByRole("textbox", { name: "Port" }).isDisabled(), true, "fixed while it runs");
  await section.getByRole("button", { name: "Copy config" }).click();
  await section.getByRole("button", { name: "Copied" }).nth(1).waitFor();
  assert.deepEqual(JSON.parse(await page.evaluate(() => navigator.clipboard.readText())), snippet);
  // Each client's own config: Codex's table with the approval mode it needs, in its file.
  await section.getByRole("combobox", { name: "Client" }).selectOption("codex");
  await section.getByTestId("mcp-client-file").getByText("~/.codex/config.toml").waitFor();
  assert.match(
    await section.getByTestId("mcp-snippet").textContent(),
    /\[mcp_servers\.switchboard\][\s\S]*default_tools_approval_mode = "approve"/,
  );
  assert.match(await section.getByTestId("mcp-client-notes").textContent(), /structured result/);
  await section.getByRole("button", { name: "Copy config" }).click();
  await section.getByRole("button", { name: "Copied" }).nth(1).waitFor();
  assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^\[mcp_servers\.switchboard\]/);
  await section.screenshot({ path: path.join(artifacts, "settings-mcp.png") });
  await section.getByRole("combobox", { name: "Client" }).selectOption("claude-code");

  // The settings remember it: shown again as running when the page comes back.
  await closeSettings(page);
  await openSettings(page, "MCP");
  await section.getByTestId("mcp-url").getByText("http://127.0.0.1:8766/mcp").waitFor();
  assert.equal(await toggle.isChecked(), true);
  assert.equal(await section.getByTestId("mcp-token").count(), 0, "the token is shown once");
  await section.getByText("Kept in the system keyring, not shown again.").waitFor();
  // A new token, shown once; the old one is gone.
  await section.getByRole("button", { name: "New token" }).click();
  const rotated = (await section.getByTestId("mcp-token").textContent()).trim();
  assert.match(rotated, /^[0-9a-f]{64}$/);
  assert.notEqual(rotated, token);

  await toggle.uncheck();
  await section.getByTestId("mcp-url").waitFor({ state: "detached" });
  assert.equal(await toggle.isChecked(), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test("trace export: where it goes in settings, and a failing exporter as a warning in the status bar", async () => {
  const off = await openPage();
  await openSettings(off.page, "Traces");
  assert.match(await off.page.getByTestId("traces-status").textContent(), /Off\. Set OTEL_EXPORTER_OTLP_ENDPOINT/);
  assert.equal(await off.page.getByRole("status").filter({ hasText: "Trace export" }).count(), 0);
  await off.page.close();

  const on = await openPage("?traces=on");
  await openSettings(on.page, "Traces");
  await on.page.getByTestId("traces-status").getByText("http://127.0.0.1:4318/v1/traces").waitFor();
  assert.match(await on.page.getByTestId("traces-status").textContent(), /42 spans sent/);
  assert.equal(await on.page.getByRole("status").filter({ hasText: "Trace export" }).count(), 0);
  await on.page.close();

  const { page, problems } = await openPage("?traces=failing");
  const warning = page.getByRole("status").filter({ hasText: "Trace export" });
  await warning.waitFor();
  assert.equal((await warning.textContent()).trim(), "Trace export to http://127.0.0.1:4318/v1/traces is failing");
  await openSettings(page, "Traces");
  await page.getByText("The last export failed: Operation failed: connection refused").waitFor();
  await page.screenshot({ path: path.join(artifacts, "traces-failing.png") });
  assert.deepEqual(problems, []);
  await page.close();
});

test("an MCP client's calls show in the MCP calls session, live, and are approved in the tree", async () => {
  const { page, problems } = await openPage();
  try {
    await outsideCallsScenario(page, problems);
  } catch (error) {
    await page.screenshot({ path: path.join(artifacts, "failure-mcp-calls.png") });
    throw error;
  } finally {
    await page.close();
  }
});

async function outsideCallsScenario(page, problems) {
  const sessions = page.getByRole("list", { name: "Session list" });
  const tree = page.getByRole("tree", { name: "Call tree" });
  const answersOf = () =>
    page.evaluate(() => window.__approvalAnswers.map(({ turnId, decision }) => ({ turnId, decision })));

  // The user chats in a session of their own when a call comes in: it is a note on
  // the "MCP calls" row, and the user's chat is left as it is, and goes on.
  const input = page.getByRole("textbox", { name: "Message" });
  const ask = async (text) => {
    await input.fill(text);
    await input.press("Enter");
    await page.getByRole("button", { name: "Approve summariser once" }).first().click();
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
  };
  await ask("My own question");
  const first = await page.evaluate(() => window.__mcpCall("find otters", true).turnId);
  const mcpRow = sessions.getByRole("button", { name: /^MCP calls/ });
  await mcpRow.getByText("MCP client claude-code is calling agent_researcher").waitFor();
  assert.equal(await page.getByRole("button", { name: "New chat" }).isEnabled(), true, "the chat is not busy");
  await ask("A second question while the call waits");
  assert.deepEqual(await page.getByRole("listitem", { name: "You" }).allTextContents(), [
    "My own question",
    "A second question while the call waits",
  ]);
  assert.equal(await tree.getByRole("treeitem", { name: "researcher, waiting for approval" }).count(), 0);
  await page.screenshot({ path: path.join(artifacts, "mcp-call-note.png") });

  // Opening the session replays the running call from its log; it goes on live.
  await mcpRow.click();
  await page
    .getByRole("listitem", { name: "You" })
    .getByText("MCP client claude-code → agent_researcher: find otters")
    .waitFor();
  await page.getByRole("listitem", { name: "Answer from researcher" }).getByText("is answering…").waitFor();
  await tree.getByRole("treeitem", { name: "researcher, waiting for approval" }).waitFor();
  assert.equal(await page.getByRole("textbox", { name: "Message" }).count(), 0, "no input in the MCP calls session");
  await tree.getByRole("button", { name: "Approve researcher once" }).click();
  await tree.getByRole("treeitem", { name: "researcher, ok" }).waitFor();
  await page
    .getByRole("listitem", { name: "Answer from researcher" })
    .getByText("Otters: find otters, answered.")
    .waitFor();
  assert.deepEqual((await answersOf()).slice(-1), [{ turnId: first, decision: "approve_once" }]);
  await mcpRow.getByText("is calling").waitFor({ state: "detached" });

  // With the session open, the next call streams in as it comes: message, reply, tree.
  const second = await page.evaluate(() => window.__mcpCall("count the beavers", true).turnId);
  await page
    .getByRole("listitem", { name: "You" })
    .getByText("MCP client claude-code → agent_researcher: count the beavers")
    .waitFor();
  const waiting = tree.getByRole("treeitem", { name: "researcher, waiting for approval" });
  await waiting.waitFor();
  assert.equal(await page.getByRole("combobox", { name: "Turn" }).inputValue(), second, "the tree shows the new call");
  assert.equal(await page.getByRole("button", { name: "New chat" }).isEnabled(), true, "the chat is not busy");
  await page.screenshot({ path: path.join(artifacts, "mcp-call-live.png") });
  await tree.getByRole("button", { name: "Deny researcher" }).click();
  await tree.getByRole("treeitem", { name: "researcher, denied" }).waitFor();
  assert.deepEqual((await answersOf()).slice(-1), [{ turnId: second, decision: "deny" }]);
  await page
    .getByRole("listitem", { name: "Answer from researcher" })
    .getByRole("alert")
    .getByText("the user denied this call")
    .waitFor();
  assert.equal(await page.getByRole("listitem", { name: "You" }).count(), 2);
  await sessions.getByRole("button", { name: /^MCP calls 2 turns/ }).waitFor();

  // A call that comes and goes while the session is open needs no answer: it ends done.
  const third = await page.evaluate(async () => {
    const call = window.__mcpCall("say hello", false);
    await call.done;
    return call.turnId;
  });
  await page
    .getByRole("listitem", { name: "Answer from researcher" })
    .getByText("Otters: say hello, answered.")
    .waitFor();
  await page.getByRole("combobox", { name: "Turn" }).selectOption(third);
  await tree.getByRole("treeitem", { name: "researcher, ok" }).waitFor();
  assert.deepEqual(problems, []);
}
