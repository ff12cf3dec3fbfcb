/**
 * Playwright (playwright-core) in Debian's Chromium against the built UI with its
 * IPC mocked (vite build --mode e2e, served by vite preview): the setup wizard on a
 * first start, fed by a fake OpenAI-compatible server this suite runs on loopback
 * (the mocked discovery asks it for its models), through every step to the one
 * `setup` edit written; and the chat's slash commands with their completion, driven
 * with the keyboard, answering inline. Screenshots go to tests/artifacts/.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import path from "node:path";
import { artifacts, browserSuite } from "./harness.mjs";

// The mocked discovery asks a port where nothing listens, as the real one does; the browser logs that.
const suite = browserSuite({ ignored: (text) => text === "Failed to load resource: net::ERR_CONNECTION_REFUSED" });
const { openPage } = suite;
const fakes = [];

/** A server that answers `GET /v1/models` with `models`, on a free loopback port; its `/v1` base. */
async function fakeModelServer(models) {
  const seen = [];
  const http = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    const headers = { "content-type": "application/json", "access-control-allow-origin": "*" };
    if (request.method === "GET" && request.url === "/v1/models") {
      response.writeHead(200, headers);
      response.end(JSON.stringify({ object: "list", data: models.map((id) => ({ id, object: "model" })) }));
    } else {
      response.writeHead(404, headers);
      response.end(JSON.stringify({ error: { message: "not found" } }));
    }
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  const fake = { http, seen, url: `http://127.0.0.1:${http.address().port}/v1` };
  fakes.push(fake);
  return fake;
}

/** A loopback port nothing listens on (taken, then closed). */
async function deadPort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = probe.address().port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

let ollama;
let byHand;
let dead;

before(async () => {
  ollama = await fakeModelServer(["llama3:latest", "qwen2.5-coder:7b"]);
  byHand = await fakeModelServer(["phi-4-mini"]);
  dead = `http://127.0.0.1:${await deadPort()}/v1`;
});

after(() => {
  for (const fake of fakes) fake.http.close();
});

/** The first start's page: the demo config just written, the fake Ollama, a dead LM Studio port, aider on PATH. */
function firstStart() {
  const servers = [`Ollama@${ollama.url}`, `LM Studio@${dead}`].map(encodeURIComponent).join(",");
  return openPage(`?setup-config&first-start&cli=aider&servers=${servers}`);
}

/** Runs `scenario` on an opened page, with a screenshot of the page when it fails. */
const withPage = (opened, name, scenario) => suite.withPage(name, scenario, opened);

const edits = (page) => page.evaluate(() => window.__edits);

