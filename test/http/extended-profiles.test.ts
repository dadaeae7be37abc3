// Extended profiles (spec v1.16, MSC4133, and MSC4175's m.tz) over HTTP. One client scenario runs against
// Weft on SQLite and PostgreSQL and against the pinned live Synapse with the same assertions: fields of
// any JSON type set, read (whole profile and one key) and deleted; bad key names, bodies and sizes
// answered with the spec's errors and storage left as it was; only the user (or a server admin) writing,
// guests their display name alone; DELETE of displayname / avatar_url clearing them in member events, and
// custom fields never reaching member events. Where Weft answers otherwise than Synapse, a test says both
// and why. Then Weft alone: profile_fields config, deactivation, GraphQL, and custom fields fetched over
// federation between two Weft servers (and from a hostile one). Responses checked against the OpenAPI.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type JsonResponse, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { startServerPair, type ServerPair } from "../helpers/server-pair.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { json, startHostilePeer, type HostilePeer } from "../helpers/hostile-peer.ts";
import { errcode, gql } from "../graphql/client.ts";
import { parseConfig } from "../../src/config/config.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const prof = (userId: string, key?: string) => `${V3}/profile/${enc(userId)}${key === undefined ? "" : `/${enc(key)}`}`;

/** What the scenario needs of a server: calls, accounts, and (Weft) its stored fields. */
interface Target {
  kind: "weft" | "synapse";
  serverName: string;
  call(method: string, path: string, opts?: { body?: unknown; token?: string }): Promise<JsonResponse>;
  user(localpart: string): Promise<Session>;
  admin(localpart: string): Promise<Session>;
  guest(): Promise<Session>;
  /** The extended fields as stored (Weft: the profile_fields table; Synapse: undefined). */
  stored(userId: string): Promise<Record<string, unknown> | undefined>;
}

