/**
 * The configuration forms in Debian's Chromium (playwright-core) against the built
 * UI with its IPC mocked (`vite build --mode e2e`, served by `vite preview`; the
 * config commands answered by tests/mock-config.ts): the "Agents & tools" sheet
 * opened and closed by keyboard, an agent added through its checks and a connection
 * test, tool entries edited and switched in both scopes, an agent removed with the
 * question about its entries, the effective list with its reasons, the call graph,
 * conflicts (keep mine, take theirs), a broken file's banner and an outside change.
 * Screenshots go to tests/artifacts/config-*.png for a person to look at.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { artifacts, browserSuite, closeSettings, openSettings } from "./harness.mjs";

const suite = browserSuite({ query: "?config-forms" });
const { withPage } = suite;

/** Opens the sheet from Settings → Agents & tools and returns it. */
async function openSheet(page) {
  await openSettings(page, "Agents & tools");
  await page.getByRole("button", { name: "Edit agents and tools…" }).click();
  const sheet = page.getByRole("dialog", { name: "Agents & tools" });
  await sheet.waitFor();
  return sheet;
}

const lastEdit = (page) => page.evaluate(() => window.__configEdits.at(-1));

test("the sheet opens from Settings and by keyboard, and Escape closes it", () =>
  withPage("sheet", async (page) => {
    await openSettings(page, "Agents & tools");
    await page.getByRole("button", { name: "Edit agents and tools…" }).waitFor();
    await page.screenshot({ path: path.join(artifacts, "config-settings-tab.png") });
    const sheet = await openSheet(page);
    const agents = sheet.getByRole("list", { name: "Configured agents" });
    for (const name of ["assistant", "researcher", "summariser", "coder", "expert"])
      await agents.getByRole("button", { name: new RegExp(`^${name}`) }).waitFor();
    await sheet.getByRole("form", { name: "Agent assistant" }).waitFor();
    // The problem of coder's entry for a removed agent shows beside that entry, not only in a list.
    await page.screenshot({ path: path.join(artifacts, "config-agents.png") });

    // What is typed survives picking another agent and closing the sheet.
    const assistant = sheet.getByRole("form", { name: "Agent assistant" });
    await assistant.getByLabel("Model", { exact: true }).fill("half-typed");
    await agents.getByRole("button", { name: /^researcher/ }).click();
    await agents.getByRole("button", { name: /^assistant.*unsaved/ }).waitFor();
    await agents.getByRole("button", { name: /^assistant/ }).click();
    await assistant.getByText("unsaved changes (kept from before)").waitFor();
    assert.equal(await assistant.getByLabel("Model", { exact: true }).inputValue(), "half-typed");

    await page.keyboard.press("Escape");
    await sheet.waitFor({ state: "detached" });
    // Focus went back to the button that opened it.
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Edit agents and tools…");
    await page.keyboard.press("Control+e");
    await page.getByRole("dialog", { name: "Agents & tools" }).waitFor();
    const reopened = page
      .getByRole("dialog", { name: "Agents & tools" })
      .getByRole("form", { name: "Agent assistant" });
    assert.equal(await reopened.getByLabel("Model", { exact: true }).inputValue(), "half-typed");
    await reopened.getByRole("button", { name: "Revert" }).click();
    assert.equal(await reopened.getByLabel("Model", { exact: true }).inputValue(), "demo-planner");
    await page.getByRole("button", { name: "Close agents and tools" }).click();
    await sheet.waitFor({ state: "detached" });
    // The settings page keeps what it showed; Escape goes back to the chat, and
    // Ctrl+, comes back to the section last looked at.
    await page.getByRole("list", { name: "Agents" }).getByText("researcher").first().waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("region", { name: "Settings" }).waitFor({ state: "detached" });
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    await page.keyboard.press("Control+,");
    const settings = page.getByRole("region", { name: "Settings" });
    assert.equal(await settings.getByRole("tab", { name: "Agents & tools" }).getAttribute("aria-selected"), "true");
    await settings.getByRole("tab", { name: "Agents & tools" }).press("ArrowDown");
    await settings.getByRole("heading", { name: "MCP server" }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "MCP");
  }));