test("the wizard opens on a first start, finds the server's models, and writes one setup edit", () =>
  withPage(firstStart(), "wizard", async (page) => {
    const wizard = page.getByRole("dialog", { name: "Set up Switchboard" });
    await wizard.waitFor();
    assert.equal(
      await wizard.getByRole("list", { name: "Setup steps" }).locator("[aria-current=step]").textContent(),
      "1. Models and agents",
    );

    // What the fake server answered, under where it runs; the dead port only where the wizard looked.
    const found = wizard.getByRole("group", { name: `Ollama at ${ollama.url}` });
    await found.getByRole("checkbox", { name: "llama3:latest" }).waitFor();
    await found.getByRole("checkbox", { name: "qwen2.5-coder:7b" }).waitFor();
    assert.ok(ollama.seen.includes("GET /v1/models"), "the discovery asked the server");
    assert.equal(await wizard.getByRole("group", { name: /^LM Studio/ }).count(), 0);
    await wizard.getByText("Where I looked").click();
    assert.deepEqual(
      await wizard.getByRole("list", { name: "Places looked at" }).getByRole("listitem").allTextContents(),
      [ollama.url, dead],
    );

    // A server typed in by hand is tested, then offered like the others.
    const url = wizard.getByRole("textbox", { name: "Server URL" });
    await url.fill(dead.replace(/\/v1$/, ""));
    await url.press("Enter");
    await wizard.getByRole("alert").getByText(`Nothing answers at ${dead}.`).waitFor();
    await url.fill(byHand.url.replace(/\/v1$/, ""));
    await wizard.getByRole("button", { name: "Add server" }).click();
    const typed = wizard.getByRole("group", { name: `Server at ${byHand.url}` });
    await typed.getByRole("checkbox", { name: "phi-4-mini" }).waitFor();

    // Nothing chosen yet: Next says so; the first tick takes the words away.
    await wizard.getByRole("button", { name: "Next" }).click();
    const nothing = wizard.getByText("Choose at least one model or agent, or keep the current agents.");
    await nothing.waitFor();
    // Choose with the keyboard: Space ticks a focused checkbox.
    await found.getByRole("checkbox", { name: "llama3:latest" }).focus();
    await page.keyboard.press("Space");
    await nothing.waitFor({ state: "detached" });
    await found.getByRole("checkbox", { name: "qwen2.5-coder:7b" }).check();
    await typed.getByRole("checkbox", { name: "phi-4-mini" }).check();
    const qwenName = wizard.getByRole("textbox", { name: "Agent name for qwen2.5-coder:7b on Ollama" });
    assert.equal(await qwenName.inputValue(), "ollama-qwen2.5-coder-7b");
    await qwenName.fill("coder-local");
    assert.equal(
      await wizard.getByRole("textbox", { name: "Agent name for llama3:latest on Ollama" }).inputValue(),
      "ollama-llama3",
    );
    await wizard.getByRole("checkbox", { name: /^Use aider/ }).check();
    const aiderModel = wizard.getByRole("combobox", { name: "Model aider runs on" });
    assert.equal(await aiderModel.locator("option:checked").textContent(), "its own login or key", "the default");
    await aiderModel.selectOption({ label: "qwen2.5-coder:7b (Ollama)" });
    await page.screenshot({ path: path.join(artifacts, "setup-wizard-servers.png") });
    await wizard.getByRole("button", { name: "Next" }).click();

    // Roles: the first chat model leads, the second escalates; the user picks another.
    await wizard.getByRole("heading", { name: "Roles" }).waitFor();
    const primary = wizard.getByRole("group", { name: /^Primary agent/ });
    assert.equal(await primary.getByRole("radio", { name: /^ollama-llama3/ }).isChecked(), true);
    const escalation = wizard.getByRole("combobox", { name: /^Escalation agent/ });
    assert.equal(await escalation.inputValue(), "coder-local");
    await escalation.selectOption("server-phi-4-mini");
    await page.screenshot({ path: path.join(artifacts, "setup-wizard-roles.png") });
    await wizard.getByRole("button", { name: "Next" }).click();

    // Agents as tools (global entries): aider is offered, ticked, with a description; the user adds coder-local.
    await wizard.getByRole("heading", { name: "Agents as tools" }).waitFor();
    await wizard.getByText("Do you want to configure any agents as tools (available to all agents)?").waitFor();
    assert.equal(await wizard.getByRole("checkbox", { name: "aider" }).isChecked(), true);
    await wizard.getByRole("checkbox", { name: "coder-local" }).check();
    const description = wizard.getByRole("textbox", { name: "Description of coder-local" });
    assert.match(await description.inputValue(), /^qwen2\.5-coder:7b on Ollama\./);
    await description.fill("");
    await wizard.getByRole("button", { name: "Next" }).click();
    await wizard
      .getByRole("alert", { name: "What to fix" })
      .getByText("Describe coder-local for the agents that will call it.")
      .waitFor();
    await description.fill("Writes and fixes code; send it the file and what to change.");
    await page.screenshot({ path: path.join(artifacts, "setup-wizard-tools.png") });
    await wizard.getByRole("button", { name: "Next" }).click();

    await wizard.getByRole("heading", { name: "Review" }).waitFor();
    await wizard.getByText("These agents replace the current agents and tool entries:").waitFor();
    await wizard.getByRole("button", { name: "Write the config" }).click();
    await wizard.waitFor({ state: "detached" });
    assert.deepEqual(await edits(page), [
      {
        op: "setup",
        agents: [
          { name: "ollama-llama3", provider: "local", url: ollama.url, model: "llama3:latest" },
          { name: "coder-local", provider: "local", url: ollama.url, model: "qwen2.5-coder:7b" },
          { name: "server-phi-4-mini", provider: "local", url: byHand.url, model: "phi-4-mini" },
          { name: "aider", provider: "aider-cli", url: ollama.url, model: "qwen2.5-coder:7b" },
        ],
        replace_agents: true,
        primary: "ollama-llama3",
        escalation: "server-phi-4-mini",
        agent_tools: [
          {
            agent: "coder-local",
            description: "Writes and fixes code; send it the file and what to change.",
            enabled: true,
          },
          {
            agent: "aider",
            description:
              "Specialist code-editing agent. Send it a natural-language edit request; it applies the changes and returns a summary.",
            enabled: true,
          },
        ],
      },
    ]);
    // The @ completion now offers the agents the wizard wrote.
    const input = page.getByRole("textbox", { name: "Message" });
    await input.fill("@coder");
    await page.getByRole("listbox", { name: "Agents" }).getByRole("option", { name: "@coder-local" }).waitFor();
  }));

