// What clients feature-detect on at start (issue 33, first contact): /versions's unstable_features, each
// flag one Weft serves (and the endpoint behind each checked here), the config-driven flags following the
// config; and the routes every client probes whatever the server (MatrixRTC transports, dehydrated
// devices), answered exactly as the pinned live Synapse answers them with its default config.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser, type Session } from "../helpers/users.ts";

/** Routes clients probe on start-up (Element Web, Element X, matrix-js-sdk's Rust crypto). */
const PROBES: [string, string][] = [
  ["GET", "/_matrix/client/unstable/org.matrix.msc4143/rtc/transports"],
  ["GET", "/_matrix/client/v1/rtc/transports"],
  ["GET", "/_matrix/client/unstable/org.matrix.msc3814.v1/dehydrated_device"],
  ["GET", "/_matrix/client/unstable/org.matrix.msc2697.v2/dehydrated_device"],
  ["PUT", "/_matrix/client/unstable/org.matrix.msc3814.v1/dehydrated_device"],
];

describe("/versions's unstable_features", () => {
  let t: TestServer;
  let alice: Session;
  beforeAll(async () => {
    t = await startTestServer({});
    alice = await registerUser(t, "alice");
  });
  afterAll(() => t?.close());

  it("lists what Weft serves, with the config-driven flags off by default", async () => {
    const r = await t.call("GET", "/_matrix/client/versions");
    expect(r.status).toBe(200);
    expect(r.json.unstable_features).toEqual({
      "org.matrix.e2e_cross_signing": true,
      "org.matrix.msc2432": true,
      "org.matrix.msc2285.stable": true,
      "org.matrix.msc3827.stable": true,
      "org.matrix.msc3440.stable": true,
      "org.matrix.msc3771": true,
      "org.matrix.msc3773": true,
      "fi.mau.msc2659.stable": true,
      "org.matrix.msc3981": true,
      "org.matrix.msc3882": false,
      "org.matrix.msc3874": false,
      "org.matrix.msc3391": false,
      "org.matrix.msc4140": false,
      "org.matrix.msc4155": false,
      "org.matrix.msc4380.stable": true,
      "com.beeper.msc4169": true,
      "org.matrix.msc4306": false,
      "uk.tcpip.msc4133": false,
      "uk.tcpip.msc4133.stable": true,
      "org.matrix.msc4354": false,
      "org.matrix.msc4108": false,
      "uk.half-shot.msc2666.query_mutual_rooms": true,
      "org.matrix.msc4143": false,
      "org.matrix.simplified_msc3575": true,
      "io.element.e2ee_forced.public": false,
      "io.element.e2ee_forced.private": false,
      "io.element.e2ee_forced.trusted_private": false,
    });
  });

  it("serves the endpoint behind each flag it sets", async () => {
    const room = (await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: {} })).json.room_id as string;
    const r = encodeURIComponent(room);
    // MSC2432: a room's local aliases.
    expect((await t.call("GET", `/_matrix/client/v3/rooms/${r}/aliases`, { token: alice.access_token })).json).toEqual({ aliases: [] });
    // MSC2285: a private read receipt.
    const ev = (await t.call("PUT", `/_matrix/client/v3/rooms/${r}/send/m.room.message/t1`, { token: alice.access_token, body: { msgtype: "m.text", body: "x" } })).json.event_id as string;
    expect((await t.call("POST", `/_matrix/client/v3/rooms/${r}/receipt/m.read.private/${encodeURIComponent(ev)}`, { token: alice.access_token, body: {} })).status).toBe(200);
    // MSC3771: a threaded receipt.
    expect((await t.call("POST", `/_matrix/client/v3/rooms/${r}/receipt/m.read/${encodeURIComponent(ev)}`, { token: alice.access_token, body: { thread_id: "main" } })).status).toBe(200);
    // MSC3981: /relations with recurse.
    const rel = await t.call("GET", `/_matrix/client/v1/rooms/${r}/relations/${encodeURIComponent(ev)}?recurse=true`, { token: alice.access_token });
    expect(rel.status).toBe(200);
    expect(rel.json.recursion_depth).toBeTypeOf("number");
    // MSC3827: room_types in the /publicRooms filter.
    expect((await t.call("POST", "/_matrix/client/v3/publicRooms", { token: alice.access_token, body: { filter: { room_types: [null] } } })).status).toBe(200);
    // MSC2659: the appservice ping (only an appservice may call it: a user is refused, the route exists).
    expect((await t.call("POST", "/_matrix/client/v1/appservice/none/ping", { token: alice.access_token, body: {} })).json.errcode).toBe("M_FORBIDDEN");
    // MSC4133 (stable names): an extended profile field under v3.
    const me = encodeURIComponent(alice.user_id);
    expect((await t.call("PUT", `/_matrix/client/v3/profile/${me}/m.tz`, { token: alice.access_token, body: { "m.tz": "Europe/Paris" } })).status).toBe(200);
    expect((await t.call("GET", `/_matrix/client/v3/profile/${me}/m.tz`)).json).toEqual({ "m.tz": "Europe/Paris" });
    // MSC4186: simplified sliding sync, a list with the new room in it.
    const ss = await t.call("POST", "/_matrix/client/unstable/org.matrix.simplified_msc3575/sync", { token: alice.access_token, body: { lists: { all: { ranges: [[0, 9]], timeline_limit: 1 } } } });
    expect([ss.status, ss.json.lists?.all?.ops?.[0]?.room_ids]).toEqual([200, expect.arrayContaining([room])]);
    // MSC4169: a redaction through /send (room version 10: `redacts` moved to the top level).
    const v10 = (await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { room_version: "10" } })).json.room_id as string;
    const target = (await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(v10)}/send/m.room.message/t2`, { token: alice.access_token, body: { msgtype: "m.text", body: "x" } })).json.event_id as string;
    const red = await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(v10)}/send/m.room.redaction/t3`, { token: alice.access_token, body: { redacts: target } });
    expect(red.status).toBe(200);
    expect((await t.hs.services.rooms.events.get(red.json.event_id))?.pdu.redacts).toBe(target);
    // MSC4380: a user blocking invites is not invited.
    const bob = await registerUser(t, "bob");
    expect((await t.call("PUT", `/_matrix/client/v3/user/${encodeURIComponent(bob.user_id)}/account_data/m.invite_permission_config`, { token: bob.access_token, body: { default_action: "block" } })).status).toBe(200);
    const blocked = await t.call("POST", `/_matrix/client/v3/rooms/${r}/invite`, { token: alice.access_token, body: { user_id: bob.user_id } });
    expect([blocked.status, blocked.json.errcode]).toEqual([403, "M_INVITE_BLOCKED"]);
  });

  it("serves MSC4133's unstable prefix with experimental_features.msc4133_enabled, as Synapse", async () => {
    const path = (t2: TestServer, token: string, user: string) => t2.call("GET", `/_matrix/client/unstable/uk.tcpip.msc4133/profile/${encodeURIComponent(user)}/displayname`, { token });
    expect((await path(t, alice.access_token, alice.user_id)).status).toBe(404);
    const on = await startTestServer({ config: { experimental_features: { msc4133_enabled: true } } });
    try {
      expect((await on.call("GET", "/_matrix/client/versions")).json.unstable_features["uk.tcpip.msc4133"]).toBe(true);
      const bob = await registerUser(on, "bob");
      const res = await path(on, bob.access_token, bob.user_id);
      expect([res.status, res.json]).toEqual([200, { displayname: "bob" }]);
    } finally {
      await on.close();
    }
  });

  it("follows encryption_enabled_by_default_for_room_type and login_via_existing_session", async () => {
    const other = await startTestServer({ config: { encryption_enabled_by_default_for_room_type: "invite", login_via_existing_session: { enabled: true } } });
    try {
      const f = (await other.call("GET", "/_matrix/client/versions")).json.unstable_features;
      expect([f["io.element.e2ee_forced.public"], f["io.element.e2ee_forced.private"], f["io.element.e2ee_forced.trusted_private"], f["org.matrix.msc3882"]]).toEqual([false, true, true, true]);
    } finally {
      await other.close();
    }
    const all = await startTestServer({ config: { encryption_enabled_by_default_for_room_type: "all" } });
    try {
      const f = (await all.call("GET", "/_matrix/client/versions")).json.unstable_features;
      expect([f["io.element.e2ee_forced.public"], f["io.element.e2ee_forced.private"], f["io.element.e2ee_forced.trusted_private"]]).toEqual([true, true, true]);
    } finally {
      await all.close();
    }
  });
});

describe("routes every client probes, beside a live Synapse", () => {
  let t: TestServer;
  let synapse: SynapseServer;
  let weftToken: string;
  let synapseToken: string;
  beforeAll(async () => {
    [t, synapse] = await Promise.all([startTestServer({}), startSynapse()]);
    weftToken = (await registerUser(t, "prober")).access_token;
    synapseToken = (await synapse.register("prober")).access_token;
  }, 120_000);
  afterAll(async () => {
    await Promise.all([t?.close(), synapse?.close()]);
  });

  it.each(PROBES)("%s %s answers Synapse's status and errcode", async (method, p) => {
    const body = method === "PUT" ? {} : undefined;
    const [ours, theirs] = await Promise.all([t.call(method, p, { token: weftToken, body }), synapse.call(method, p, { token: synapseToken, body })]);
    expect({ status: ours.status, errcode: ours.json?.errcode }).toEqual({ status: theirs.status, errcode: theirs.json?.errcode });
    expect(ours.json?.errcode).toBeTypeOf("string");
  });
});
