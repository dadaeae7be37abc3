// Application services and devices (spec v1.17) over HTTP, on SQLite, PostgreSQL and a live Synapse with
// the same registration files and the same assertions (differences commented where they are):
// - MSC4326, "Identity assertion": `device_id` masquerades as one of the user's devices (the sender's
//   without `user_id`); a device that is not that user's is 400 M_UNKNOWN_DEVICE; MSC3202's unstable
//   `org.matrix.msc3202.device_id` is ignored (Synapse 1.163 no longer reads it). The request then is that
//   device: it uploads its keys, receives its to-device messages and key counts in /sync.
// - MSC4190, "Server admin style permissions" and "Device management": PUT /devices/{deviceId} by a
//   service creates the device (201) or updates it (200); DELETE /devices/{deviceId}, POST
//   /delete_devices and replacing cross-signing keys need no UIA for a service (for every service, as
//   Synapse since 1.141); a service with `io.element.msc4190` must register with inhibit_login and cannot
//   log in (400 M_APPSERVICE_LOGIN_UNSUPPORTED).
// - Moderation under a service, as Synapse: a suspended user is refused what it is refused on its own
//   token (403 M_USER_SUSPENDED); a locked one is not (the lock applies to access tokens only).
// Bad input gets the spec's error and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type Backend, type JsonResponse } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { writeRegistration } from "../helpers/appservice.ts";
import { startSynapse } from "../helpers/synapse.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { crossSigningKeys, deviceKeysFor, otk } from "../helpers/e2ee.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const MANAGED_AS = "managed-as-token"; // io.element.msc4190: true
const PLAIN_AS = "plain-as-token"; // no flag

// Namespaces without a server part: Synapse's server name (127.0.0.1:PORT) is known only once it runs.
const FILES = [
  writeRegistration({
    id: "managed",
    url: null,
    as_token: MANAGED_AS,
    hs_token: "managed-hs-token",
    sender_localpart: "managedbot",
    rate_limited: false,
    namespaces: { users: [{ exclusive: true, regex: "@asdev_.*" }] },
    "io.element.msc4190": true,
  }),
  writeRegistration({
    id: "plain",
    url: null,
    as_token: PLAIN_AS,
    hs_token: "plain-hs-token",
    sender_localpart: "plainbot",
    rate_limited: false,
    namespaces: { users: [{ exclusive: true, regex: "@asplain_.*" }] },
  }),
];

type TargetName = Backend | "synapse";

interface Target {
  serverName: string;
  call(method: string, path: string, o?: { token?: string; body?: unknown }): Promise<JsonResponse>;
  /** A password user with a device and an access token (a server admin with `admin`). */
  user(localpart: string, admin?: boolean): Promise<Session>;
  close(): Promise<void>;
}

async function startTarget(name: TargetName): Promise<Target> {
  if (name === "synapse") {
    const syn = await startSynapse({ config: { app_service_config_files: FILES } });
    return { serverName: syn.serverName, call: syn.call, user: (lp, admin = false) => syn.register(lp, "password", { admin }), close: () => syn.close() };
  }
  const t = await startTestServer({ backend: name, config: { app_service_config_files: FILES } });
  return {
    serverName: t.config.server_name,
    call: (m, p, o) => t.call(m, p, o),
    async user(lp, admin = false) {
      const u = await registerUser(t, lp);
      if (admin) await t.hs.services.users.setAdmin(u.user_id, true);
      return u;
    },
    close: () => t.close(),
  };
}

const targets: TargetName[] = [...backends(), "synapse"];