test("with one agent the tools step is skipped", () =>
  withPage(firstStart(), "wizard-one", async (page) => {
    const wizard = page.getByRole("dialog", { name: "Set up Switchboard" });
    // The chat behind the dialog shows no scrollbar over it (WebKitGTK draws one there).
    const chatOverflow = () =>
      page.getByRole("list", { name: "Messages" }).evaluate((element) => getComputedStyle(element).overflowY);
    await wizard.waitFor();
    assert.equal(await chatOverflow(), "hidden");
    await wizard.getByRole("checkbox", { name: "llama3:latest" }).check();
    await wizard.getByRole("button", { name: "Next" }).click();
    assert.deepEqual(await wizard.getByRole("list", { name: "Setup steps" }).getByRole("listitem").allTextContents(), [
      "1. Models and agents",
      "2. Roles",
      "3. Review",
    ]);
    assert.equal(await wizard.getByRole("combobox", { name: /^Escalation agent/ }).inputValue(), "");
    await wizard.getByRole("button", { name: "Next" }).click();
    await wizard.getByRole("heading", { name: "Review" }).waitFor();
    await wizard.getByRole("button", { name: "Write the config" }).click();
    await wizard.waitFor({ state: "detached" });
    assert.equal(await chatOverflow(), "auto", "the chat scrolls again once the dialog is gone");
    assert.deepEqual(await edits(page), [
      {
        op: "setup",
        agents: [{ name: "ollama-llama3", provider: "local", url: ollama.url, model: "llama3:latest" }],
        replace_agents: true,
        primary: "ollama-llama3",
        escalation: null,
        agent_tools: [],
      },
    ]);
  }));

