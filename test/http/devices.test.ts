// Device management over HTTP: list, read, rename, delete behind UIA (single and bulk), guests and
// application services — on SQLite and PostgreSQL, under r0 and v3 and both brands.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeAppServiceFile } from "../helpers/appservice.ts";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const asFile = writeAppServiceFile({ id: "devbridge", asToken: "devices-as-token", hsToken: "devices-hs-token", senderLocalpart: "devbot", userRegex: "@devbridge_.*:weft\\.test" });

const V3 = "/_matrix/client/v3";
const passwordAuth = (user: string, password: string, session?: string) => ({
  type: "m.login.password",
  identifier: { type: "m.id.user", user },
  password,
  ...(session ? { session } : {}),
});

describe.each(backends())("devices on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { app_service_config_files: [asFile] } });
    alice = await registerUser(t, "alice", "alice-pw");
    bob = await registerUser(t, "bob", "bob-pw");
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Runs the two-step UIA dance for a delete request and returns the final response. */
  async function withPassword(method: string, p: string, token: string, body: Record<string, unknown>, user = "alice", pw = "alice-pw") {
    const first = await t.call(method, p, { token, body });
    expect(first.status, JSON.stringify(first.json)).toBe(401);
    return t.call(method, p, { token, body: { ...body, auth: passwordAuth(user, pw, first.json.session) } });
  }

  it("lists the requester's devices with unset fields omitted and unflushed last-seen data merged", async () => {
    const phone = await loginUser(t, "alice", "alice-pw", { initial_device_display_name: "Phone" });
    const res = await t.call("GET", `${V3}/devices`, { token: alice.access_token });
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", `${V3}/devices`);
    const byId = new Map<string, Record<string, unknown>>(res.json.devices.map((d: { device_id: string }) => [d.device_id, d]));
    expect([...byId.keys()].sort()).toEqual([alice.device_id, phone.device_id].sort());
    // The device that made this request: seen just now from loopback (still only in memory).
    const self = byId.get(alice.device_id)!;
    expect(self.last_seen_ip).toBe("127.0.0.1");
    expect(typeof self.last_seen_ts).toBe("number");
    expect(Date.now() - (self.last_seen_ts as number)).toBeLessThan(60_000);
    expect("display_name" in self).toBe(false);
    // The phone was never used after login: only its id and name, nothing null.
    expect(byId.get(phone.device_id)).toEqual({ device_id: phone.device_id, display_name: "Phone" });
    // Bob's devices are not listed.
    expect(byId.has(bob.device_id)).toBe(false);

    // After the activity is flushed the stored values come back the same.
    await t.hs.services.deviceActivity.flush();
    const again = await t.call("GET", `/_proto/client/r0/devices`, { token: alice.access_token });
    expect(again.status).toBe(200);
    const stored = again.json.devices.find((d: { device_id: string }) => d.device_id === alice.device_id);
    expect(stored.last_seen_ip).toBe("127.0.0.1");
    expect(stored.last_seen_ts).toBeGreaterThanOrEqual(self.last_seen_ts as number);
  });

  it("needs a token", async () => {
    const res = await t.call("GET", `${V3}/devices`);
    expect([res.status, res.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    const bad = await t.call("GET", `${V3}/devices`, { token: "nope" });
    expect([bad.status, bad.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
  });

  it("gets one device; another user's or an unknown device is M_NOT_FOUND", async () => {
    for (const p of [`${V3}/devices/${alice.device_id}`, `/_matrix/client/r0/devices/${alice.device_id}`, `/_proto/client/v3/devices/${alice.device_id}`]) {
      const res = await t.call("GET", p, { token: alice.access_token });
      expect(res.status, p).toBe(200);
      expectMatchesSpec(res, "GET", p);
      expect(res.json.device_id).toBe(alice.device_id);
      expect(res.json.last_seen_ip).toBe("127.0.0.1");
    }
    const other = await t.call("GET", `${V3}/devices/${bob.device_id}`, { token: alice.access_token });
    expect([other.status, other.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const unknown = await t.call("GET", `${V3}/devices/NOSUCHDEVICE`, { token: alice.access_token });
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("renames a device and validates the name like Synapse", async () => {
    const p = `${V3}/devices/${alice.device_id}`;
    const ok = await t.call("PUT", p, { token: alice.access_token, body: { display_name: "Laptop" } });
    expect([ok.status, ok.json]).toEqual([200, {}]);
    expectMatchesSpec(ok, "PUT", p);
    expect((await t.call("GET", p, { token: alice.access_token })).json.display_name).toBe("Laptop");

    const r0 = await t.call("PUT", `/_matrix/client/r0/devices/${alice.device_id}`, { token: alice.access_token, body: { display_name: "Ö".repeat(100) } });
    expect(r0.status).toBe(200);
    expect((await t.call("GET", p, { token: alice.access_token })).json.display_name).toBe("Ö".repeat(100));

    // Without display_name (or with null) nothing changes.
    expect((await t.call("PUT", p, { token: alice.access_token, body: {} })).status).toBe(200);
    expect((await t.call("PUT", p, { token: alice.access_token, body: { display_name: null } })).status).toBe(200);
    expect((await t.call("GET", p, { token: alice.access_token })).json.display_name).toBe("Ö".repeat(100));

    const long = await t.call("PUT", p, { token: alice.access_token, body: { display_name: "x".repeat(101) } });
    expect([long.status, long.json.errcode]).toEqual([400, "M_TOO_LARGE"]);
    const wrongType = await t.call("PUT", p, { token: alice.access_token, body: { display_name: 7 } });
    expect([wrongType.status, wrongType.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    const noBody = await t.call("PUT", p, { token: alice.access_token });
    expect([noBody.status, noBody.json.errcode]).toEqual([400, "M_NOT_JSON"]);
    const unknown = await t.call("PUT", `${V3}/devices/NOSUCHDEVICE`, { token: alice.access_token, body: { display_name: "x" } });
    expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const unknownNoName = await t.call("PUT", `${V3}/devices/NOSUCHDEVICE`, { token: alice.access_token, body: {} });
    expect([unknownNoName.status, unknownNoName.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const others = await t.call("PUT", `${V3}/devices/${bob.device_id}`, { token: alice.access_token, body: { display_name: "mine now" } });
    expect([others.status, others.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    expect((await t.call("GET", `${V3}/devices/${bob.device_id}`, { token: bob.access_token })).json.display_name).toBeUndefined();
  });

  it("deletes a device behind user-interactive auth and kills its token", async () => {
    const doomed = await loginUser(t, "alice", "alice-pw");
    const p = `${V3}/devices/${doomed.device_id}`;

    // No body at all (old clients): the 401 lists the flows and opens a session.
    const first = await t.call("DELETE", p, { token: alice.access_token });
    expect(first.status).toBe(401);
    expectMatchesSpec(first, "DELETE", p);
    expect(first.json.flows).toEqual([{ stages: ["m.login.password"] }]);
    expect(typeof first.json.session).toBe("string");
    expect(first.json.params).toEqual({});

    const wrong = await t.call("DELETE", p, { token: alice.access_token, body: { auth: passwordAuth("alice", "not-it", first.json.session) } });
    expect([wrong.status, wrong.json.errcode]).toEqual([401, "M_FORBIDDEN"]);
    expect(wrong.json.flows).toEqual([{ stages: ["m.login.password"] }]);
    expect(wrong.json.session).toBe(first.json.session);

    // Someone else's password does not re-authenticate alice: refused outright (403, as Synapse).
    const bobs = await t.call("DELETE", p, { token: alice.access_token, body: { auth: passwordAuth("bob", "bob-pw", first.json.session) } });
    expect([bobs.status, bobs.json.errcode]).toEqual([403, "M_FORBIDDEN"]);

    expect((await t.call("GET", `${V3}/account/whoami`, { token: doomed.access_token })).status).toBe(200);
    const ok = await t.call("DELETE", p, { token: alice.access_token, body: { auth: passwordAuth("alice", "alice-pw", first.json.session) } });
    expect([ok.status, ok.json]).toEqual([200, {}]);
    expectMatchesSpec(ok, "DELETE", p);

    const dead = await t.call("GET", `${V3}/account/whoami`, { token: doomed.access_token });
    expect([dead.status, dead.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    const gone = await t.call("GET", p, { token: alice.access_token });
    expect([gone.status, gone.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const list = await t.call("GET", `${V3}/devices`, { token: alice.access_token });
    expect(list.json.devices.map((d: { device_id: string }) => d.device_id)).not.toContain(doomed.device_id);

    // The session served one request: reusing it fails.
    const other = await loginUser(t, "alice", "alice-pw");
    const reuse = await t.call("DELETE", `${V3}/devices/${other.device_id}`, { token: alice.access_token, body: { auth: passwordAuth("alice", "alice-pw", first.json.session) } });
    expect(reuse.status).toBe(400);
    expect(reuse.json.errcode).toBe("M_UNKNOWN");
    expect((await t.call("GET", `${V3}/account/whoami`, { token: other.access_token })).status).toBe(200);
  });

  it("deletes through r0 and the _proto brand; an unknown device id is a successful no-op", async () => {
    const doomed = await loginUser(t, "alice", "alice-pw");
    const res = await withPassword("DELETE", `/_proto/client/r0/devices/${doomed.device_id}`, alice.access_token, {});
    expect([res.status, res.json]).toEqual([200, {}]);
    expect((await t.call("GET", `${V3}/account/whoami`, { token: doomed.access_token })).json.errcode).toBe("M_UNKNOWN_TOKEN");

    const unknown = await withPassword("DELETE", `/_matrix/client/r0/devices/NOSUCHDEVICE`, alice.access_token, {});
    expect([unknown.status, unknown.json]).toEqual([200, {}]);
    // Bob's device is not alice's to delete: nothing happens to it.
    const bobsDevice = await withPassword("DELETE", `${V3}/devices/${bob.device_id}`, alice.access_token, {});
    expect(bobsDevice.status).toBe(200);
    expect((await t.call("GET", `${V3}/account/whoami`, { token: bob.access_token })).status).toBe(200);
  });

  it("deletes several devices with POST /delete_devices", async () => {
    const d1 = await loginUser(t, "alice", "alice-pw");
    const d2 = await loginUser(t, "alice", "alice-pw");
    const keep = await loginUser(t, "alice", "alice-pw");
    const p = `${V3}/delete_devices`;
    const body = { devices: [d1.device_id, d2.device_id, "NOSUCHDEVICE"] };

    const first = await t.call("POST", p, { token: alice.access_token, body });
    expect(first.status).toBe(401);
    expectMatchesSpec(first, "POST", p);
    expect(first.json.flows).toEqual([{ stages: ["m.login.password"] }]);
    const wrong = await t.call("POST", p, { token: alice.access_token, body: { ...body, auth: passwordAuth("alice", "nope", first.json.session) } });
    expect([wrong.status, wrong.json.errcode]).toEqual([401, "M_FORBIDDEN"]);
    const ok = await t.call("POST", p, { token: alice.access_token, body: { ...body, auth: passwordAuth("alice", "alice-pw", first.json.session) } });
    expect([ok.status, ok.json]).toEqual([200, {}]);
    expectMatchesSpec(ok, "POST", p);
    for (const d of [d1, d2]) expect((await t.call("GET", `${V3}/account/whoami`, { token: d.access_token })).json.errcode).toBe("M_UNKNOWN_TOKEN");
    expect((await t.call("GET", `${V3}/account/whoami`, { token: keep.access_token })).status).toBe(200);

    const reuse = await t.call("POST", p, { token: alice.access_token, body: { devices: [keep.device_id], auth: passwordAuth("alice", "alice-pw", first.json.session) } });
    expect([reuse.status, reuse.json.errcode]).toEqual([400, "M_UNKNOWN"]);

    const r0 = await withPassword("POST", "/_proto/client/r0/delete_devices", alice.access_token, { devices: [keep.device_id] });
    expect(r0.status).toBe(200);
    expect((await t.call("GET", `${V3}/account/whoami`, { token: keep.access_token })).json.errcode).toBe("M_UNKNOWN_TOKEN");
  });

  it("refuses a device list that is not a list of strings", async () => {
    for (const body of [{}, { devices: "ABC" }, { devices: [1, 2] }, { devices: null }, { devices: { a: 1 } }]) {
      const res = await t.call("POST", `${V3}/delete_devices`, { token: alice.access_token, body });
      expect([res.status, res.json.errcode], JSON.stringify(body)).toEqual([400, "M_BAD_JSON"]);
    }
    const noBody = await t.call("POST", `${V3}/delete_devices`, { token: alice.access_token });
    expect([noBody.status, noBody.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    const badAuth = await t.call("POST", `${V3}/delete_devices`, { token: alice.access_token, body: { devices: [], auth: "x" } });
    expect([badAuth.status, badAuth.json.errcode]).toEqual([400, "M_BAD_JSON"]);
  });

  it("lets guests read and rename their devices but not delete them", async () => {
    const reg = await t.call("POST", `${V3}/register?kind=guest`, { body: {} });
    expect(reg.status).toBe(200);
    const guest = reg.json as Session;
    const list = await t.call("GET", `${V3}/devices`, { token: guest.access_token });
    expect(list.status).toBe(200);
    expect(list.json.devices.map((d: { device_id: string }) => d.device_id)).toEqual([guest.device_id]);
    const one = await t.call("GET", `${V3}/devices/${guest.device_id}`, { token: guest.access_token });
    expect(one.status).toBe(200);
    const rename = await t.call("PUT", `${V3}/devices/${guest.device_id}`, { token: guest.access_token, body: { display_name: "Kiosk" } });
    expect(rename.status).toBe(200);
    const del = await t.call("DELETE", `${V3}/devices/${guest.device_id}`, { token: guest.access_token });
    expect([del.status, del.json.errcode]).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
    const bulk = await t.call("POST", `${V3}/delete_devices`, { token: guest.access_token, body: { devices: [guest.device_id] } });
    expect([bulk.status, bulk.json.errcode]).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
  });

  it("lets application services create devices with PUT and delete without UIA", async () => {
    const reg = await t.call("POST", `${V3}/register`, { token: "devices-as-token", body: { type: "m.login.application_service", username: "devbridge_carol", inhibit_login: true } });
    expect(reg.status, JSON.stringify(reg.json)).toBe(200);
    const as = (p: string) => `${p}?user_id=${encodeURIComponent("@devbridge_carol:weft.test")}`;
    const created = await t.call("PUT", as(`${V3}/devices/BRIDGEDEV`), { token: "devices-as-token", body: { display_name: "Bridge" } });
    expect([created.status, created.json]).toEqual([201, {}]);
    const updated = await t.call("PUT", as(`${V3}/devices/BRIDGEDEV`), { token: "devices-as-token", body: { display_name: "Bridge 2" } });
    expect(updated.status).toBe(200);
    const list = await t.call("GET", as(`${V3}/devices`), { token: "devices-as-token" });
    expect(list.json.devices).toEqual([{ device_id: "BRIDGEDEV", display_name: "Bridge 2" }]);
    const del = await t.call("DELETE", as(`${V3}/devices/BRIDGEDEV`), { token: "devices-as-token" });
    expect([del.status, del.json]).toEqual([200, {}]);
    expect((await t.call("GET", as(`${V3}/devices`), { token: "devices-as-token" })).json.devices).toEqual([]);
  });
});