describe.each(targets)("application services and devices on %s", (name) => {
  let hs: Target;
  let alice: Session;
  let admin: Session;
  let txn = 0;
  const uid = (localpart: string) => `@${localpart}:${hs.serverName}`;
  /** `path` with the identity assertion's query parameters. */
  const as = (path: string, userId?: string, deviceId?: string) => {
    const q = [userId && `user_id=${enc(userId)}`, deviceId !== undefined && `device_id=${enc(deviceId)}`].filter(Boolean).join("&");
    return q ? `${path}${path.includes("?") ? "&" : "?"}${q}` : path;
  };
  const refused = (res: JsonResponse, status: number, errcode: string) => {
    expect([res.status, res.json?.errcode], JSON.stringify(res.json)).toEqual([status, errcode]);
    expect(typeof res.json.error).toBe("string");
  };
  const whoami = (token: string, userId?: string, deviceId?: string) => hs.call("GET", as(`${V3}/account/whoami`, userId, deviceId), { token });
  const deviceIds = async (token: string, userId?: string) => {
    const res = await hs.call("GET", as(`${V3}/devices`, userId), { token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return (res.json.devices as { device_id: string }[]).map((d) => d.device_id).sort();
  };
  /** Registers a user of the managed service (inhibit_login: it has no device). */
  const managedUser = async (localpart: string) => {
    const res = await hs.call("POST", `${V3}/register`, { token: MANAGED_AS, body: { type: "m.login.application_service", username: localpart, inhibit_login: true } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.user_id as string;
  };
  const createDevice = async (userId: string | undefined, deviceId: string, token = MANAGED_AS) => {
    const res = await hs.call("PUT", as(`${V3}/devices/${enc(deviceId)}`, userId), { token, body: { display_name: deviceId } });
    expect([res.status, res.json], JSON.stringify(res.json)).toEqual([201, {}]);
  };

  beforeAll(async () => {
    hs = await startTarget(name);
    alice = await hs.user("alice");
    admin = await hs.user("boss", true);
  }, 120_000);
  afterAll(async () => {
    await hs?.close();
  });

  describe("registration and login (MSC4190)", () => {
    it("a device-managing service must set inhibit_login and gets no session; one without the flag gets one", async () => {
      const refusedReg = await hs.call("POST", `${V3}/register`, { token: MANAGED_AS, body: { type: "m.login.application_service", username: "asdev_early" } });
      refused(refusedReg, 400, "M_APPSERVICE_LOGIN_UNSUPPORTED");
      const profile = await hs.call("GET", `${V3}/profile/${enc(uid("asdev_early"))}`, { token: alice.access_token });
      // Synapse registers the user before it checks inhibit_login (rest/client/register.py), so the
      // refused registration leaves an account behind; Weft refuses before anything is stored.
      expect(profile.status).toBe(name === "synapse" ? 200 : 404);

      const res = await hs.call("POST", `${V3}/register`, { token: MANAGED_AS, body: { type: "m.login.application_service", username: "asdev_ann", inhibit_login: true } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", `${V3}/register`);
      expect(res.json.user_id).toBe(uid("asdev_ann"));
      expect(res.json).not.toHaveProperty("access_token");
      expect(res.json).not.toHaveProperty("device_id");
      expect(await deviceIds(MANAGED_AS, uid("asdev_ann"))).toEqual([]);

      const plain = await hs.call("POST", `${V3}/register`, { token: PLAIN_AS, body: { type: "m.login.application_service", username: "asplain_pat" } });
      expect(plain.status, JSON.stringify(plain.json)).toBe(200);
      expectMatchesSpec(plain, "POST", `${V3}/register`);
      expect(typeof plain.json.access_token).toBe("string");
      expect((await whoami(plain.json.access_token)).json.device_id).toBe(plain.json.device_id);
    });

    it("a device-managing service cannot log in as its users (400 M_APPSERVICE_LOGIN_UNSUPPORTED); one without the flag can", async () => {
      const body = (user: string) => ({ type: "m.login.application_service", identifier: { type: "m.id.user", user } });
      refused(await hs.call("POST", `${V3}/login`, { token: MANAGED_AS, body: body(uid("asdev_ann")) }), 400, "M_APPSERVICE_LOGIN_UNSUPPORTED");
      expect(await deviceIds(MANAGED_AS, uid("asdev_ann"))).toEqual([]);
      const ok = await hs.call("POST", `${V3}/login`, { token: PLAIN_AS, body: body(uid("asplain_pat")) });
      expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      expectMatchesSpec(ok, "POST", `${V3}/login`);
    });
  });

  describe("PUT /devices/{deviceId} by a service (MSC4190)", () => {
    it("creates the device (201), updates it (200); for its sender too; any service may", async () => {
      const ann = uid("asdev_ann");
      const path = `${V3}/devices/ANNDEV1`;
      const created = await hs.call("PUT", as(path, ann), { token: MANAGED_AS, body: { display_name: "Bridge" } });
      expect([created.status, created.json]).toEqual([201, {}]);
      expectMatchesSpec(created, "PUT", path);
      const updated = await hs.call("PUT", as(path, ann), { token: MANAGED_AS, body: { display_name: "Bridge 2" } });
      expect([updated.status, updated.json]).toEqual([200, {}]);
      expectMatchesSpec(updated, "PUT", path);
      const got = await hs.call("GET", as(path, ann), { token: MANAGED_AS });
      // Synapse answers last_seen_ip and last_seen_ts null for a device never seen (the spec: omitted).
      if (name !== "synapse") expectMatchesSpec(got, "GET", path);
      expect(got.json).toMatchObject({ device_id: "ANNDEV1", display_name: "Bridge 2" });

      await createDevice(undefined, "MANAGEDBOTDEV");
      expect(await deviceIds(MANAGED_AS)).toEqual(["MANAGEDBOTDEV"]);
      // Without io.element.msc4190 too (Synapse since 1.141).
      await createDevice(uid("asplain_pat"), "PATDEV2", PLAIN_AS);
    });

    it("refuses a bad body, and an ordinary user's unknown device, creating nothing", async () => {
      const ann = uid("asdev_ann");
      refused(await hs.call("PUT", as(`${V3}/devices/BADBODY`, ann), { token: MANAGED_AS, body: { display_name: 5 } }), 400, "M_BAD_JSON");
      refused(await hs.call("PUT", as(`${V3}/devices/BADBODY`, ann), { token: MANAGED_AS, body: { display_name: "x".repeat(101) } }), 400, "M_TOO_LARGE");
      expect(await deviceIds(MANAGED_AS, ann)).toEqual(["ANNDEV1"]);

      const mine = await hs.call("PUT", `${V3}/devices/ALICENEW`, { token: alice.access_token, body: { display_name: "New" } });
      refused(mine, 404, "M_NOT_FOUND");
      expect(await deviceIds(alice.access_token)).toEqual([alice.device_id]);
      // user_id means nothing on an ordinary token: still alice's own (unknown) device.
      refused(await hs.call("PUT", as(`${V3}/devices/ALICENEW`, ann), { token: alice.access_token, body: { display_name: "New" } }), 404, "M_NOT_FOUND");
      // An empty body on an unknown device: the spec's 404 here; Synapse answers 200 (it updates nothing).
      const empty = await hs.call("PUT", `${V3}/devices/ALICENEW`, { token: alice.access_token, body: {} });
      expect(empty.status).toBe(name === "synapse" ? 200 : 404);
      expect(await deviceIds(alice.access_token)).toEqual([alice.device_id]);
      expect(await deviceIds(MANAGED_AS, ann)).toEqual(["ANNDEV1"]);
    });

    // Weft only, registered for Weft alone: Synapse stores any string as a device id.
    if (name !== "synapse") it("refuses device ids login would refuse", async () => {
      const ann = uid("asdev_ann");
      refused(await hs.call("PUT", as(`${V3}/devices/${"D".repeat(256)}`, ann), { token: MANAGED_AS, body: {} }), 400, "M_INVALID_PARAM");
      refused(await hs.call("PUT", as(`${V3}/devices/${enc("NUL\u0000DEV")}`, ann), { token: MANAGED_AS, body: {} }), 400, "M_INVALID_PARAM");
      expect(await deviceIds(MANAGED_AS, ann)).toEqual(["ANNDEV1"]);
    });
  });

  describe("device_id (MSC4326)", () => {
    it("acts as that device of the user, or of the sender without user_id", async () => {
      const ann = uid("asdev_ann");
      const res = await whoami(MANAGED_AS, ann, "ANNDEV1");
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "GET", `${V3}/account/whoami`);
      expect(res.json).toEqual({ user_id: ann, is_guest: false, device_id: "ANNDEV1" });
      // The sender's device without user_id. Synapse 1.163 answers 500 here: it looks the device up with
      // the sender as a UserID object, not a string (get_appservice_user, synapse/api/auth/base.py).
      const sender = await whoami(MANAGED_AS, undefined, "MANAGEDBOTDEV");
      if (name === "synapse") expect(sender.status).toBe(500);
      else expect(sender.json).toEqual({ user_id: uid("managedbot"), is_guest: false, device_id: "MANAGEDBOTDEV" });
      // Without device_id: no device.
      expect((await whoami(MANAGED_AS, ann)).json).toEqual({ user_id: ann, is_guest: false });
      // MSC3202's unstable name is not read (as Synapse 1.163): the request has no device.
      const unstable = await hs.call("GET", `${V3}/account/whoami?user_id=${enc(ann)}&org.matrix.msc3202.device_id=ANNDEV1`, { token: MANAGED_AS });
      expect(unstable.json).toEqual({ user_id: ann, is_guest: false });
    });

    it("refuses unknown devices, other users' devices and a user's device without user_id: 400 M_UNKNOWN_DEVICE", async () => {
      const ann = uid("asdev_ann");
      refused(await whoami(MANAGED_AS, ann, "NOSUCHDEVICE"), 400, "M_UNKNOWN_DEVICE");
      refused(await whoami(MANAGED_AS, ann, alice.device_id), 400, "M_UNKNOWN_DEVICE");
      refused(await whoami(MANAGED_AS, ann, "MANAGEDBOTDEV"), 400, "M_UNKNOWN_DEVICE");
      // A user's device named without user_id is looked up as the sender's (Synapse: 500, as above).
      const asSender = await whoami(MANAGED_AS, undefined, "ANNDEV1");
      if (name === "synapse") expect(asSender.status).toBe(500);
      else refused(asSender, 400, "M_UNKNOWN_DEVICE");
      refused(await whoami(MANAGED_AS, ann, ""), 400, "M_UNKNOWN_DEVICE");
      // Refused before acting: a PUT naming an unknown device_id creates nothing.
      refused(await hs.call("PUT", as(`${V3}/devices/SNEAKY`, ann, "NOSUCHDEVICE"), { token: MANAGED_AS, body: {} }), 400, "M_UNKNOWN_DEVICE");
      expect(await deviceIds(MANAGED_AS, ann)).toEqual(["ANNDEV1"]);
      // Another service's user stays out of reach, device or not.
      refused(await whoami(MANAGED_AS, uid("asplain_pat"), "PATDEV2"), 403, "M_FORBIDDEN");
    });

    it("is that device: uploads its keys, receives its to-device messages and key counts in /sync", async () => {
      const ann = uid("asdev_ann");
      const session = { user_id: ann, device_id: "ANNDEV1", access_token: "" };
      const dev = deviceKeysFor(session);
      const noDevice = await hs.call("POST", as(`${V3}/keys/upload`, ann), { token: MANAGED_AS, body: { device_keys: dev.keys } });
      // Synapse: 400 M_UNKNOWN ("you must pass device_id"); Weft: 400 M_INVALID_PARAM. Both 400, nothing stored.
      expect(noDevice.status).toBe(400);
      const upload = await hs.call("POST", as(`${V3}/keys/upload`, ann, "ANNDEV1"), { token: MANAGED_AS, body: { device_keys: dev.keys, one_time_keys: { "signed_curve25519:AAAAAQ": otk(session, dev, 1) } } });
      expect(upload.status, JSON.stringify(upload.json)).toBe(200);
      expectMatchesSpec(upload, "POST", `${V3}/keys/upload`);
      expect(upload.json.one_time_key_counts).toMatchObject({ signed_curve25519: 1 });
      const query = await hs.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [ann]: [] } } });
      expect(Object.keys(query.json.device_keys[ann])).toEqual(["ANNDEV1"]);
      expect(query.json.device_keys[ann].ANNDEV1.keys).toEqual(dev.keys.keys);

      const sent = await hs.call("PUT", `${V3}/sendToDevice/m.test.bridge/t${++txn}`, { token: alice.access_token, body: { messages: { [ann]: { ANNDEV1: { hello: "device" } } } } });
      expect(sent.status, JSON.stringify(sent.json)).toBe(200);
      const sync = await hs.call("GET", as(`${V3}/sync?timeout=0`, ann, "ANNDEV1"), { token: MANAGED_AS });
      expect(sync.status, JSON.stringify(sync.json)).toBe(200);
      expectMatchesSpec(sync, "GET", `${V3}/sync`);
      expect(sync.json.to_device.events).toEqual([{ sender: alice.user_id, type: "m.test.bridge", content: { hello: "device" } }]);
      expect(sync.json.device_one_time_keys_count).toMatchObject({ signed_curve25519: 1 });
      // As the user without a device: none of the device's messages.
      const bare = await hs.call("GET", as(`${V3}/sync?timeout=0`, ann), { token: MANAGED_AS });
      expect(bare.status).toBe(200);
      expect(bare.json.to_device?.events ?? []).toEqual([]);

      // And it sends as that device: alice's device receives the message from it.
      const back = await hs.call("PUT", as(`${V3}/sendToDevice/m.test.bridge/t${++txn}`, ann, "ANNDEV1"), { token: MANAGED_AS, body: { messages: { [alice.user_id]: { [alice.device_id]: { hello: "alice" } } } } });
      expect(back.status, JSON.stringify(back.json)).toBe(200);
      const aliceSync = await hs.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token });
      expect(aliceSync.json.to_device.events).toEqual([{ sender: ann, type: "m.test.bridge", content: { hello: "alice" } }]);
    });
  });

  describe("no user-interactive auth for a service (MSC4190)", () => {
    it("replaces a user's cross-signing keys without UIA; an ordinary user must authenticate", async () => {
      const ann = uid("asdev_ann");
      const path = `${V3}/keys/device_signing/upload`;
      const first = await hs.call("POST", as(path, ann), { token: MANAGED_AS, body: crossSigningKeys(ann).body });
      expect([first.status, first.json], JSON.stringify(first.json)).toEqual([200, {}]);
      const second = crossSigningKeys(ann);
      const replaced = await hs.call("POST", as(path, ann), { token: MANAGED_AS, body: second.body });
      expect([replaced.status, replaced.json], JSON.stringify(replaced.json)).toEqual([200, {}]);
      expectMatchesSpec(replaced, "POST", path);
      const query = await hs.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [ann]: [] } } });
      expect(query.json.master_keys[ann].keys).toEqual(second.body.master_key.keys);

      expect((await hs.call("POST", path, { token: alice.access_token, body: crossSigningKeys(alice.user_id).body })).status).toBe(200);
      const reset = crossSigningKeys(alice.user_id);
      const uia = await hs.call("POST", path, { token: alice.access_token, body: reset.body });
      expect(uia.status, JSON.stringify(uia.json)).toBe(401);
      expect(Array.isArray(uia.json.flows)).toBe(true);
      const aliceKeys = await hs.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [alice.user_id]: [] } } });
      expect(aliceKeys.json.master_keys[alice.user_id].keys).not.toEqual(reset.body.master_key.keys);
    });

    it("an ordinary user gets the UIA challenge for DELETE /devices and POST /delete_devices; nothing is deleted", async () => {
      const other = await hs.call("POST", `${V3}/login`, { body: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "password", device_id: "ALICE2" } });
      expect(other.status, JSON.stringify(other.json)).toBe(200);
      const del = await hs.call("DELETE", `${V3}/devices/ALICE2`, { token: alice.access_token, body: {} });
      expect(del.status).toBe(401);
      expectMatchesSpec(del, "DELETE", `${V3}/devices/ALICE2`);
      const bulk = await hs.call("POST", `${V3}/delete_devices`, { token: alice.access_token, body: { devices: ["ALICE2"] } });
      expect(bulk.status).toBe(401);
      expectMatchesSpec(bulk, "POST", `${V3}/delete_devices`);
      // user_id on an ordinary token changes nothing: still UIA.
      expect((await hs.call("DELETE", as(`${V3}/devices/ALICE2`, uid("asdev_ann")), { token: alice.access_token, body: {} })).status).toBe(401);
      expect(await deviceIds(alice.access_token)).toEqual([alice.device_id, "ALICE2"].sort());
    });

    it("a service deletes its user's devices without UIA, never another user's, and refuses a bad body", async () => {
      const ann = uid("asdev_ann");
      for (const d of ["ANNDEV2", "ANNDEV3", "ANNDEV4"]) await createDevice(ann, d);
      refused(await hs.call("POST", as(`${V3}/delete_devices`, ann), { token: MANAGED_AS, body: { devices: "ANNDEV2" } }), 400, "M_BAD_JSON");
      expect(await deviceIds(MANAGED_AS, ann)).toEqual(["ANNDEV1", "ANNDEV2", "ANNDEV3", "ANNDEV4"]);

      const del = await hs.call("DELETE", as(`${V3}/devices/ANNDEV1`, ann), { token: MANAGED_AS });
      expect([del.status, del.json]).toEqual([200, {}]);
      expectMatchesSpec(del, "DELETE", `${V3}/devices/ANNDEV1`);
      refused(await whoami(MANAGED_AS, ann, "ANNDEV1"), 400, "M_UNKNOWN_DEVICE");
      const query = await hs.call("POST", `${V3}/keys/query`, { token: alice.access_token, body: { device_keys: { [ann]: [] } } });
      expect(query.json.device_keys[ann] ?? {}).toEqual({});

      const bulk = await hs.call("POST", as(`${V3}/delete_devices`, ann), { token: MANAGED_AS, body: { devices: ["ANNDEV2", "ANNDEV3"] } });
      expect([bulk.status, bulk.json]).toEqual([200, {}]);
      expectMatchesSpec(bulk, "POST", `${V3}/delete_devices`);
      expect(await deviceIds(MANAGED_AS, ann)).toEqual(["ANNDEV4"]);

      // Alice's device named as ann's: ann has no such device, alice keeps hers (200, nothing deleted).
      expect((await hs.call("DELETE", as(`${V3}/devices/ALICE2`, ann), { token: MANAGED_AS })).status).toBe(200);
      expect((await hs.call("POST", as(`${V3}/delete_devices`, ann), { token: MANAGED_AS, body: { devices: [alice.device_id] } })).status).toBe(200);
      expect(await deviceIds(alice.access_token)).toEqual([alice.device_id, "ALICE2"].sort());
      expect((await whoami(alice.access_token)).status).toBe(200);

      // A service without io.element.msc4190 too (Synapse since 1.141); its user's token dies with the device.
      const pat = uid("asplain_pat");
      const patDevices = await deviceIds(PLAIN_AS, pat);
      expect(patDevices).toContain("PATDEV2");
      const all = await hs.call("POST", as(`${V3}/delete_devices`, pat), { token: PLAIN_AS, body: { devices: patDevices } });
      expect(all.status, JSON.stringify(all.json)).toBe(200);
      expect(await deviceIds(PLAIN_AS, pat)).toEqual([]);
    });
  });

  describe("moderation under a service", () => {
    let roomId: string;
    const send = (userId: string, body: string) =>
      hs.call("PUT", as(`${V3}/rooms/${enc(roomId)}/send/m.room.message/m${++txn}`, userId), { token: MANAGED_AS, body: { msgtype: "m.text", body } });
    const bodies = async () => {
      const res = await hs.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: alice.access_token });
      expect(res.status).toBe(200);
      return (res.json.chunk as { type: string; content: { body?: string } }[]).filter((e) => e.type === "m.room.message").map((e) => e.content.body);
    };

    beforeAll(async () => {
      const res = await hs.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "public_chat" } });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      roomId = res.json.room_id;
    });

    it("a suspended user is refused sending and joining under the service too (403 M_USER_SUSPENDED); it may leave", async () => {
      const sue = await managedUser("asdev_sue");
      const joiner = await managedUser("asdev_jo");
      expect((await hs.call("POST", as(`${V3}/join/${enc(roomId)}`, sue), { token: MANAGED_AS, body: {} })).status).toBe(200);
      expect((await send(sue, "before")).status).toBe(200);
      for (const who of [sue, joiner]) {
        const res = await hs.call("PUT", `/_synapse/admin/v1/suspend/${enc(who)}`, { token: admin.access_token, body: { suspend: true } });
        expect([res.status, res.json], JSON.stringify(res.json)).toEqual([200, { [`user_${who}_suspended`]: true }]);
      }
      refused(await send(sue, "while suspended"), 403, "M_USER_SUSPENDED");
      refused(await hs.call("POST", as(`${V3}/join/${enc(roomId)}`, joiner), { token: MANAGED_AS, body: {} }), 403, "M_USER_SUSPENDED");
      expect(await bodies()).toEqual(["before"]);
      const members = await hs.call("GET", `${V3}/rooms/${enc(roomId)}/joined_members`, { token: alice.access_token });
      expect(Object.keys(members.json.joined).sort()).toEqual([alice.user_id, sue].sort());
      // Corrective actions stay open: leaving.
      expect((await hs.call("POST", as(`${V3}/rooms/${enc(roomId)}/leave`, sue), { token: MANAGED_AS, body: {} })).status).toBe(200);
      // Unsuspended: at once.
      expect((await hs.call("PUT", `/_synapse/admin/v1/suspend/${enc(joiner)}`, { token: admin.access_token, body: { suspend: false } })).status).toBe(200);
      expect((await hs.call("POST", as(`${V3}/join/${enc(roomId)}`, joiner), { token: MANAGED_AS, body: {} })).status).toBe(200);
    });

    it("a locked user's own token is refused (401 M_USER_LOCKED) but the service still acts as it, as Synapse", async () => {
      const reg = await hs.call("POST", `${V3}/register`, { token: PLAIN_AS, body: { type: "m.login.application_service", username: "asplain_lee" } });
      expect(reg.status, JSON.stringify(reg.json)).toBe(200);
      const lee = reg.json as Session;
      const lock = await hs.call("PUT", `/_synapse/admin/v2/users/${enc(lee.user_id)}`, { token: admin.access_token, body: { locked: true } });
      expect(lock.status, JSON.stringify(lock.json)).toBe(200);
      refused(await whoami(lee.access_token), 401, "M_USER_LOCKED");
      // Synapse applies the lock to access tokens only (synapse/api/auth/internal.py): an as_token request
      // masquerading as the user goes through, and so does it here.
      const masq = await whoami(PLAIN_AS, lee.user_id, lee.device_id);
      expect(masq.json).toEqual({ user_id: lee.user_id, is_guest: false, device_id: lee.device_id });
      expect((await hs.call("POST", as(`${V3}/join/${enc(roomId)}`, lee.user_id), { token: PLAIN_AS, body: {} })).status).toBe(200);
      const sent = await hs.call("PUT", as(`${V3}/rooms/${enc(roomId)}/send/m.room.message/m${++txn}`, lee.user_id), { token: PLAIN_AS, body: { msgtype: "m.text", body: "locked but bridged" } });
      expect(sent.status, JSON.stringify(sent.json)).toBe(200);
      expect(await bodies()).toEqual(["locked but bridged", "before"]);
    });
  });
});