test("a hosted service's model is added with its key: the key goes to the keyring, the config names the entry", () =>
  withPage(firstStart(), "wizard-hosted", async (page) => {
    const wizard = page.getByRole("dialog", { name: "Set up Switchboard" });
    const hosted = wizard.getByRole("region", { name: "Hosted services" });
    await hosted.getByRole("combobox", { name: "Service" }).selectOption({ label: "Groq" });
    assert.equal(await hosted.getByRole("textbox", { name: "Model" }).inputValue(), "llama-3.3-70b-versatile");
    const add = hosted.getByRole("button", { name: "Add hosted model" });
    assert.equal(await add.isDisabled(), true, "no key, no hosted model");
    const key = hosted.getByLabel("API key");
    assert.equal(await key.getAttribute("type"), "password");
    await key.fill("gsk_test_key_for_the_keyring");
    await add.click();
    const chosen = hosted.getByRole("checkbox", { name: /llama-3.3-70b-versatile/ });
    assert.equal(await chosen.isChecked(), true);
    assert.equal(await key.inputValue(), "", "the field forgets the key once it is added");
    const name = hosted.getByRole("textbox", { name: "Agent name for llama-3.3-70b-versatile on Groq" });
    assert.equal(await name.inputValue(), "groq-llama-3.3-70b-versatile");
    await name.fill("groq");
    // A command-line agent never runs on it: its key is in the keyring, not its environment.
    await wizard.getByRole("checkbox", { name: /Use aider/ }).check();
    assert.deepEqual(
      await wizard.getByRole("combobox", { name: "Model aider runs on" }).locator("option").allTextContents(),
      ["its own login or key"],
    );
    await wizard.getByRole("checkbox", { name: /Use aider/ }).uncheck();
    await wizard.getByRole("button", { name: "Next" }).click();
    assert.equal(
      await wizard.getByRole("radio", { name: /^groq/ }).isChecked(),
      true,
      "the hosted model is the primary",
    );
    await wizard.getByRole("button", { name: "Next" }).click();
    await wizard.getByRole("heading", { name: "Review" }).waitFor();
    assert.deepEqual(await page.evaluate(() => window.__keyring), {}, "nothing is stored before the config is written");
    await wizard.getByRole("button", { name: "Write the config" }).click();
    await wizard.waitFor({ state: "detached" });
    assert.deepEqual(await page.evaluate(() => window.__keyring), { groq: "gsk_test_key_for_the_keyring" });
    const written = await edits(page);
    assert.deepEqual(written[0].agents, [
      {
        name: "groq",
        provider: "local",
        url: "https://api.groq.com/openai/v1",
        model: "llama-3.3-70b-versatile",
        api_key_keyring: "groq",
      },
    ]);
    assert.ok(!JSON.stringify(written).includes("gsk_test_key"), "the key is in no edit");
  }));

test("a Claude Code user with no model server of ours gets through with it as a tool-agent, on its own login", async () => {
  await withPage(openPage("?setup-config&first-start"), "wizard-nothing-found", async (page) => {
    const wizard = page.getByRole("dialog", { name: "Set up Switchboard" });
    await wizard
      .getByText(
        "No command-line agent found on PATH (setup looks for aider, smolagent, claude, codex, gemini or qwen).",
      )
      .waitFor();
  });
  await withPage(openPage("?setup-config&first-start&cli=claude"), "wizard-claude-code", async (page) => {
    const wizard = page.getByRole("dialog", { name: "Set up Switchboard" });
    // A hosted model to chat with (its key to the keyring), Claude Code on its own login as its tool.
    const hosted = wizard.getByRole("region", { name: "Hosted services" });
    await hosted.getByRole("combobox", { name: "Service" }).selectOption({ label: "Groq" });
    await hosted.getByLabel("API key").fill("gsk_test_key_for_the_keyring");
    await hosted.getByRole("button", { name: "Add hosted model" }).click();
    await wizard.getByRole("checkbox", { name: /^Use claude/ }).check();
    const runsOn = wizard.getByRole("combobox", { name: "Model claude runs on" });
    assert.equal(await runsOn.isDisabled(), false);
    assert.equal(await runsOn.locator("option:checked").textContent(), "its own login or key");
    await page.screenshot({ path: path.join(artifacts, "setup-wizard-claude-code.png") });
    await wizard.getByRole("button", { name: "Next" }).click();
    await wizard.getByRole("heading", { name: "Roles" }).waitFor();
    await wizard.getByRole("button", { name: "Next" }).click();
    await wizard.getByRole("heading", { name: "Agents as tools" }).waitFor();
    assert.equal(await wizard.getByRole("checkbox", { name: "claude-code" }).isChecked(), true);
    await wizard.getByRole("button", { name: "Next" }).click();
    await wizard.getByRole("heading", { name: "Review" }).waitFor();
    await wizard.getByRole("button", { name: "Write the config" }).click();
    await wizard.waitFor({ state: "detached" });
    const [edit] = await edits(page);
    assert.deepEqual(edit.agents[1], { name: "claude-code", provider: "claude-code", model: null, url: null });
    assert.equal(edit.primary, edit.agents[0].name);
    assert.deepEqual(
      edit.agent_tools.map((entry) => entry.agent),
      ["claude-code"],
    );
  });
});