function weftTarget(t: TestServer): Target {
  return {
    kind: "weft",
    serverName: t.config.server_name,
    call: (m, p, o) => t.call(m, p, o),
    user: (l) => registerUser(t, l),
    admin: async (l) => {
      const s = await registerUser(t, l);
      await t.hs.services.users.setAdmin(s.user_id, true);
      return loginUser(t, l);
    },
    guest: async () => (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json as Session,
    stored: async (u) => ({ ...(await t.hs.services.profileFields.all(u)) }),
  };
}

function synapseTarget(syn: SynapseServer): Target {
  return {
    kind: "synapse",
    serverName: syn.serverName,
    call: (m, p, o) => syn.call(m, p, o),
    user: (l) => syn.register(l) as Promise<Session>,
    admin: (l) => syn.register(l, undefined, { admin: true }) as Promise<Session>,
    guest: async () => (await syn.call("POST", `${V3}/register?kind=guest`, { body: {} })).json as Session,
    stored: async () => undefined,
  };
}

/** The client scenario, the same for Weft and Synapse. Localparts get `tag` so one Synapse serves every test. */
function clientScenario(target: () => Target) {
  let n = 0;
  const fresh = (name: string) => target().user(`${name}_${++n}`);
  const whole = async (u: string) => (await target().call("GET", prof(u))).json;

  /** The profile (API and, on Weft, storage) before `fn`; expected unchanged after it. */
  async function unchanged(u: string, fn: () => Promise<void>) {
    const [before, storedBefore] = [await whole(u), await target().stored(u)];
    await fn();
    expect(await whole(u)).toEqual(before);
    expect(await target().stored(u)).toEqual(storedBefore);
  }

  it("sets, reads and deletes m.tz and custom fields of any JSON type", async () => {
    const t = target();
    const alice = await fresh("alice");
    const bob = await fresh("bob");
    const fields: Record<string, unknown> = {
      "m.tz": "Europe/London",
      "org.example.pronouns": { en: "she/her", nested: [{ a: 1 }] },
      "org.example.rating": 4.5,
      "org.example.tags": ["a", 1, null, true],
      // The spec: servers that accept null store it (rather than deleting the field).
      "org.example.nothing": null,
      "org.example-app.key_2": "x",
      // No namespace: the appendix's grammar alone, as Synapse checks it.
      foo: "bar",
    };
    for (const [key, value] of Object.entries(fields)) {
      const put = await t.call("PUT", prof(alice.user_id, key), { token: alice.access_token, body: { [key]: value } });
      expect([put.status, put.json], key).toEqual([200, {}]);
      expectMatchesSpec(put, "PUT", prof(alice.user_id, key));
    }
    const all = await t.call("GET", prof(alice.user_id));
    expect(all.status).toBe(200);
    expectMatchesSpec(all, "GET", prof(alice.user_id));
    expect(all.json).toEqual({ displayname: alice.user_id.slice(1, alice.user_id.indexOf(":")), ...fields });
    if (t.kind === "weft") expect(await t.stored(alice.user_id)).toEqual(fields);
    for (const [key, value] of Object.entries(fields)) {
      const one = await t.call("GET", prof(alice.user_id, key), { token: bob.access_token });
      expect([one.status, one.json], key).toEqual([200, { [key]: value }]);
      expectMatchesSpec(one, "GET", prof(alice.user_id, key));
    }
    // A new value replaces the old one whole (objects are not merged).
    await t.call("PUT", prof(alice.user_id, "org.example.pronouns"), { token: alice.access_token, body: { "org.example.pronouns": { de: "sie" } } });
    expect((await t.call("GET", prof(alice.user_id, "org.example.pronouns"))).json).toEqual({ "org.example.pronouns": { de: "sie" } });

    const del = await t.call("DELETE", prof(alice.user_id, "org.example.tags"), { token: alice.access_token });
    expect([del.status, del.json]).toEqual([200, {}]);
    expectMatchesSpec(del, "DELETE", prof(alice.user_id, "org.example.tags"));
    for (const key of ["org.example.tags", "org.example.never"]) {
      const gone = await t.call("GET", prof(alice.user_id, key));
      expect([gone.status, gone.json.errcode], key).toEqual([404, "M_NOT_FOUND"]);
    }
    // Deleting what is not there: 200 (the spec: "deleted or it doesn't exist").
    expect((await t.call("DELETE", prof(alice.user_id, "org.example.tags"), { token: alice.access_token })).status).toBe(200);
    expect(Object.keys(await whole(alice.user_id))).not.toContain("org.example.tags");
    // Custom keys live under v3 only (as Synapse: r0 has displayname and avatar_url alone).
    const r0 = await t.call("GET", `/_matrix/client/r0/profile/${enc(alice.user_id)}/m.tz`);
    expect([r0.status, r0.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
  });

  it("refuses bad key names, bodies and sizes with the spec's errors, leaving the profile as it was", async () => {
    const t = target();
    const carol = await fresh("carol");
    const u = carol.user_id;
    await t.call("PUT", prof(u, "m.tz"), { token: carol.access_token, body: { "m.tz": "UTC" } });
    const badKeys: [string, string][] = [
      ["Org.example.caps", "M_INVALID_PARAM"],
      ["1starts.with.digit", "M_INVALID_PARAM"],
      ["_private", "M_INVALID_PARAM"],
      ["org.example.sp ace", "M_INVALID_PARAM"],
      ["é", "M_INVALID_PARAM"],
      ["a".repeat(256), "M_KEY_TOO_LARGE"],
    ];
    await unchanged(u, async () => {
      for (const [key, code] of badKeys) {
        const label = key.slice(0, 20);
        const put = await t.call("PUT", prof(u, key), { token: carol.access_token, body: { [key]: 1 } });
        expect([put.status, put.json.errcode], `PUT ${label}`).toEqual([400, code]);
        expectMatchesSpec(put, "PUT", prof(u, "m.tz"));
        const get = await t.call("GET", prof(u, key));
        expect([get.status, get.json.errcode], `GET ${label}`).toEqual([400, code]);
        const del = await t.call("DELETE", prof(u, key), { token: carol.access_token });
        expect([del.status, del.json.errcode], `DELETE ${label}`).toEqual([400, code]);
        expectMatchesSpec(del, "DELETE", prof(u, "m.tz"));
      }
      const bodies: [string, unknown, string][] = [
        ["m.tz", undefined, "M_NOT_JSON"],
        ["m.tz", [1], "M_BAD_JSON"],
        ["m.tz", { other: "UTC" }, "M_MISSING_PARAM"],
        ["org.example.x", { "org.example.y": 1 }, "M_MISSING_PARAM"],
        ["displayname", { displayname: 12 }, "M_INVALID_PARAM"],
        ["displayname", { displayname: null }, "M_INVALID_PARAM"],
        ["avatar_url", { avatar_url: 1 }, "M_INVALID_PARAM"],
        // 64 KiB of value alone makes the profile larger than the spec's 64 KiB.
        ["org.example.big", { "org.example.big": "x".repeat(65_536) }, "M_PROFILE_TOO_LARGE"],
      ];
      for (const [key, body, code] of bodies) {
        const put = await t.call("PUT", prof(u, key), { token: carol.access_token, body });
        expect([put.status, put.json.errcode], `${key} ${JSON.stringify(body)?.slice(0, 40)}`).toEqual([400, code]);
        expectMatchesSpec(put, "PUT", prof(u, key));
      }
    });
    // The longest key (255 bytes) is a key.
    const longest = "a".repeat(255);
    expect((await t.call("PUT", prof(u, longest), { token: carol.access_token, body: { [longest]: "long" } })).status).toBe(200);
    expect((await t.call("GET", prof(u, longest))).json).toEqual({ [longest]: "long" });
  });

  it("holds the whole profile (displayname and fields, as JSON) to 64 KiB, counting a replaced value once", async () => {
    const t = target();
    const dave = await fresh("dave");
    const u = dave.user_id;
    const name = u.slice(1, u.indexOf(":"));
    expect((await t.call("PUT", prof(u, "m.tz"), { token: dave.access_token, body: { "m.tz": "UTC" } })).status).toBe(200);
    const base = JSON.stringify({ displayname: name, "m.tz": "UTC", "org.example.big": "" }).length;
    const fill = (n: number) => t.call("PUT", prof(u, "org.example.big"), { token: dave.access_token, body: { "org.example.big": "x".repeat(n) } });
    // Exactly 65,536 bytes: allowed; one more: M_PROFILE_TOO_LARGE, the stored value kept.
    expect((await fill(65_536 - base)).status).toBe(200);
    expect(JSON.stringify(await whole(u)).length).toBe(65_536);
    await unchanged(u, async () => {
      const over = await fill(65_536 - base + 1);
      expect([over.status, over.json.errcode]).toEqual([400, "M_PROFILE_TOO_LARGE"]);
      const more = await t.call("PUT", prof(u, "org.example.more"), { token: dave.access_token, body: { "org.example.more": 1 } });
      expect([more.status, more.json.errcode]).toEqual([400, "M_PROFILE_TOO_LARGE"]);
      // The display name counts too.
      const longer = await t.call("PUT", prof(u, "displayname"), { token: dave.access_token, body: { displayname: `${name}x` } });
      expect([longer.status, longer.json.errcode]).toEqual([400, "M_PROFILE_TOO_LARGE"]);
    });
    // Replacing a value by one as long fits.
    expect((await t.call("PUT", prof(u, "m.tz"), { token: dave.access_token, body: { "m.tz": "CET" } })).status).toBe(200);
    expect((await t.call("DELETE", prof(u, "org.example.big"), { token: dave.access_token })).status).toBe(200);
    expect((await t.call("PUT", prof(u, "displayname"), { token: dave.access_token, body: { displayname: `${name}x` } })).status).toBe(200);
  });

  it("lets only the user change their profile, server admins any local user's, guests their display name alone", async () => {
    const t = target();
    const erin = await fresh("erin");
    const mallory = await fresh("mallory");
    const admin = await target().admin(`admin_${++n}`);
    const u = erin.user_id;
    await t.call("PUT", prof(u, "m.tz"), { token: erin.access_token, body: { "m.tz": "Asia/Tokyo" } });
    await unchanged(u, async () => {
      const put = await t.call("PUT", prof(u, "m.tz"), { token: mallory.access_token, body: { "m.tz": "UTC" } });
      expect([put.status, put.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      expectMatchesSpec(put, "PUT", prof(u, "m.tz"));
      const del = await t.call("DELETE", prof(u, "m.tz"), { token: mallory.access_token });
      // Synapse answers this one 400 (with M_FORBIDDEN); Weft the spec's 403, as for PUT.
      expect([del.status, del.json.errcode]).toEqual([t.kind === "synapse" ? 400 : 403, "M_FORBIDDEN"]);
      for (const method of ["PUT", "DELETE"]) {
        const anon = await t.call(method, prof(u, "m.tz"), { body: method === "PUT" ? { "m.tz": "UTC" } : undefined });
        expect([anon.status, anon.json.errcode], method).toEqual([401, "M_MISSING_TOKEN"]);
      }
    });
    const byAdmin = await t.call("PUT", prof(u, "org.example.badge"), { token: admin.access_token, body: { "org.example.badge": "verified" } });
    expect(byAdmin.status).toBe(200);
    expect((await t.call("GET", prof(u, "org.example.badge"))).json).toEqual({ "org.example.badge": "verified" });
    expect((await t.call("DELETE", prof(u, "org.example.badge"), { token: admin.access_token })).status).toBe(200);
    expect((await t.call("GET", prof(u, "org.example.badge"))).status).toBe(404);

    const guest = await t.guest();
    expect(guest.access_token).toBeTruthy();
    const g = guest.user_id;
    await unchanged(g, async () => {
      for (const [method, key] of [["PUT", "m.tz"], ["PUT", "org.example.x"], ["DELETE", "m.tz"], ["DELETE", "avatar_url"], ["PUT", "avatar_url"]] as const) {
        const res = await t.call(method, prof(g, key), { token: guest.access_token, body: method === "PUT" ? { [key]: key === "avatar_url" ? `mxc://${t.serverName}/a` : "x" } : undefined });
        expect([res.status, res.json.errcode], `${method} ${key}`).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
      }
    });
    expect((await t.call("PUT", prof(g, "displayname"), { token: guest.access_token, body: { displayname: "Visitor" } })).status).toBe(200);
    expect((await whole(g)).displayname).toBe("Visitor");
    expect((await t.call("DELETE", prof(g, "displayname"), { token: guest.access_token })).status).toBe(200);
    expect((await t.call("GET", prof(u, "m.tz"), { token: guest.access_token })).json).toEqual({ "m.tz": "Asia/Tokyo" });
  });

  it("DELETE of displayname and avatar_url clears them in member events too; custom fields never reach member events", async () => {
    const t = target();
    const fay = await fresh("fay");
    const u = fay.user_id;
    const room = (await t.call("POST", `${V3}/createRoom`, { token: fay.access_token, body: {} })).json.room_id as string;
    const member = async () => (await t.call("GET", `${V3}/rooms/${enc(room)}/state/m.room.member/${enc(u)}`, { token: fay.access_token })).json;
    const avatar = `mxc://${t.serverName}/avatar1`;
    expect((await t.call("PUT", prof(u, "avatar_url"), { token: fay.access_token, body: { avatar_url: avatar } })).status).toBe(200);
    for (const [key, value] of [["m.tz", "America/New_York"], ["org.example.pronouns", { en: "they" }]] as const)
      expect((await t.call("PUT", prof(u, key), { token: fay.access_token, body: { [key]: value } })).status).toBe(200);
    await expect.poll(async () => (await member()).avatar_url, { timeout: 20_000 }).toBe(avatar);
    const name = u.slice(1, u.indexOf(":"));
    expect(await member()).toEqual({ membership: "join", displayname: name, avatar_url: avatar });

    const delAvatar = await t.call("DELETE", prof(u, "avatar_url"), { token: fay.access_token });
    expect([delAvatar.status, delAvatar.json]).toEqual([200, {}]);
    await expect.poll(async () => Object.keys(await member()).sort(), { timeout: 20_000 }).toEqual(["displayname", "membership"]);
    const delName = await t.call("DELETE", prof(u, "displayname"), { token: fay.access_token });
    expect([delName.status, delName.json]).toEqual([200, {}]);
    await expect.poll(member, { timeout: 20_000 }).toEqual({ membership: "join" });
    expect(await whole(u)).toEqual({ "m.tz": "America/New_York", "org.example.pronouns": { en: "they" } });
    for (const key of ["displayname", "avatar_url"]) {
      const res = await t.call("GET", prof(u, key));
      // An unset one: 200 `{}` on both (Synapse before 1.163 answered {key: null}).
      expect([res.status, res.json], key).toEqual([200, {}]);
    }
  });

  it("answers 404 M_NOT_FOUND for a field of an unknown user", async () => {
    const t = target();
    for (const key of ["m.tz", "org.example.x"]) {
      const res = await t.call("GET", prof(`@nobody_here:${t.serverName}`, key));
      expect([res.status, res.json.errcode], key).toEqual([404, "M_NOT_FOUND"]);
    }
  });

  it("where Weft answers otherwise than Synapse: a body with other keys, a non-string m.tz, a boolean field", async () => {
    const t = target();
    const gus = await fresh("gus");
    const u = gus.user_id;
    const name = u.slice(1, u.indexOf(":"));
    // The spec's body holds exactly the key of the path; Synapse takes the key and ignores the rest.
    const extra = await t.call("PUT", prof(u, "m.tz"), { token: gus.access_token, body: { "m.tz": "UTC", "org.example.extra": 1 } });
    if (t.kind === "synapse") expect(extra.status).toBe(200);
    else expect([extra.status, extra.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    expect(await whole(u)).toEqual(t.kind === "synapse" ? { displayname: name, "m.tz": "UTC" } : { displayname: name });
    // The spec: m.tz is an IANA time zone name, a string (GET /profile's schema); Synapse stores anything.
    const tz = await t.call("PUT", prof(u, "m.tz"), { token: gus.access_token, body: { "m.tz": 5 } });
    if (t.kind === "synapse") expect(tz.status).toBe(200);
    else expect([tz.status, tz.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
    // A boolean comes back a boolean; Synapse on SQLite answers one field's `true` as 1 (SQLite's
    // JSON_EXTRACT turns JSON booleans into integers), the whole profile's as true.
    expect((await t.call("PUT", prof(u, "org.example.flag"), { token: gus.access_token, body: { "org.example.flag": true } })).status).toBe(200);
    expect((await whole(u))["org.example.flag"]).toBe(true);
    expect((await t.call("GET", prof(u, "org.example.flag"))).json).toEqual({ "org.example.flag": t.kind === "synapse" ? 1 : true });
  });
}

describe.each(backends())("extended profiles on Weft (%s)", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });
  clientScenario(() => weftTarget(t));
});

describe("extended profiles on a live Synapse", () => {
  let syn: SynapseServer;
  beforeAll(async () => {
    // Guests, as on Weft's test servers. MSC4133's stable endpoints need no experimental flag.
    syn = await startSynapse({ config: { allow_guest_access: true } });
  }, 120_000);
  afterAll(async () => {
    await syn?.close();
  });
  clientScenario(() => synapseTarget(syn));
});

describe.each(backends())("extended profiles, Weft alone, on %s", (backend) => {
  const V3P = (t: TestServer, u: string, k: string) => t.call("GET", prof(u, k));

  it("profile_fields keeps users from changing the fields it disallows (or all of them); server admins still may", async () => {
    const t = await startTestServer({ backend, config: { profile_fields: { disallowed: ["org.example.managed", "displayname"] } } });
    try {
      const alice = await registerUser(t, "alice");
      const admin = await weftTarget(t).admin("admin");
      const u = alice.user_id;
      for (const [method, key] of [["PUT", "org.example.managed"], ["DELETE", "org.example.managed"], ["PUT", "displayname"], ["DELETE", "displayname"]] as const) {
        const res = await t.call(method, prof(u, key), { token: alice.access_token, body: method === "PUT" ? { [key]: "x" } : undefined });
        expect([res.status, res.json.errcode], `${method} ${key}`).toEqual([403, "M_FORBIDDEN"]);
        expectMatchesSpec(res, method, prof(u, key));
      }
      expect(await t.hs.services.profileFields.all(u)).toEqual({});
      expect((await V3P(t, u, "displayname")).json).toEqual({ displayname: "alice" });
      expect((await t.call("PUT", prof(u, "m.tz"), { token: alice.access_token, body: { "m.tz": "UTC" } })).status).toBe(200);
      expect((await t.call("PUT", prof(u, "org.example.managed"), { token: admin.access_token, body: { "org.example.managed": "by the server" } })).status).toBe(200);
      expect((await V3P(t, u, "org.example.managed")).json).toEqual({ "org.example.managed": "by the server" });
    } finally {
      await t.close();
    }

    const off = await startTestServer({ backend, config: { profile_fields: { enabled: false } } });
    try {
      const bob = await registerUser(off, "bob");
      for (const key of ["displayname", "avatar_url", "m.tz", "org.example.x"]) {
        const res = await off.call("PUT", prof(bob.user_id, key), { token: bob.access_token, body: { [key]: key === "avatar_url" ? "mxc://weft.test/a" : "x" } });
        expect([res.status, res.json.errcode], key).toEqual([403, "M_FORBIDDEN"]);
      }
      expect(await off.call("GET", prof(bob.user_id)).then((r) => r.json)).toEqual({ displayname: "bob" });
    } finally {
      await off.close();
    }

    const only = await startTestServer({ backend, config: { profile_fields: { allowed: ["m.tz"] } } });
    try {
      const carol = await registerUser(only, "carol");
      expect((await only.call("PUT", prof(carol.user_id, "m.tz"), { token: carol.access_token, body: { "m.tz": "UTC" } })).status).toBe(200);
      const other = await only.call("PUT", prof(carol.user_id, "org.example.x"), { token: carol.access_token, body: { "org.example.x": 1 } });
      expect([other.status, other.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    } finally {
      await only.close();
    }
  });

  it("checks the 64 KiB of concurrent changes one after the other: of two that fit alone but not together, one is stored", async () => {
    const t = await startTestServer({ backend });
    try {
      const alice = await registerUser(t, "alice");
      for (let round = 0; round < 3; round++) {
        const keys = [`org.example.a${round}`, `org.example.b${round}`];
        const answers = await Promise.all(keys.map((k) => t.call("PUT", prof(alice.user_id, k), { token: alice.access_token, body: { [k]: "x".repeat(40_000) } })));
        expect(answers.map((r) => r.status).sort(), `round ${round}`).toEqual([200, 400]);
        expect(answers.find((r) => r.status === 400)!.json.errcode).toBe("M_PROFILE_TOO_LARGE");
        const stored = await t.hs.services.profileFields.all(alice.user_id);
        expect(Object.keys(stored).length).toBe(1);
        for (const k of Object.keys(stored)) await t.call("DELETE", prof(alice.user_id, k), { token: alice.access_token });
      }
    } finally {
      await t.close();
    }
  });

  it("refuses a profile_fields list with a name that is no profile key", () => {
    expect(() => parseConfig({ server_name: "weft.test", profile_fields: { disallowed: ["Not A Key"] } })).toThrow(/profile_fields\.disallowed\[0\]/);
    expect(() => parseConfig({ server_name: "weft.test", profile_fields: { allowed: "m.tz" } })).toThrow(/profile_fields\.allowed/);
    expect(parseConfig({ server_name: "weft.test" }).profile_fields).toEqual({ enabled: true, disallowed: [] });
  });

  it("enable_set_displayname off refuses DELETE of a display name too (as Synapse), and an admin's change of a remote user's profile is 400", async () => {
    const t = await startTestServer({ backend, config: { enable_set_displayname: false } });
    try {
      const alice = await registerUser(t, "alice");
      const del = await t.call("DELETE", prof(alice.user_id, "displayname"), { token: alice.access_token });
      expect([del.status, del.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      expect((await V3P(t, alice.user_id, "displayname")).json).toEqual({ displayname: "alice" });
      const remote = await t.call("PUT", prof("@someone:elsewhere.test", "m.tz"), { token: alice.access_token, body: { "m.tz": "UTC" } });
      expect([remote.status, remote.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
      const admin = await weftTarget(t).admin("admin");
      const byAdmin = await t.call("PUT", prof("@someone:elsewhere.test", "m.tz"), { token: admin.access_token, body: { "m.tz": "UTC" } });
      expect([byAdmin.status, byAdmin.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
      const missing = await t.call("PUT", prof("@nobody:weft.test", "m.tz"), { token: admin.access_token, body: { "m.tz": "UTC" } });
      expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    } finally {
      await t.close();
    }
  });

  it("deactivation empties the extended fields", async () => {
    const t = await startTestServer({ backend });
    try {
      const alice = await registerUser(t, "alice");
      for (const [k, v] of [["m.tz", "UTC"], ["org.example.a", { b: 1 }]] as const)
        expect((await t.call("PUT", prof(alice.user_id, k), { token: alice.access_token, body: { [k]: v } })).status).toBe(200);
      expect(Object.keys(await t.hs.services.profileFields.all(alice.user_id))).toEqual(["m.tz", "org.example.a"]);
      const first = await t.call("POST", `${V3}/account/deactivate`, { token: alice.access_token, body: {} });
      const done = await t.call("POST", `${V3}/account/deactivate`, {
        token: alice.access_token,
        body: { auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "password", session: first.json.session } },
      });
      expect(done.status, JSON.stringify(done.json)).toBe(200);
      expect(await t.hs.services.profileFields.all(alice.user_id)).toEqual({});
      for (const key of [undefined, "m.tz"]) expect((await t.call("GET", prof(alice.user_id, key))).status).toBe(404);
    } finally {
      await t.close();
    }
  });

  it("GraphQL: setProfileField / deleteProfileField through the same rules, the viewer's timeZone and profileFields, profile(userId)", async () => {
    const t = await startTestServer({ backend });
    try {
      const alice = await registerUser(t, "alice");
      const bob = await registerUser(t, "bob");
      const set = (key: string, value: unknown) => gql(t, `mutation ($k: String!, $v: JSON) { setProfileField(key: $k, value: $v) { timeZone profileFields } }`, { k: key, v: value }, alice.access_token);
      expect((await set("m.tz", "Europe/Oslo")).body.data.setProfileField).toEqual({ timeZone: "Europe/Oslo", profileFields: { "m.tz": "Europe/Oslo" } });
      const custom = await set("org.example.pets", ["cat", { name: "Rex", age: 3 }]);
      expect(custom.body.data.setProfileField.profileFields).toEqual({ "m.tz": "Europe/Oslo", "org.example.pets": ["cat", { name: "Rex", age: 3 }] });
      // The REST face sees what GraphQL stored.
      expect((await V3P(t, alice.user_id, "org.example.pets")).json).toEqual({ "org.example.pets": ["cat", { name: "Rex", age: 3 }] });
      for (const [key, value, code] of [["Bad", 1, "M_INVALID_PARAM"], ["a".repeat(256), 1, "M_KEY_TOO_LARGE"], ["m.tz", 5, "M_INVALID_PARAM"], ["org.example.big", "x".repeat(70_000), "M_PROFILE_TOO_LARGE"], ["displayname", 3, "M_INVALID_PARAM"]] as const) {
        const res = await set(key, value);
        expect(errcode(res.body), key.slice(0, 20)).toBe(code);
      }
      expect(Object.keys(await t.hs.services.profileFields.all(alice.user_id))).toEqual(["m.tz", "org.example.pets"]);
      const other = await gql(t, `{ profile(userId: "${alice.user_id}") { userId displayName timeZone fields } }`, undefined, bob.access_token);
      expect(other.body.data.profile).toEqual({ userId: alice.user_id, displayName: "alice", timeZone: "Europe/Oslo", fields: { "m.tz": "Europe/Oslo", "org.example.pets": ["cat", { name: "Rex", age: 3 }] } });
      expect((await gql(t, `{ profile(userId: "@nobody:weft.test") { userId } }`, undefined, bob.access_token)).body.data.profile).toBeNull();
      const del = await gql(t, `mutation { deleteProfileField(key: "m.tz") { timeZone profileFields } }`, undefined, alice.access_token);
      expect(del.body.data.deleteProfileField).toEqual({ timeZone: null, profileFields: { "org.example.pets": ["cat", { name: "Rex", age: 3 }] } });
      // displayname through the generic mutation keeps its rules and its propagation.
      expect((await set("displayname", "Alice G")).body.errors).toBeUndefined();
      expect((await V3P(t, alice.user_id, "displayname")).json).toEqual({ displayname: "Alice G" });
      const guest = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json as Session;
      const byGuest = await gql(t, `mutation { setProfileField(key: "m.tz", value: "UTC") { userId } }`, undefined, guest.access_token);
      expect(errcode(byGuest.body)).toBe("M_GUEST_ACCESS_FORBIDDEN");
    } finally {
      await t.close();
    }
  });
});

describe.each(backends())("extended profiles over federation on %s", (backend) => {
  let pair: ServerPair;
  let peer: HostilePeer;
  let c: FederatedServer;
  beforeAll(async () => {
    [pair, peer] = await Promise.all([startServerPair(backend), startHostilePeer()]);
    c = pair.b;
  });
  afterAll(async () => {
    await Promise.all([pair?.close(), peer?.close()]);
  });

  it("a remote user's custom fields come with their profile; one field is served from it, 404 when absent", async () => {
    const { a, b, alice, bob } = pair;
    const fields = { "m.tz": "Europe/Berlin", "org.example.pronouns": { en: "she/her" }, "org.example.nothing": null };
    for (const [k, v] of Object.entries(fields))
      expect((await a.call("PUT", prof(alice.user_id, k), { token: alice.access_token, body: { [k]: v } })).status).toBe(200);

    // A's federation query: the whole profile, one custom field, 404 for one that is not set (as Synapse).
    const query = (qs: string) => {
      const r = { method: "GET" as const, path: `/_matrix/federation/v1/query/profile?user_id=${enc(alice.user_id)}${qs}` };
      return federationCall(a.baseUrl, { ...r, authorization: signedBy(b.serverName, b.hs.services.signingKeys[0]!, a.serverName, r) });
    };
    const all = await query("");
    expect([all.status, all.json]).toEqual([200, { displayname: "alice", ...fields }]);
    expectMatchesSpec(all, "GET", "/_matrix/federation/v1/query/profile");
    expect((await query("&field=org.example.pronouns")).json).toEqual({ "org.example.pronouns": { en: "she/her" } });
    expect((await query("&field=m.tz")).json).toEqual({ "m.tz": "Europe/Berlin" });
    expect((await query("&field=org.example.nothing")).json).toEqual({ "org.example.nothing": null });
    expect((await query("&field=displayname")).json).toEqual({ displayname: "alice" });
    expect((await query("&field=avatar_url")).json).toEqual({});
    for (const field of ["org.example.absent", "constructor", "__proto__", "Not A Key"]) {
      const absent = await query(`&field=${enc(field)}`);
      expect([absent.status, absent.json.errcode], field).toEqual([404, "M_NOT_FOUND"]);
    }

    // B's client: GET /profile of A's user has them; one field too.
    const res = await c.call("GET", prof(alice.user_id), { token: bob.access_token });
    expect([res.status, res.json]).toEqual([200, { displayname: "alice", ...fields }]);
    expectMatchesSpec(res, "GET", prof(alice.user_id));
    expect((await c.call("GET", prof(alice.user_id, "org.example.pronouns"), { token: bob.access_token })).json).toEqual({ "org.example.pronouns": { en: "she/her" } });
    const none = await c.call("GET", prof(alice.user_id, "org.example.absent"), { token: bob.access_token });
    expect([none.status, none.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    // And B's GraphQL face.
    const g = await gql(c, `{ profile(userId: "${alice.user_id}") { timeZone fields } }`, undefined, bob.access_token);
    expect(g.body.data.profile).toEqual({ timeZone: "Europe/Berlin", fields: { "m.tz": "Europe/Berlin", "org.example.pronouns": { en: "she/her" }, "org.example.nothing": null } });
  });

  it("from a hostile server's answer, keys that are no profile keys and a non-string m.tz are left out", async () => {
    const { bob } = pair;
    const userId = `@mallory:${peer.serverName}`;
    peer.answer = (req) =>
      req.path === "/_matrix/federation/v1/query/profile"
        ? json(200, { displayname: "M", "m.tz": 12, ["__proto__"]: { polluted: true }, "Bad Key": 1, ["k".repeat(300)]: 1, "org.example.ok": [1, { a: "b" }], constructor: "c" })
        : json(404, { errcode: "M_NOT_FOUND", error: "no" });
    const res = await c.call("GET", prof(userId), { token: bob.access_token });
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", prof(userId));
    expect(res.json).toEqual({ displayname: "M", "org.example.ok": [1, { a: "b" }], constructor: "c" });
    const tz = await c.call("GET", prof(userId, "m.tz"), { token: bob.access_token });
    expect([tz.status, tz.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });
});
