// The homeservers a scenario runs on when it answers to Synapse too: Weft on each database and the
// pinned live Synapse, each started with the same options, behind one small client API (base URL,
// calls, registration). Tests that compare Weft with Synapse describe.each over `homesWith(config)`.
import { backends, startTestServer, type JsonResponse } from "./server.ts";
import { registerUser, type Session } from "./users.ts";
import { startSynapse } from "./synapse.ts";

export interface Home {
  baseUrl: string;
  call(method: string, p: string, opts?: { body?: unknown; token?: string }): Promise<JsonResponse>;
  register(localpart: string): Promise<Session>;
  /** Whether this is Weft (its answers are checked against the spec; Synapse adds fields of its own). */
  weft: boolean;
  close(): Promise<void>;
}

/** `[name, start]` for Weft on each database and for Synapse, started with `config` (`synapseConfig` for Synapse if given). */
export function homesWith(config: Record<string, unknown>, synapseConfig: Record<string, unknown> = config): [string, () => Promise<Home>][] {
  return [
    ...backends().map((backend): [string, () => Promise<Home>] => [`Weft on ${backend}`, async () => {
      const t = await startTestServer({ backend, config });
      return { baseUrl: t.baseUrl, call: (m, p, o) => t.call(m, p, o), register: (l) => registerUser(t, l), weft: true, close: () => t.close() };
    }]),
    ["Synapse", async () => {
      const s = await startSynapse({ config: synapseConfig });
      return { baseUrl: s.clientUrl, call: (m, p, o) => s.call(m, p, o), register: (l) => s.register(l), weft: false, close: () => s.close() };
    }],
  ];
}