test("keeping the demo agents writes nothing (the button, or Escape)", () =>
  withPage(firstStart(), "wizard-keep", async (page) => {
    const wizard = page.getByRole("dialog", { name: "Set up Switchboard" });
    await wizard.getByRole("checkbox", { name: "llama3:latest" }).check();
    await wizard.getByRole("button", { name: "Keep the demo agents" }).click();
    await wizard.waitFor({ state: "detached" });
    assert.deepEqual(await edits(page), []);
    // Offered once per start: it stays closed.
    await page.getByRole("textbox", { name: "Message" }).fill("hello");
    assert.equal(await wizard.count(), 0);

    const other = await firstStart();
    const again = other.page.getByRole("dialog", { name: "Set up Switchboard" });
    await again.getByRole("checkbox", { name: "llama3:latest" }).waitFor();
    await other.page.keyboard.press("Escape");
    await again.waitFor({ state: "detached" });
    assert.deepEqual(await edits(other.page), []);
    assert.deepEqual(other.problems, []);
    await other.page.close();
  }));

test("a refused setup shows the backend's message as it is and keeps every choice", () =>
  withPage(firstStart(), "wizard-refused", async (page) => {
    const wizard = page.getByRole("dialog", { name: "Set up Switchboard" });
    await wizard.getByRole("checkbox", { name: "llama3:latest" }).check();
    await wizard.getByRole("checkbox", { name: "qwen2.5-coder:7b" }).check();
    await wizard.getByRole("textbox", { name: "Agent name for llama3:latest on Ollama" }).fill("lead");
    await wizard.getByRole("button", { name: "Next" }).click();
    await wizard.getByRole("button", { name: "Next" }).click();
    await wizard.getByRole("checkbox", { name: "lead" }).check();
    await wizard.getByRole("button", { name: "Next" }).click();
    const message = 'agents[0].url: must start with http:// or https://\nagents[1]: provider "local" needs `url`';
    await page.evaluate((text) => (window.__refuseNextEdit = text), message);
    await wizard.getByRole("button", { name: "Write the config" }).click();
    const alert = wizard.getByRole("alert", { name: "The config was not written" });
    await alert.waitFor();
    assert.equal(await alert.locator("pre").textContent(), message);
    await page.screenshot({ path: path.join(artifacts, "setup-wizard-refused.png") });
    assert.deepEqual(await edits(page), []);

    // Every choice is still there: back through the steps, and the write goes through.
    await wizard.getByRole("button", { name: "Back" }).click();
    assert.equal(await wizard.getByRole("checkbox", { name: "lead" }).isChecked(), true);
    await wizard.getByRole("button", { name: "Back" }).click();
    assert.equal(await wizard.getByRole("radio", { name: /^lead/ }).isChecked(), true);
    await wizard.getByRole("button", { name: "Back" }).click();
    assert.equal(await wizard.getByRole("checkbox", { name: "qwen2.5-coder:7b" }).isChecked(), true);
    assert.equal(
      await wizard.getByRole("textbox", { name: "Agent name for llama3:latest on Ollama" }).inputValue(),
      "lead",
    );
    for (let step = 0; step < 3; step++) await wizard.getByRole("button", { name: "Next" }).click();
    await wizard.getByRole("button", { name: "Write the config" }).click();
    await wizard.waitFor({ state: "detached" });
    const [written] = await edits(page);
    assert.deepEqual(
      written.agents.map((agent) => agent.name),
      ["lead", "ollama-qwen2.5-coder-7b"],
    );
    assert.deepEqual(
      written.agent_tools.map((entry) => entry.agent),
      ["lead"],
    );
  }));

