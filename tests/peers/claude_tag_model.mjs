/**
 * The model of Claude Code as a calling agent (the nonce-tag protocol), for the
 * real `claude` binary: aimock's programmatic API on 127.0.0.1:PORT (argv[2]),
 * answering Anthropic Messages requests by what they hold. Each step's nonce is
 * read from its system prompt (Switchboard appends the protocol there with a
 * fresh nonce every step), so a tag can be written with it, which a JSON fixture
 * cannot do; a call's result comes in the last user message, never the system
 * prompt. The scenario is the keyword of the user's first message:
 *   single   call echo with "ping", then answer in prose with what came back
 *   goes-on  the same, but keep writing after the tag
 *   twice    call echo with "ping", then with "pong", then answer
 *   denied   call guarded (which the config denies), then say what came back
 *   slow     call echo, then take 60 s over the resumed step (a cancel lands there)
 */
import { LLMock } from "@copilotkit/aimock";

const port = Number(process.argv[2]);

const text = (content) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((part) => (typeof part === "string" ? part : (part?.text ?? ""))).join("")
      : "";

function read(req) {
  const system = req.messages.filter((m) => m.role === "system").map((m) => text(m.content)).join("\n");
  const users = req.messages.filter((m) => m.role === "user").map((m) => text(m.content));
  const nonce = /<milk:tool_call:(\w+)>/.exec(system)?.[1];
  const scenario = ["goes-on", "twice", "denied", "slow", "single"].find((word) => users.some((u) => u.includes(word)));
  const result = /\[Tool result from (\w+): ([\s\S]*)\]/.exec(users.at(-1) ?? "");
  if (/\[Tool result from \w+:/.test(system)) throw new Error("a tool result in the system prompt");
  return { nonce, scenario, result };
}

const tag = (nonce, agent, request) =>
  `<milk:tool_call:${nonce}>${JSON.stringify({ agent, request })}</milk:tool_call:${nonce}>`;

function answer(req) {
  const { nonce, scenario, result } = read(req);
  const usage = { input_tokens: 200, output_tokens: 20 };
  if (!nonce) return { content: "No protocol in my instructions.", usage };
  if (!result) {
    const agent = scenario === "denied" ? "guarded" : "echo";
    const after = scenario === "goes-on" ? " And here I keep writing after the tag." : "";
    return { content: `I will ask the ${agent} agent. ${tag(nonce, agent, "ping")}${after}`, usage };
  }
  const [, agent, body] = result;
  if (scenario === "twice" && body.includes("Echo: ping") && !body.includes("Echo: pong"))
    return { content: `Once more. ${tag(nonce, "echo", "pong")}`, usage };
  const said = /Echo: \w+/.exec(body)?.[0] ?? (/denied|refused/i.test(body) ? "it was refused" : "nothing");
  return { content: `The ${agent} agent came back: ${said}.`, usage };
}

const mock = new LLMock({ port, host: "127.0.0.1", chunkSize: 8 });
mock.addFixture({
  match: { predicate: (req) => read(req).scenario === "slow" && Boolean(read(req).result) },
  response: answer,
  latency: 60000,
});
mock.addFixture({ match: { predicate: () => true }, response: answer });
await mock.start();
process.stdout.write(`listening on ${port}\n`);