test("an agent is added through the form's checks and a connection test", () =>
  withPage("add-agent", async (page) => {
    const sheet = await openSheet(page);
    await sheet.getByRole("button", { name: "+ Add agent" }).click();
    const form = sheet.getByRole("form", { name: "New agent" });
    await form.getByRole("button", { name: "Add agent" }).click();
    await form.getByText("Required: the name callers use").waitFor();
    await form.getByText("Required: the server's address").waitFor();
    assert.equal(await form.getByLabel("Name", { exact: true }).getAttribute("aria-invalid"), "true");

    await form.getByLabel("Name", { exact: true }).fill("writer");
    await form.getByLabel("URL", { exact: true }).fill("127.0.0.1:9999");
    const key = "sk-proj-0123456789abcdefghij";
    await form.getByLabel("API key", { exact: true }).selectOption("env");
    await form.getByLabel("API key: NAME of an environment variable", { exact: true }).fill(key);
    await form.getByLabel("Timeout (seconds)", { exact: true }).fill("soon");
    await form.getByRole("button", { name: "Add agent" }).click();
    await form.getByText("Must start with http:// or https://").waitFor();
    await form.getByText("This looks like a key.").waitFor();
    await form.getByText("Must be a whole number of seconds").waitFor();
    // The key is never repeated on screen.
    assert.equal(await form.getByText(key).count(), 0);
    assert.equal(await page.evaluate(() => window.__configEdits.length), 0);

    // Only the fields a provider needs are shown.
    await form.getByLabel("Provider", { exact: true }).selectOption("subprocess");
    await form.getByLabel("Command", { exact: true }).waitFor();
    await form.getByText("Result extraction (output rules)").waitFor();
    assert.equal(await form.getByLabel("URL", { exact: true }).count(), 0);
    await form.getByLabel("Answer", { exact: true }).selectOption("after_marker");
    await form.getByLabel("Marker", { exact: true }).waitFor();
    await form.getByLabel("Arguments", { exact: true }).fill("--message={request}\n--yes");
    await form.getByLabel("Environment", { exact: true }).fill("MODE=fast\nbroken line");
    await form.getByRole("button", { name: "Add agent" }).click();
    await form.getByText("line 2: write NAME=value").waitFor();
    await form.getByText("Required when the answer follows a marker").waitFor();
    await page.screenshot({ path: path.join(artifacts, "config-agent-form-cli.png") });
    // An mcp agent is a program or an address.
    await form.getByLabel("Provider", { exact: true }).selectOption("mcp");
    await form.getByLabel("Request argument", { exact: true }).waitFor();
    await form.getByLabel("An address (streamable HTTP)").check();
    await form.getByLabel("URL", { exact: true }).waitFor();
    assert.equal(await form.getByLabel("Command", { exact: true }).count(), 0);
    await form.getByLabel("Provider", { exact: true }).selectOption("a2a");
    assert.equal(await form.getByLabel("Model", { exact: true }).count(), 0);
    await form.getByLabel("Provider", { exact: true }).selectOption("local");
    assert.equal(await form.getByLabel("Command", { exact: true }).count(), 0);

    await form.getByLabel("URL", { exact: true }).fill("http://127.0.0.1:9999");
    await form.getByLabel("API key", { exact: true }).selectOption("env");
    await form.getByLabel("API key: NAME of an environment variable", { exact: true }).fill("WRITER_KEY");
    await form.getByLabel("Timeout (seconds)", { exact: true }).fill("30");
    // An HTTP agent with no model is told so before it is saved.
    await form.getByText("No model: most servers refuse a request without one.").waitFor();
    await form.getByLabel("Model", { exact: true }).fill("qwen2.5-coder");
    assert.equal(await form.getByText("No model: most servers refuse").count(), 0);
    await form.getByRole("button", { name: "Test connection" }).click();
    const steps = form.getByRole("list", { name: "Connection test steps" });
    await steps.getByText("list models").waitFor();
    await steps.getByText("stream a reply").waitFor();
    await steps.getByText("240 ms").waitFor();
    await form.getByText("First token after 97 ms.").waitFor();
    // The server's models are a choice: picking one fills the Model field.
    const models = form.getByRole("group", { name: "The server's models" });
    assert.deepEqual(await models.getByRole("button").allTextContents(), ["qwen2.5-coder", "llama3.2", "gemma3"]);
    assert.equal(
      await models.getByRole("button", { name: "Use model qwen2.5-coder" }).getAttribute("aria-pressed"),
      "true",
    );
    await models.getByRole("button", { name: "Use model llama3.2" }).click();
    assert.equal(await form.getByLabel("Model", { exact: true }).inputValue(), "llama3.2");
    await models.getByRole("button", { name: "Use model qwen2.5-coder" }).click();
    await page.screenshot({ path: path.join(artifacts, "config-agent-form.png") });

    // A server that is down: the failing step and what to check.
    await form.getByLabel("URL", { exact: true }).fill("http://down.invalid:1");
    await form.getByRole("button", { name: "Test connection" }).click();
    await form.getByText("The connection test failed.").waitFor();
    await form.getByText(/connection refused\. Is the server running/).waitFor();
    await form.getByLabel("URL", { exact: true }).fill("http://127.0.0.1:9999");

    await form.getByRole("button", { name: "Add agent" }).click();
    await sheet
      .getByRole("list", { name: "Configured agents" })
      .getByRole("button", { name: /^writer/ })
      .waitFor();
    assert.deepEqual(await lastEdit(page), {
      op: "add_agent",
      agent: {
        name: "writer",
        provider: "local",
        url: "http://127.0.0.1:9999",
        model: "qwen2.5-coder",
        api_key_env: "WRITER_KEY",
        timeout_secs: 30,
      },
    });
    await sheet.getByRole("form", { name: "Agent writer" }).waitFor();
    // The saved agent's form opens at its top, its heading in view (the save was
    // pressed at the bottom), and so does a new one.
    const formBox = sheet.getByRole("region", { name: "Agent form" });
    const atTop = async (heading) => {
      await sheet.getByRole("heading", { name: heading }).waitFor();
      await page.waitForFunction(() => document.querySelector('[aria-label="Agent form"]').scrollTop === 0);
      const box = await formBox.boundingBox();
      const title = await sheet.getByRole("heading", { name: heading }).boundingBox();
      assert.ok(title.y >= box.y && title.y + title.height <= box.y + box.height, `${heading} is out of view`);
    };
    await atTop("Agent writer");
    await formBox.evaluate((element) => (element.scrollTop = element.scrollHeight));
    // "+ Add agent" again is a new, empty form: not the agent just added, as a draft.
    await sheet.getByRole("button", { name: "+ Add agent" }).click();
    await atTop("New agent");
    const fresh = sheet.getByRole("form", { name: "New agent" });
    assert.equal(await fresh.getByLabel("Name", { exact: true }).inputValue(), "");
    assert.equal(await fresh.getByText(/exists already|unsaved/).count(), 0);
    await sheet
      .getByRole("list", { name: "Configured agents" })
      .getByRole("button", { name: /^writer/ })
      .click();
    assert.equal(
      await sheet.getByRole("list", { name: "Configured agents" }).getByText("unsaved").count(),
      0,
      "no draft is left of either form",
    );

    // The limits of its own calls.
    const limits = sheet.getByRole("form", { name: "Agent writer" });
    await limits.getByText("Limits of its calls").click();
    await limits.getByLabel("Max depth", { exact: true }).fill("0");
    const test = () => limits.getByRole("button", { name: "Test connection" }).boundingBox();
    // Measured where the pointer will be: the Save button in view.
    await limits.getByRole("button", { name: "Save" }).scrollIntoViewIfNeeded();
    const testBefore = await test();
    await limits.getByRole("button", { name: "Save" }).click();
    await limits.getByText("Saved writer.").waitFor();
    assert.equal(
      await page.getByText("Config reloaded from disk").count(),
      0,
      "the window's own save is not said to come from disk",
    );
    assert.equal((await test()).y, testBefore.y, "the saved note moves nothing under the pointer");
    assert.deepEqual((await lastEdit(page)).agent.limits, { max_depth: 0 });
    // Its calls run unasked where an entry does not say otherwise.
    await limits.getByLabel("Approval of calls to it", { exact: true }).selectOption("auto");
    await limits.getByRole("button", { name: "Save" }).click();
    await page.waitForFunction(() => window.__configEdits.at(-1)?.agent?.approval === "auto");

    // A name the backend refuses is shown as it words it.
    const writer = sheet.getByRole("form", { name: "Agent writer" });
    await writer.getByLabel("Name", { exact: true }).fill("coder");
    await writer.getByRole("button", { name: "Save" }).click();
    await writer.getByText('An agent named "coder" exists already').waitFor();
  }));

