// `whois` on the GraphQL face, on SQLite and PostgreSQL: the viewer's own devices and connections as
// GET /admin/whois answers them; another user's is M_FORBIDDEN for a non-admin, as on REST.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { gql } from "./client.ts";

const enc = encodeURIComponent;
const Q = `query ($u: String!) { whois(userId: $u) { userId devices { deviceId connections { ip lastSeen userAgent } } } }`;

describe.each(backends())("GraphQL whois on %s", (backend) => {
  const { t, users: { alice, alice2, bob } } = withServer({ backend, users: ["alice", "bob"], logins: { alice2: "alice" } });

  it("answers the viewer's devices as REST does; another user's is refused", async () => {
    const res = await gql(t, Q, { u: alice.user_id }, alice.access_token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    const w = res.body.data.whois;
    const rest = (await t.call("GET", `/_matrix/client/v3/admin/whois/${enc(alice.user_id)}`, { token: alice.access_token })).json;
    expect(w.userId).toBe(alice.user_id);
    expect(w.devices.map((d: { deviceId: string }) => d.deviceId).sort()).toEqual([alice.device_id, alice2.device_id].sort());
    expect(w.devices.map((d: { deviceId: string }) => d.deviceId).sort()).toEqual(Object.keys(rest.devices).sort());
    for (const d of w.devices) {
      const conns = rest.devices[d.deviceId].sessions.flatMap((s: { connections: unknown[] }) => s.connections);
      // REST was asked after GraphQL: the same connections, last seen no earlier.
      expect(d.connections.map((c: { ip: string | null; userAgent: string | null }) => [c.ip, c.userAgent])).toEqual(
        conns.map((c: { ip?: string; user_agent?: string }) => [c.ip ?? null, c.user_agent ?? null]),
      );
      d.connections.forEach((c: { lastSeen: number }, i: number) => {
        expect(typeof c.lastSeen).toBe("number");
        expect(c.lastSeen).toBeLessThanOrEqual(conns[i].last_seen);
      });
    }
    const other = await gql(t, Q, { u: alice.user_id }, bob.access_token);
    expect(other.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_FORBIDDEN", code: "FORBIDDEN" });
  });
});
