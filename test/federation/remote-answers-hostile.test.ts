// What a remote server's answer may put in front of our clients, on SQLite and PostgreSQL: a profile
// (GET /query/profile) whose avatar_url is not an mxc:// URI (a NUL, a javascript: link) is served without
// it — the displayname still shown — and every answer matches the spec's profile schema; a /hierarchy
// summary from another server keeps a well-formed avatar_url and canonical_alias and drops malformed ones.
// Found by the outbound fuzz (seed 1290434089: `"avatar_url": "a\u0000b"` passed to the client).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { json, startHostilePeer, type HostilePeer } from "../helpers/hostile-peer.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { summaryOf } from "../../src/domain/spaces/remote-hierarchy.ts";
import { keyPair, signed } from "../helpers/e2ee.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("hostile remote answers shown to clients on %s", (backend) => {
  let a: FederatedServer;
  let peer: HostilePeer;
  let alice: Session;

  beforeAll(async () => {
    peer = await startHostilePeer();
    a = await startFederatedServer({ backend });
    alice = await registerUser(a, "alice");
  });
  afterAll(async () => {
    await Promise.all([a?.close(), peer?.close()]);
  });

  it("a remote profile's avatar_url that is not an mxc:// URI is left out; a good one is kept", async () => {
    const cases: Array<[string, unknown, string | undefined]> = [
      ["nul", "a\u0000b", undefined],
      ["script", "javascript:alert(1)", undefined],
      ["http", "https://example.org/a.png", undefined],
      ["badid", `mxc://${peer.serverName}/a/b`, undefined],
      ["number", 12, undefined],
      ["good", `mxc://${peer.serverName}/abcDEF_12-3`, `mxc://${peer.serverName}/abcDEF_12-3`],
    ];
    for (const [local, avatar, expected] of cases) {
      peer.answer = (req) => (req.path === "/_matrix/federation/v1/query/profile" ? json(200, { displayname: `<b>${local}</b>`, avatar_url: avatar }) : json(404, { errcode: "M_NOT_FOUND", error: "no" }));
      const userId = `@${local}:${peer.serverName}`;
      const r = await a.call("GET", `${V3}/profile/${enc(userId)}`, { token: alice.access_token });
      expect(r.status, local).toBe(200);
      expectMatchesSpec(r, "GET", `${V3}/profile/{userId}`);
      expect(r.json, local).toEqual(expected === undefined ? { displayname: `<b>${local}</b>` } : { displayname: `<b>${local}</b>`, avatar_url: expected });
      const field = await a.call("GET", `${V3}/profile/${enc(userId)}/avatar_url`, { token: alice.access_token });
      // One field the user has not set: 200 {} (as Synapse 1.163 answers).
      expect([field.status, field.json], local).toEqual([200, expected === undefined ? {} : { avatar_url: expected }]);
    }
  });

  it("a remote device's `unsigned` (no signature covers it) reaches the client only as a string device_display_name", async () => {
    const cases: Array<[string, unknown, unknown]> = [
      ["numbername", { device_display_name: 5 }, undefined],
      ["notobject", "x\u0000", undefined],
      ["extra", { device_display_name: "Phone", age: "x", nested: { deep: [1] } }, { device_display_name: "Phone" }],
      ["none", undefined, undefined],
    ];
    for (const [local, unsigned, expected] of cases) {
      const userId = `@${local}:${peer.serverName}`;
      const ed = keyPair();
      const keys = signed({ user_id: userId, device_id: "DEV", algorithms: ["m.olm.v1.curve25519-aes-sha2"], keys: { "ed25519:DEV": ed.pub, "curve25519:DEV": keyPair().pub } }, userId, "ed25519:DEV", ed);
      peer.answer = (req) =>
        req.path === "/_matrix/federation/v1/user/keys/query"
          ? json(200, { device_keys: { [userId]: { DEV: unsigned === undefined ? keys : { ...keys, unsigned } } } })
          : json(404, { errcode: "M_NOT_FOUND", error: "no" });
      const r = await a.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [userId]: [] } } });
      expect(r.status, local).toBe(200);
      expectMatchesSpec(r, "POST", `${V3}/keys/query`);
      expect(r.json.failures, local).toEqual({});
      expect(r.json.device_keys[userId], local).toEqual({ DEV: expected === undefined ? keys : { ...keys, unsigned: expected } });
    }
  });
});

describe("a remote /hierarchy summary", () => {
  const base = { room_id: "!r:other.example", num_joined_members: 3 };
  it("keeps a well-formed avatar_url and canonical_alias", () => {
    const s = summaryOf({ ...base, avatar_url: "mxc://other.example/abc", canonical_alias: "#space:other.example" });
    expect(s?.avatar_url).toBe("mxc://other.example/abc");
    expect(s?.canonical_alias).toBe("#space:other.example");
  });
  it("drops a malformed avatar_url or canonical_alias, and still lists the room", () => {
    const s = summaryOf({ ...base, name: "Space", avatar_url: "a\u0000b", canonical_alias: "not an alias" });
    expect(s).toMatchObject({ room_id: base.room_id, name: "Space" });
    expect(s).not.toHaveProperty("avatar_url");
    expect(s).not.toHaveProperty("canonical_alias");
  });
  it("drops allowed_room_ids that are not room ids, an unknown encryption, and child events whose sender is not a user", () => {
    const child = { type: "m.space.child", state_key: "!c:other.example", content: { via: ["other.example"] }, origin_server_ts: 5 };
    const s = summaryOf({
      ...base,
      join_rule: "restricted",
      encryption: "x\u0000y",
      allowed_room_ids: ["", "no", 3, "!ok:other.example"],
      children_state: [{ ...child, sender: "mallory" }, { ...child, sender: "@m:other.example" }],
    });
    expect(s?.allowed_room_ids).toEqual(["!ok:other.example"]);
    expect(s).not.toHaveProperty("encryption");
    expect(s?.children_state.map((e) => e.sender)).toEqual(["@m:other.example"]);
    expect(summaryOf({ ...base, encryption: "m.megolm.v1.aes-sha2" })?.encryption).toBe("m.megolm.v1.aes-sha2");
  });
});