test("an HTTP agent's key goes to the keyring on save; the config names the entry, never the key", () =>
  withPage("keyring-key", async (page) => {
    const sheet = await openSheet(page);
    await sheet.getByRole("button", { name: "+ Add agent" }).click();
    const form = sheet.getByRole("form", { name: "New agent" });
    assert.equal(
      await form.getByLabel("API key", { exact: true }).inputValue(),
      "none",
      "a new HTTP agent sends no key",
    );
    await form.getByLabel("Name", { exact: true }).fill("hosted");
    await form.getByLabel("URL", { exact: true }).fill("https://api.example.test/v1");
    await form.getByLabel("Model", { exact: true }).fill("gpt-test");
    await form.getByLabel("API key", { exact: true }).selectOption("keyring");
    const key = form.getByLabel("Key", { exact: true });
    assert.equal(await key.getAttribute("type"), "password", "the key is never shown as typed");
    await form.getByRole("button", { name: "Add agent" }).click();
    await form.getByText("Paste the key: it is stored in the system keyring").waitFor();
    await key.fill("sk-pasted \n");
    await form.getByText("The key has spaces around it or a line break in it").waitFor();
    await key.fill("sk-test-kept-in-the-keyring");
    await form.getByRole("button", { name: "Add agent" }).click();
    await sheet.getByRole("form", { name: "Agent hosted" }).waitFor();
    assert.deepEqual(await page.evaluate(() => window.__keyring), { hosted: "sk-test-kept-in-the-keyring" });
    const added = await lastEdit(page);
    assert.deepEqual(added, {
      op: "add_agent",
      agent: {
        name: "hosted",
        provider: "local",
        url: "https://api.example.test/v1",
        model: "gpt-test",
        api_key_keyring: "hosted",
      },
    });
    const edits = await page.evaluate(() => JSON.stringify(window.__configEdits));
    assert.ok(!edits.includes("sk-test-kept-in-the-keyring"), "the key is in no edit");
    // Opened again, the form says a key is stored, shows none, and can remove it.
    const saved = sheet.getByRole("form", { name: "Agent hosted" });
    assert.equal(await saved.getByLabel("Key", { exact: true }).inputValue(), "");
    await saved.getByText("A key is stored in the system keyring (entry hosted).").waitFor();
    await saved.getByRole("button", { name: "Remove the stored key" }).click();
    await saved.getByText("The key stored for hosted was removed from the system keyring.").waitFor();
    assert.deepEqual(await page.evaluate(() => window.__keyring), {});
  }));

