/** The agent form under hot reload: a clean form follows the file, a changed one is kept and marked. */
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/svelte";
import { flushSync } from "svelte";
import type { AgentConfig_Serialize as AgentConfig, Config_Serialize as Config } from "../../bindings";
import AgentForm from "./AgentForm.svelte";

const coder = (model: string): AgentConfig => ({ name: "coder", provider: "local", url: "http://x", model });
const config = (agent: AgentConfig): Config => ({ agents: [agent], agent_tools: [] });
const noop = () => {};

function mount(agent: AgentConfig) {
  const props = $state({
    agent: agent as AgentConfig | undefined,
    editing: "coder",
    version: "v1" as string | null,
    config: config(agent),
    warnings: [],
    onSaved: noop,
    onRemoved: noop,
    onCancel: noop,
    onShowTools: noop,
  });
  render(AgentForm, { props });
  const reload = (next: AgentConfig | undefined, version: string) => {
    props.agent = next;
    props.version = version;
    if (next) props.config = config(next);
    flushSync();
  };
  return reload;
}

const model = () => screen.getByLabelText("Model", { exact: true }) as HTMLInputElement;

afterEach(cleanup);

describe("AgentForm on reload", () => {
  it("follows the file while untouched", () => {
    const reload = mount(coder("a"));
    reload(coder("b"), "v2");
    expect(model().value).toBe("b");
    expect(screen.queryByText(/The file changed on disk/)).toBeNull();
  });

  it("keeps what is typed and marks the form when the agent changed on disk", async () => {
    const reload = mount(coder("a"));
    await fireEvent.input(model(), { target: { value: "typed" } });
    reload(coder("b"), "v2");
    expect(model().value).toBe("typed");
    expect(screen.getByText(/The file changed on disk while you were editing/)).toBeTruthy();
    await fireEvent.click(screen.getByRole("button", { name: "Discard mine and load the file's" }));
    expect(model().value).toBe("b");
  });

  it("keeps what is typed, unmarked, when only other parts of the file changed", async () => {
    const reload = mount(coder("a"));
    await fireEvent.input(model(), { target: { value: "typed" } });
    reload(coder("a"), "v2");
    expect(model().value).toBe("typed");
    expect(screen.queryByText(/The file changed on disk/)).toBeNull();
  });

  it("says so when the agent is gone from the file", async () => {
    const reload = mount(coder("a"));
    await fireEvent.input(model(), { target: { value: "typed" } });
    reload(undefined, "v2");
    expect(screen.getByText(/no longer in the file/)).toBeTruthy();
    expect(model().value).toBe("typed");
  });
});
