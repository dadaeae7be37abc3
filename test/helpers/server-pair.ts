// Two federating Weft servers, A and B, on one backend, with alice registered on A and bob on B: where the
// Weft ↔ Weft federation tests start. `b` gives B's config where a test needs B otherwise (its sender off).
import { startFederatedServer, type FederatedServer } from "./federation.ts";
import type { Backend } from "./server.ts";
import { registerUser, type Session } from "./users.ts";

export interface ServerPair {
  a: FederatedServer;
  b: FederatedServer;
  alice: Session;
  bob: Session;
  close(): Promise<void>;
}

export async function startServerPair(backend: Backend, opts: { b?: Record<string, unknown> } = {}): Promise<ServerPair> {
  const [a, b] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend, ...(opts.b ? { config: opts.b } : {}) })]);
  const [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  return { a, b, alice, bob, close: async () => void (await Promise.all([a.close(), b.close()])) };
}