test("the traces form writes the telemetry section, headers by variable name", () =>
  withPage("telemetry-form", async (page) => {
    await openSettings(page, "Traces");
    const form = page.getByRole("form", { name: "Trace export" });
    await form.getByLabel("Export each call tree as traces").check();
    await form.getByRole("button", { name: "Save trace settings" }).click();
    await form.getByText("Required to export: the OTLP/HTTP address").waitFor();
    await form.getByLabel("OTLP/HTTP endpoint").fill("http://127.0.0.1:4318");
    await form.getByLabel("Headers").fill("x-api-key=sk-live-abc123def456");
    await form.getByRole("button", { name: "Save trace settings" }).click();
    await form.getByText("line 1: the NAME of the environment variable").waitFor();
    assert.equal(await form.getByText(/sk-live/).count(), 0, "the pasted value is not repeated");
    await form.getByLabel("Headers").fill("authorization=OTLP_TOKEN");
    await form.getByLabel("Put requests and answers on the spans").check();
    await form.getByRole("button", { name: "Save trace settings" }).click();
    await form.getByText("Saved. The app exports with these settings from its next start.").waitFor();
    assert.deepEqual(await lastEdit(page), {
      op: "set_telemetry",
      telemetry: {
        enabled: true,
        endpoint: "http://127.0.0.1:4318",
        headers: { authorization: "OTLP_TOKEN" },
        include_content: true,
      },
    });
  }));

test("tool entries are edited, switched and added in both scopes", () =>
  withPage("tools", async (page) => {
    const sheet = await openSheet(page);
    await sheet.getByRole("tab", { name: "Tool-agents" }).click();
    const global = sheet.getByRole("table", { name: "Global tool-agents", exact: true });
    await global.getByRole("button", { name: "Edit researcher" }).click();
    const entry = sheet.getByRole("form", { name: "Entry agent_researcher" });
    // Escape gives up the entry form, not the sheet.
    await entry.getByLabel("Description", { exact: true }).press("Escape");
    await entry.waitFor({ state: "detached" });
    await sheet.waitFor();
    await global.getByRole("button", { name: "Edit researcher" }).click();
    await entry.getByLabel("Description", { exact: true }).fill("Finds facts, with sources.");
    await entry.getByLabel("Approval", { exact: true }).selectOption("auto");
    await entry.getByLabel("Max depth", { exact: true }).fill("1");
    await entry.getByLabel("Max steps", { exact: true }).fill("0");
    await entry.getByRole("button", { name: "Save entry" }).click();
    await entry.getByText("At least 1").waitFor();
    await entry.getByLabel("Max steps", { exact: true }).fill("6");
    await entry.getByLabel("Session", { exact: true }).selectOption("persistent");
    await entry.getByRole("button", { name: "Save entry" }).click();
    await entry.waitFor({ state: "detached" });
    assert.deepEqual(await lastEdit(page), {
      op: "set_tool",
      target: { kind: "global" },
      entry: {
        agent: "researcher",
        description: "Finds facts, with sources.",
        approval: "auto",
        session: "persistent",
        limits: { max_depth: 1, max_steps: 6 },
      },
      previous: "researcher",
    });
    const row = global.getByRole("row", { name: /agent_researcher/ });
    await row.getByText("Finds facts, with sources.").waitFor();
    await row.getByText("max depth 1 · max steps 6 · persistent session").waitFor();
    // The approval column says what the core decided: the entry's own now.
    assert.equal(await row.getByRole("cell").nth(3).textContent(), "auto");
    assert.equal(
      (
        await global
          .getByRole("row", { name: /agent_summariser/ })
          .getByRole("cell")
          .nth(3)
          .textContent()
      ).trim(),
      "ask",
    );

    // Disable, then enable, a global entry.
    const summariser = global.getByRole("switch", { name: "summariser enabled" });
    await summariser.uncheck();
    await page.waitForFunction(() => window.__configEdits.at(-1)?.op === "disable_tool");
    assert.equal(await summariser.isChecked(), false);
    await summariser.check();
    await page.waitForFunction(() => window.__configEdits.at(-1)?.op === "enable_tool");

    // For an agent: switching an inherited global entry off creates its own entry.
    await sheet.getByRole("combobox", { name: "Tool-agents of" }).selectOption("researcher");
    const own = sheet.getByRole("table", { name: "Tool-agents of researcher", exact: true });
    await own
      .getByRole("row", { name: /agent_coder/ })
      .getByText("global (inherited)")
      .waitFor();
    await own.getByRole("switch", { name: "coder enabled" }).uncheck();
    await own
      .getByRole("row", { name: /agent_coder/ })
      .getByText("override")
      .waitFor();
    assert.deepEqual(await lastEdit(page), {
      op: "disable_tool",
      target: { kind: "agent", agent: "researcher" },
      tool_agent: "coder",
    });
    // And a local entry of its own.
    await sheet.getByRole("button", { name: "+ Add an entry to tool-agents of researcher" }).click();
    const added = sheet.getByRole("form", { name: "New entry" });
    await added.getByRole("button", { name: "Save entry" }).click();
    await added.getByText("Choose the agent this entry calls").waitFor();
    // An agent's own list never offers the agent itself.
    const offered = await added.getByLabel("Tool-agent", { exact: true }).locator("option").allTextContents();
    assert.ok(offered.includes("expert") && !offered.includes("researcher"), `offered: ${offered}`);
    await added.getByLabel("Tool-agent", { exact: true }).selectOption("expert");
    await added.getByLabel("Description", { exact: true }).fill("Answers the hard questions.");
    await added.getByRole("button", { name: "Save entry" }).click();
    await own
      .getByRole("row", { name: /agent_expert/ })
      .getByText("local")
      .waitFor();
    await page.screenshot({ path: path.join(artifacts, "config-tools.png") });
    // Remove it again.
    await own.getByRole("button", { name: "Remove expert" }).click();
    await own.getByRole("row", { name: /agent_expert/ }).waitFor({ state: "detached" });
    assert.deepEqual(await lastEdit(page), {
      op: "remove_tool",
      target: { kind: "agent", agent: "researcher" },
      tool_agent: "expert",
    });
  }));