test("run later, the wizard adds beside the current agents (or replaces them) and keeps their roles", () =>
  withPage(
    openPage(`?setup-config&servers=${encodeURIComponent(`Ollama@${ollama.url}`)}`),
    "wizard-add",
    async (page) => {
      const wizard = page.getByRole("dialog", { name: "Set up Switchboard" });
      await page.getByRole("textbox", { name: "Message" }).waitFor();
      assert.equal(await wizard.count(), 0, "not offered by itself after the first start");
      await page.getByRole("button", { name: "Run setup…" }).click();
      const mode = wizard.getByRole("group", { name: "The agents configured now" });
      assert.equal(await mode.getByRole("radio", { name: "Add to them" }).isChecked(), true);
      await wizard.getByRole("checkbox", { name: "qwen2.5-coder:7b" }).check();
      // A name the current agents use is refused when adding.
      await wizard.getByRole("textbox", { name: "Agent name for qwen2.5-coder:7b on Ollama" }).fill("coder");
      await wizard.getByRole("button", { name: "Next" }).click();
      await wizard
        .getByRole("alert", { name: "What to fix" })
        .getByText('The name "coder" is used twice; names must be unique.')
        .waitFor();
      await wizard.getByRole("textbox", { name: "Agent name for qwen2.5-coder:7b on Ollama" }).fill("qwen");
      await wizard.getByRole("button", { name: "Next" }).click();

      // The current roles stay unless changed; the current agents can take them.
      assert.equal(await wizard.getByRole("radio", { name: /^assistant/ }).isChecked(), true);
      assert.equal(await wizard.getByRole("combobox", { name: /^Escalation agent/ }).inputValue(), "expert");
      await wizard.getByRole("button", { name: "Next" }).click();
      // Entries that exist are left as they are.
      await wizard.getByText("is a tool for all agents already").first().waitFor();
      assert.equal(await wizard.getByRole("checkbox", { name: "researcher" }).count(), 0);
      await wizard.getByRole("checkbox", { name: "qwen" }).check();
      await wizard.getByRole("button", { name: "Next" }).click();
      await wizard.getByText("These agents are added beside the current ones:").waitFor();
      await wizard.getByRole("button", { name: "Write the config" }).click();
      await wizard.waitFor({ state: "detached" });
      assert.deepEqual(await edits(page), [
        {
          op: "setup",
          agents: [{ name: "qwen", provider: "local", url: ollama.url, model: "qwen2.5-coder:7b" }],
          replace_agents: false,
          primary: "assistant",
          escalation: "expert",
          agent_tools: [
            {
              agent: "qwen",
              description: "qwen2.5-coder:7b on Ollama. Send it a self-contained request; it returns its answer.",
              enabled: true,
            },
          ],
        },
      ]);

      // Again, replacing them: the current agents are no longer offered for the roles.
      await page.getByRole("button", { name: "Run setup…" }).click();
      await wizard.getByRole("radio", { name: "Replace them" }).check();
      await wizard.getByRole("checkbox", { name: "llama3:latest" }).check();
      await wizard.getByRole("button", { name: "Next" }).click();
      assert.deepEqual(
        await wizard
          .getByRole("group", { name: /^Primary agent/ })
          .getByRole("radio")
          .evaluateAll((radios) => radios.map((radio) => radio.value)),
        ["ollama-llama3"],
      );
      await wizard.getByRole("button", { name: "Next" }).click();
      await wizard.getByText("These agents replace the current agents and tool entries:").waitFor();
      await wizard.getByRole("button", { name: "Write the config" }).click();
      await wizard.waitFor({ state: "detached" });
      const [, replaced] = await edits(page);
      assert.equal(replaced.replace_agents, true);
      assert.deepEqual(
        replaced.agents.map((agent) => agent.name),
        ["ollama-llama3"],
      );
    },
  ));

