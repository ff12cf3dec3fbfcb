/**
 * The config the settings area shows: loaded at start and reloaded whenever the
 * backend reports that the file changed on disk (or was refused).
 */
import { commands, events, type ConfigState_Serialize as ConfigState, type ResolvedTool } from "../../bindings";

class ConfigStore {
  state = $state<ConfigState | null>(null);
  toolsByAgent = $state<Record<string, ResolvedTool[]>>({});
  loadError = $state<string | null>(null);

  async load(): Promise<void> {
    try {
      const state = await commands.getConfigState();
      const tools: Record<string, ResolvedTool[]> = {};
      for (const agent of state.config.agents) tools[agent.name] = await commands.listTools(agent.name);
      this.state = state;
      this.toolsByAgent = tools;
      this.loadError = null;
    } catch (error) {
      this.loadError = String(error);
    }
  }

  async watch(): Promise<void> {
    await events.configChanged.listen(() => void this.load());
  }
}

export const configStore = new ConfigStore();