test("a new entry for a remote agent is described from its agent card, and the user edits it", () =>
  withPage("remote-description", async (page) => {
    const sheet = await openSheet(page);
    await page.evaluate(() =>
      window.__configOutsideChange((config) => {
        config.agents.push({ name: "scout", provider: "a2a", url: "http://127.0.0.1:9999" });
      }),
    );
    // A change made outside the window is said, briefly; the window's own edits are not news.
    await page
      .getByRole("status")
      .filter({ hasText: /^Config reloaded from disk: .*scout/ })
      .waitFor();
    await sheet.getByRole("tab", { name: "Tool-agents" }).click();
    await sheet.getByRole("button", { name: "+ Add an entry to global tool-agents" }).click();
    const added = sheet.getByRole("form", { name: "New entry" });
    await added.getByLabel("Tool-agent", { exact: true }).selectOption("scout");
    const description = added.getByLabel("Description", { exact: true });
    await page.waitForFunction(() =>
      document.querySelector('form[aria-label="New entry"] textarea')?.value.startsWith("River Scout:"),
    );
    assert.equal(
      await description.inputValue(),
      "River Scout: Finds facts about rivers. Skills: River facts (Short facts about a river.).",
    );
    await added.getByText("From scout's agent card: check it before saving.").waitFor();
    await description.fill("Finds river facts.");
    await added.getByRole("button", { name: "Save entry" }).click();
    await added.waitFor({ state: "detached" });
    const edit = await lastEdit(page);
    assert.equal(edit.op, "set_tool");
    assert.equal(edit.entry.agent, "scout");
    assert.equal(edit.entry.description, "Finds river facts.", "the user's words, not the card's, are saved");
  }));