test("slash commands: completion with the keyboard, and enable, disable, list and add answered in the chat", () =>
  withPage(openPage("?setup-config"), "slash", async (page) => {
    const input = page.getByRole("textbox", { name: "Message" });
    const popup = page.getByRole("listbox", { name: "Command completions" });
    const options = () => popup.getByRole("option").allTextContents();

    // Subcommands, then names, then for/global, then names and global after "for".
    await input.click();
    await page.keyboard.type("/");
    assert.deepEqual(await options(), ["/agent", "/help"]);
    await page.keyboard.press("Tab");
    assert.equal(await input.inputValue(), "/agent ");
    assert.deepEqual(await options(), ["tool", "add", "switch", "escalation"]);
    await page.keyboard.press("Enter");
    assert.deepEqual(await options(), ["list", "enable", "disable", "add", "remove"]);
    await page.keyboard.type("dis");
    assert.deepEqual(await options(), ["disable"]);
    await page.keyboard.press("Tab");
    assert.deepEqual(await options(), ["assistant", "researcher", "summariser", "coder", "expert"]);
    await page.keyboard.press("ArrowDown");
    assert.equal(await popup.getByRole("option", { selected: true }).textContent(), "researcher");
    await page.keyboard.press("Tab");
    assert.deepEqual(await options(), ["for", "global"]);
    await page.keyboard.press("Enter");
    assert.deepEqual(await options(), ["assistant", "summariser", "coder", "expert", "global"]);
    await page.screenshot({ path: path.join(artifacts, "slash-completion.png") });
    await page.keyboard.press("ArrowUp");
    assert.equal(await popup.getByRole("option", { selected: true }).textContent(), "global");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    assert.equal(await input.inputValue(), "/agent tool disable researcher for assistant ");
    assert.equal(await popup.count(), 0);
    await page.keyboard.press("Enter");
    const note = (command) => page.getByRole("listitem", { name: `Command ${command}` });
    await note("/agent tool disable researcher for assistant")
      .getByText("Disabled agent_researcher for assistant (override).")
      .waitFor();
    assert.equal(await input.inputValue(), "");

    // Escape closes the popup until the text changes.
    await page.keyboard.type("/agent tool ");
    await popup.waitFor();
    await page.keyboard.press("Escape");
    assert.equal(await popup.count(), 0);
    await page.keyboard.type("e");
    assert.deepEqual(await options(), ["enable"]);
    await input.fill("");

    // A refusal is shown as the backend words it.
    await input.fill("/agent tool enable coder for assistant");
    await input.press("Enter");
    await note("/agent tool enable coder for assistant")
      .getByRole("alert")
      .getByText(
        '"coder" has no global entry to inherit a description from; add it for "assistant" with a description',
        { exact: true },
      )
      .waitFor();
    // A mistyped command answers what is wrong and the usage.
    await input.fill("/agent tool enable");
    await input.press("Enter");
    await note("/agent tool enable")
      .getByText("Name the tool-agent. Usage: /agent tool enable <tool-agent> [for <agent>|global]")
      .waitFor();
    // /help lists the commands and @agent; an unknown command is refused here and
    // never reaches the model as a billed turn.
    const sentBefore = await page.evaluate(() => window.__sentMessages.length);
    await input.fill("/help");
    await input.press("Enter");
    await note("/help")
      .getByText(/\/agent switch <agent>: make <agent> the primary/)
      .waitFor();
    await note("/help")
      .getByText(/@agent message: send one message to <agent>/)
      .waitFor();
    // Its lines are kept (one a command), and it is no wider than an answer may be.
    const help = await note("/help").getByRole("status").innerText();
    assert.ok(help.split("\n").filter((line) => line.trim()).length >= 4, help);
    const helpBox = await note("/help").boundingBox();
    assert.ok(helpBox && helpBox.width <= 760, `the note is ${helpBox?.width} px wide`);
    await input.fill("/halp me");
    await input.press("Enter");
    await note("/halp me")
      .getByText(/^Unknown command "\/halp"; nothing was sent/)
      .waitFor();
    assert.equal(await page.evaluate(() => window.__sentMessages.length), sentBefore, "no command reached the model");

    // add without a description: the next message is it.
    await input.fill("/agent tool add coder");
    await input.press("Enter");
    await note("/agent tool add coder")
      .getByText(/^Describe coder as a tool for all agents/)
      .waitFor();
    assert.match(await input.getAttribute("placeholder"), /The description of coder/);
    await input.fill("Writes and fixes code.");
    await input.press("Enter");
    await note("Writes and fixes code.").getByText("Added agent_coder for all agents (global).").waitFor();
    await input.fill('/agent tool add expert for assistant "Answers the hard questions."');
    await input.press("Enter");
    await note('/agent tool add expert for assistant "Answers the hard questions."')
      .getByText("Added agent_expert for assistant (local).")
      .waitFor();

    // The listing: name, scope, description, enabled, and why an entry is not offered.
    await input.fill("/agent tool list assistant");
    await input.press("Enter");
    const table = note("/agent tool list assistant").getByRole("table", { name: "Tool-agents of assistant:" });
    await table.waitFor();
    const rows = await table
      .getByRole("row")
      .evaluateAll((found) => found.map((row) => [...row.children].map((cell) => cell.textContent.trim())));
    assert.deepEqual(rows, [
      ["Name", "Scope", "Description", "Enabled", "Not offered because"],
      [
        "agent_researcher",
        "global (overridden)",
        "Looks things up and reports the facts it found, with their…",
        "yes",
        "overridden",
      ],
      ["agent_researcher", "override", "Looks things up and reports the facts it found, with their…", "no", "disabled"],
      ["agent_summariser", "global", "Summarises a block of text.", "yes", ""],
      ["agent_coder", "global", "Writes and fixes code.", "yes", ""],
      ["agent_expert", "local", "Answers the hard questions.", "yes", ""],
    ]);
    await page.screenshot({ path: path.join(artifacts, "slash-list.png") });
    await input.fill("/agent tool enable researcher for assistant");
    await input.press("Enter");
    await note("/agent tool enable researcher for assistant")
      .getByText("Enabled agent_researcher for assistant (override).")
      .waitFor();
    // Enabling for all agents what is no global entry yet asks for its description; /cancel drops it.
    await input.fill("/agent tool enable expert");
    await input.press("Enter");
    await note("/agent tool enable expert")
      .getByText(/^expert is not a tool for all agents yet/)
      .waitFor();
    await input.fill("/cancel");
    await input.press("Enter");
    await note("/cancel").getByText("Not added: expert.").waitFor();
    // The escalation agent made the primary: what to do first, in words; done, it works.
    await input.fill("/agent switch expert");
    await input.press("Enter");
    await note("/agent switch expert")
      .getByText(/expert is the escalation agent.*\/agent escalation none; then \/agent switch expert\./)
      .waitFor();
    await input.fill("/agent escalation none");
    await input.press("Enter");
    await note("/agent escalation none").getByText("No escalation agent now: turns do not escalate.").waitFor();
    await input.fill("/agent switch expert");
    await input.press("Enter");
    await note("/agent switch expert").getByText("expert is now the primary agent.").waitFor();

    assert.deepEqual(
      (await edits(page)).map((edit) => edit.op),
      ["disable_tool", "add_tool", "add_tool", "enable_tool", "set_escalation", "set_primary"],
    );
    assert.deepEqual((await edits(page))[1], {
      op: "add_tool",
      target: { kind: "global" },
      tool_agent: "coder",
      description: "Writes and fixes code.",
    });
    // Nothing went to a model, and no session was started.
    assert.equal(await page.getByRole("listitem", { name: "You" }).count(), 0);
    assert.equal(await page.getByRole("list", { name: "Session list" }).getByRole("button").count(), 0);

    // /agent add opens the agent form, a new one.
    await input.fill("/agent add");
    await input.press("Enter");
    await page.getByRole("dialog", { name: "Agents & tools" }).getByRole("form", { name: "New agent" }).waitFor();
  }));
