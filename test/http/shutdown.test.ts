// Shutting down with a /sync long poll waiting, on SQLite and PostgreSQL: the poll answers at once with a
// normal response (not a 500 from a closed database, not after its 30 s timeout), and close() returns.
import { describe, expect, it } from "vitest";
import { backends, startTestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";

describe.each(backends())("shutdown on %s", (backend) => {
  it("answers a waiting long poll and closes without waiting for its timeout", async () => {
    const t = await startTestServer({ backend });
    try {
      const alice = await registerUser(t, "alice");
      const first = await t.call("GET", "/_matrix/client/v3/sync", { token: alice.access_token });
      expect(first.status).toBe(200);
      const services = t.hs.services;
      const poll = t.call("GET", `/_matrix/client/v3/sync?timeout=30000&since=${encodeURIComponent(first.json.next_batch)}`, { token: alice.access_token });
      // Wait until the server is holding the request.
      while (services.inFlight.size === 0) await new Promise((r) => setTimeout(r, 5));
      const started = Date.now();
      await t.stop();
      const res = await poll;
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(typeof res.json.next_batch).toBe("string");
      expect(services.inFlight.size).toBe(0);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await t.close();
    }
  });

  it("closes promptly after a client gave up on its long poll", async () => {
    const t = await startTestServer({ backend });
    try {
      const alice = await registerUser(t, "alice");
      const first = await t.call("GET", "/_matrix/client/v3/sync", { token: alice.access_token });
      const services = t.hs.services;
      const abort = new AbortController();
      const poll = fetch(`${t.baseUrl}/_matrix/client/v3/sync?timeout=30000&since=${encodeURIComponent(first.json.next_batch)}`, {
        headers: { authorization: `Bearer ${alice.access_token}` },
        signal: abort.signal,
      }).catch((err: unknown) => err);
      while (services.inFlight.size === 0) await new Promise((r) => setTimeout(r, 5));
      abort.abort();
      expect(await poll).toBeInstanceOf(Error);
      const started = Date.now();
      await t.stop();
      expect(services.inFlight.size).toBe(0);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await t.close();
    }
  }, 40_000);
});