test("the effective list says why each absent entry is absent, and an outside change updates it", () =>
  withPage("effective", async (page) => {
    const sheet = await openSheet(page);
    // The agent list points at the problem of coder's entry; following it shows coder's tool-agents.
    await sheet.getByRole("button", { name: "1 problem in its tool-agents →" }).click();
    assert.equal(await sheet.getByRole("combobox", { name: "Tool-agents of" }).inputValue(), "coder");
    const effective = sheet.getByRole("table", { name: "Effective tool-agents of coder", exact: true });
    await effective
      .getByRole("row", { name: /agent_coder/ })
      .getByText("not offered: calls itself")
      .waitFor();
    await effective
      .getByRole("row", { name: /agent_ghost/ })
      .getByText(/not offered: no such agent/)
      .waitFor();
    await effective
      .getByRole("row", { name: /agent_researcher/ })
      .getByText("offered", { exact: true })
      .waitFor();
    // The warning about the entry for a removed agent is beside that entry.
    await sheet
      .getByRole("table", { name: "Tool-agents of coder", exact: true })
      .getByRole("row", { name: /agent_ghost/ })
      .getByText('agent: agent "ghost" is not configured; this entry is ignored')
      .waitFor();

    await sheet.getByRole("combobox", { name: "Tool-agents of" }).selectOption("assistant");
    const assistant = sheet.getByRole("table", { name: "Effective tool-agents of assistant", exact: true });
    await assistant.getByRole("row", { name: /agent_summariser.*replaced by assistant's own entry/ }).waitFor();
    await assistant.getByRole("row", { name: /agent_summariser.*not offered: disabled/ }).waitFor();
    await sheet.getByText("Function definitions assistant is offered (3)").click();
    const preview = sheet.getByLabel("Function definitions offered to assistant", { exact: true });
    const offered = JSON.parse(await preview.textContent());
    assert.deepEqual(
      offered.map((tool) => tool.function.name),
      ["escalate", "agent_researcher", "agent_coder"],
    );
    await page.screenshot({ path: path.join(artifacts, "config-effective.png") });

    // Someone adds a Claude Code agent and a subprocess agent in their editor: the list follows.
    await page.evaluate(() =>
      window.__configOutsideChange((config) => {
        config.agents.push(
          { name: "claude", provider: "claude-cli" },
          { name: "runner", provider: "subprocess", command: "run" },
        );
        config.agent_tools.push({ agent: "claude", description: "Claude Code." });
      }),
    );
    await assistant
      .getByRole("row", { name: /agent_claude/ })
      .getByText(/claude-cli agents are never called/)
      .waitFor();
    await sheet.getByRole("combobox", { name: "Tool-agents of" }).selectOption("runner");
    await sheet
      .getByRole("table", { name: "Effective tool-agents of runner", exact: true })
      .getByRole("row", { name: /agent_researcher/ })
      .getByText(/this provider cannot call tools/)
      .waitFor();
    // A depth limit of 0.
    await page.evaluate(() =>
      window.__configOutsideChange((config) => {
        config.agents.find((agent) => agent.name === "expert").limits = { max_depth: 0 };
      }),
    );
    await sheet.getByRole("combobox", { name: "Tool-agents of" }).selectOption("expert");
    await sheet
      .getByRole("table", { name: "Effective tool-agents of expert", exact: true })
      .getByRole("row", { name: /agent_researcher/ })
      .getByText(/depth limit 0/)
      .waitFor();
  }));

test("removing an agent asks about the entries that name it; the primary cannot go", () =>
  withPage("remove", async (page) => {
    const sheet = await openSheet(page);
    const agents = sheet.getByRole("list", { name: "Configured agents" });
    await agents.getByRole("button", { name: /^summariser/ }).click();
    const form = sheet.getByRole("form", { name: "Agent summariser" });
    await form.getByRole("button", { name: "Remove agent…" }).click();
    const question = form.getByRole("alertdialog", { name: "Remove summariser?" });
    await question.getByText("2 tool-agent entries name summariser").waitFor();
    await question.getByRole("button", { name: "Remove the entries too" }).click();
    await agents.getByRole("button", { name: /^summariser/ }).waitFor({ state: "detached" });
    assert.deepEqual(await lastEdit(page), { op: "remove_agent", name: "summariser", tool_entries: "remove" });
    await sheet.getByRole("tab", { name: "Tool-agents" }).click();
    await sheet
      .getByRole("table", { name: "Global tool-agents", exact: true })
      .getByRole("row", { name: /agent_coder/ })
      .waitFor();
    assert.equal(await sheet.getByRole("row", { name: /agent_summariser/ }).count(), 0);

    // Kept entries stay, with the warning beside them.
    await sheet.getByRole("tab", { name: "Agents", exact: true }).click();
    await agents.getByRole("button", { name: /^researcher/ }).click();
    await sheet.getByRole("form", { name: "Agent researcher" }).getByRole("button", { name: "Remove agent…" }).click();
    await sheet.getByRole("button", { name: "Keep the entries" }).click();
    await agents.getByRole("button", { name: /^researcher/ }).waitFor({ state: "detached" });
    await sheet.getByRole("tab", { name: "Tool-agents" }).click();
    await sheet
      .getByRole("table", { name: "Global tool-agents", exact: true })
      .getByRole("row", { name: /agent_researcher/ })
      .getByText('agent: agent "researcher" is not configured; this entry is ignored')
      .waitFor();

    // The primary: the backend refuses, and says so.
    await sheet.getByRole("tab", { name: "Agents", exact: true }).click();
    await agents.getByRole("button", { name: /^assistant/ }).click();
    const assistant = sheet.getByRole("form", { name: "Agent assistant" });
    await assistant.getByRole("button", { name: "Remove agent…" }).click();
    await assistant.getByRole("alertdialog").getByRole("button", { name: "Remove", exact: true }).click();
    await assistant
      .getByRole("alert")
      .getByText('"assistant" is the primary agent; choose another primary first')
      .waitFor();

    // Roles are set with their selects.
    await sheet.getByLabel("Escalation", { exact: true }).selectOption("coder");
    await agents.getByRole("button", { name: /^coder.*escalation/ }).waitFor();
    assert.deepEqual(await lastEdit(page), { op: "set_escalation", agent: "coder" });
  }));

test("the graph shows who can call whom, with a text list", () =>
  withPage("graph", async (page) => {
    const sheet = await openSheet(page);
    await sheet.getByRole("tab", { name: "Who calls whom" }).click();
    const graph = sheet.getByRole("img", { name: "Who can call whom" });
    await graph.waitFor();
    const list = sheet.getByRole("list", { name: "Who can call whom" });
    await list.getByText("assistant can call researcher, coder").waitFor();
    await list.getByText("coder can call researcher, summariser").waitFor();
    await list.getByText("assistant is the primary agent").waitFor();
    assert.equal(await graph.locator("g.node").count(), 5);
    assert.equal(await graph.locator("path.edge:not(.escalate)").count(), 11);
    // Every name sits inside its circle with room to spare ("summariser" touched it).
    const crowded = await graph.evaluate((svg) =>
      [...svg.querySelectorAll("g.node")].flatMap((node) => {
        const circle = node.querySelector("circle").getBBox();
        const name = node.querySelector("text:not(.role)");
        const box = name.getBBox();
        return box.x < circle.x + 6 || box.x + box.width > circle.x + circle.width - 6 ? [name.textContent] : [];
      }),
    );
    assert.deepEqual(crowded, []);
    await page.screenshot({ path: path.join(artifacts, "config-graph.png") });
    await page.keyboard.press("Escape");
    await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
    const dark = await openSheet(page);
    await dark.getByRole("tab", { name: "Who calls whom" }).click();
    await dark.getByRole("img", { name: "Who can call whom" }).waitFor();
    await page.screenshot({ path: path.join(artifacts, "config-graph-dark.png") });
    await dark.getByRole("tab", { name: "Agents", exact: true }).click();
    await dark
      .getByRole("list", { name: "Configured agents" })
      .getByRole("button", { name: /^coder/ })
      .click();
    await dark.getByRole("form", { name: "Agent coder" }).getByRole("button", { name: "Test connection" }).click();
    await dark.getByText("First token after 97 ms.").waitFor();
    await page.screenshot({ path: path.join(artifacts, "config-agent-form-dark.png") });
  }));

test("a conflict shows both versions: keep mine, then take theirs; a changed form is not clobbered", () =>
  withPage("conflict", async (page) => {
    const sheet = await openSheet(page);
    await sheet
      .getByRole("list", { name: "Configured agents" })
      .getByRole("button", { name: /^coder/ })
      .click();
    const form = sheet.getByRole("form", { name: "Agent coder" });
    await form.getByLabel("Model", { exact: true }).fill("llama3.2");
    // The file changes on disk and the window has not heard yet.
    await page.evaluate(() =>
      window.__configChangeUnheard((config) => {
        config.agents.find((agent) => agent.name === "coder").url = "http://127.0.0.1:8081";
      }),
    );
    await form.getByRole("button", { name: "Save" }).click();
    const conflict = page.getByRole("dialog", { name: "The file changed on disk" });
    await conflict
      .getByRole("region", { name: "Mine" })
      .getByText(/"model": "llama3.2"/)
      .waitFor();
    await conflict
      .getByRole("region", { name: "Theirs" })
      .getByText(/"url": "http:\/\/127.0.0.1:8081"/)
      .waitFor();
    await conflict.getByText("Line by line").click();
    await page.screenshot({ path: path.join(artifacts, "config-conflict.png") });
    await conflict.getByRole("button", { name: "Keep mine" }).click();
    await conflict.waitFor({ state: "detached" });
    await form.getByText("Saved coder.").waitFor();
    assert.equal((await lastEdit(page)).agent.model, "llama3.2");

    // Again, and this time take theirs: the form shows the file's values.
    await form.getByLabel("Model", { exact: true }).fill("gemma3");
    await page.evaluate(() =>
      window.__configChangeUnheard((config) => {
        config.agents.find((agent) => agent.name === "coder").model = "qwen3";
      }),
    );
    await form.getByRole("button", { name: "Save" }).click();
    await conflict.getByRole("button", { name: "Take theirs" }).click();
    await conflict.waitFor({ state: "detached" });
    assert.equal(await form.getByLabel("Model", { exact: true }).inputValue(), "qwen3");

    // A change heard while typing: the typed value stays, the form is marked.
    await form.getByLabel("Model", { exact: true }).fill("typed-by-me");
    await page.evaluate(() =>
      window.__configOutsideChange((config) => {
        config.agents.find((agent) => agent.name === "coder").model = "from-disk";
      }),
    );
    await form.getByText("The file changed on disk while you were editing").waitFor();
    assert.equal(await form.getByLabel("Model", { exact: true }).inputValue(), "typed-by-me");
    await form.getByRole("button", { name: "Discard mine and load the file's" }).click();
    assert.equal(await form.getByLabel("Model", { exact: true }).inputValue(), "from-disk");
    // An untouched form simply follows the file.
    await page.evaluate(() =>
      window.__configOutsideChange((config) => {
        config.agents.find((agent) => agent.name === "coder").model = "followed";
      }),
    );
    await page.waitForFunction(() => document.querySelector("#agent-model")?.value === "followed");
  }));

test("a broken file shows a banner with where and why; the last good config stays; it recovers", () =>
  withPage("banner", async (page) => {
    const sheet = await openSheet(page);
    await page.evaluate(() => window.__configBreakFile(12, 5, "expected `,` or `}` at line 12 column 5"));
    const banner = sheet.getByRole("alert", { name: "The config file is not in force" });
    await banner.getByText("/home/user/.config/switchboard/config.json:12:5").first().waitFor();
    await banner.getByText("(line 12, column 5)").waitFor();
    await banner.getByText(/expected `,` or `}`/).waitFor();
    await sheet
      .getByRole("list", { name: "Configured agents" })
      .getByRole("button", { name: /^coder/ })
      .waitFor();
    await page.screenshot({ path: path.join(artifacts, "config-banner.png") });
    // An edit now is refused with the file's error, shown as it is.
    await sheet.getByLabel("Primary", { exact: true }).selectOption("researcher");
    await sheet
      .getByRole("alert")
      .getByText(/config.json:12:5: expected/)
      .first()
      .waitFor();
    await page.evaluate(() =>
      window.__configRepairFile((config) => {
        config.agents.push({ name: "fixer", provider: "demo" });
      }),
    );
    await banner.waitFor({ state: "detached" });
    await sheet
      .getByRole("list", { name: "Configured agents" })
      .getByRole("button", { name: /^fixer/ })
      .waitFor();
    // The refused edit left nothing behind: the control shows the config in force,
    // and the refusal's error went with the broken file.
    assert.equal(await sheet.getByLabel("Primary", { exact: true }).inputValue(), "assistant");
    await sheet
      .getByRole("alert")
      .filter({ hasText: /config.json:12:5/ })
      .waitFor({ state: "detached" });
    // Broken again: a switch flipped now is refused too and goes back to what is in
    // force, and its refusal goes once the file is fixed.
    await page.evaluate(() => window.__configBreakFile(12, 5, "expected `,` or `}` at line 12 column 5"));
    await banner.waitFor();
    await sheet.getByRole("tab", { name: "Tool-agents" }).click();
    const toggle = sheet.getByRole("switch", { name: "researcher enabled" }).first();
    const before = await toggle.isChecked();
    await toggle.click();
    const refusal = sheet
      .getByRole("alert")
      .filter({ hasText: /config.json:12:5: expected/ })
      .last();
    await refusal.waitFor();
    assert.equal(await toggle.isChecked(), before, "a refused switch shows the config in force");
    await page.evaluate(() => window.__configRepairFile());
    await banner.waitFor({ state: "detached" });
    await sheet
      .getByRole("alert")
      .filter({ hasText: /config.json:12:5/ })
      .waitFor({ state: "detached" });
    assert.equal(await toggle.isChecked(), before);
  }));

test("a broken file is said on every tab, not only in the settings, and the notice leads to why", () =>
  withPage("broken-notice", async (page) => {
    await page.getByRole("tab", { name: "Calls" }).waitFor();
    await page.evaluate(() => window.__configBreakFile(3, 1, "expected value at line 3 column 1"));
    const notice = page.getByRole("button", { name: "The config file is not in force: show why" });
    await notice.waitFor();
    assert.equal(await page.getByRole("tab", { name: "Calls" }).getAttribute("aria-selected"), "true");
    await notice.click();
    await page
      .getByRole("alert", { name: "The config file is not in force" })
      .getByText(/expected value at line 3/)
      .waitFor();
    await page.evaluate(() => window.__configRepairFile());
    await notice.waitFor({ state: "detached" });
  }));

test("dark theme: the tables, the effective list and the conflict stay readable", () =>
  withPage("dark", async (page) => {
    await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
    const sheet = await openSheet(page);
    await sheet.getByRole("tab", { name: "Tool-agents" }).click();
    await sheet.getByRole("table", { name: "Effective tool-agents of assistant", exact: true }).waitFor();
    await page.screenshot({ path: path.join(artifacts, "config-tools-dark.png") });
    await sheet.getByRole("tab", { name: "Agents", exact: true }).click();
    const form = sheet.getByRole("form", { name: "Agent assistant" });
    await form.getByLabel("Model", { exact: true }).fill("dark-model");
    await page.evaluate(() =>
      window.__configChangeUnheard((config) => {
        config.agents[0].system_prompt = "Be brief.";
      }),
    );
    await form.getByRole("button", { name: "Save" }).click();
    const conflict = page.getByRole("dialog", { name: "The file changed on disk" });
    await conflict.getByText("Line by line").click();
    await page.screenshot({ path: path.join(artifacts, "config-conflict-dark.png") });
    await conflict.getByRole("button", { name: "Take theirs" }).click();
    assert.equal(await form.getByLabel("Model", { exact: true }).inputValue(), "demo-planner");
    await form.getByLabel("System prompt", { exact: true }).waitFor();
    assert.equal(await form.getByLabel("System prompt", { exact: true }).inputValue(), "Be brief.");
  }));
