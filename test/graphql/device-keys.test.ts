// GraphQL viewer.devices with end-to-end encryption keys, on each storage backend: a device without
// keys, a device's published keys and signatures, and `crossSigned` turning true only once the user's
// self-signing key signed the device (a real Ed25519 signature, checked by the server).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser } from "../helpers/users.ts";
import { V3, crossSigningKeys, signed, uploadDeviceKeys } from "../helpers/e2ee.ts";
import { gql } from "./client.ts";

const DEVICES = `{ viewer { devices { deviceId keys { algorithms keys signatures } crossSigned } } }`;

describe.each(backends())("GraphQL device keys (%s)", (backend) => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer({ backend }); });
  afterAll(async () => { await t?.close(); });

  it("shows each device's keys and whether the self-signing key signed it", async () => {
    const alice = await registerUser(t, "alice");
    const laptop = await loginUser(t, "alice");
    const dev = await uploadDeviceKeys(t, alice);
    await uploadDeviceKeys(t, laptop);
    const cs = crossSigningKeys(alice.user_id);
    expect((await t.call("POST", `${V3}/keys/device_signing/upload`, { token: alice.access_token, body: cs.body })).status).toBe(200);

    const before = await gql(t, DEVICES, undefined, alice.access_token);
    expect(before.body.errors).toBeUndefined();
    const byId = (r: typeof before) => new Map<string, any>(r.body.data.viewer.devices.map((d: any) => [d.deviceId, d]));
    const mine = byId(before).get(alice.device_id);
    expect(mine.keys).toEqual({ algorithms: (dev.keys as any).algorithms, keys: (dev.keys as any).keys, signatures: (dev.keys as any).signatures });
    expect(mine.crossSigned).toBe(false);

    // The self-signing key's signature makes that device, and only it, cross-signed.
    const body = { [alice.user_id]: { [alice.device_id]: signed(dev.keys, alice.user_id, `ed25519:${cs.ssk.pub}`, cs.ssk) } };
    const up = await t.call("POST", `${V3}/keys/signatures/upload`, { token: alice.access_token, body });
    expect(up.json).toEqual({ failures: {} });
    const after = byId(await gql(t, DEVICES, undefined, alice.access_token));
    expect(after.get(alice.device_id).crossSigned).toBe(true);
    expect(Object.keys(after.get(alice.device_id).keys.signatures[alice.user_id]).sort()).toEqual([`ed25519:${alice.device_id}`, `ed25519:${cs.ssk.pub}`].sort());
    expect(after.get(laptop.device_id).crossSigned).toBe(false);

    // A device that published nothing has no keys.
    const phone = await loginUser(t, "alice");
    expect(byId(await gql(t, DEVICES, undefined, alice.access_token)).get(phone.device_id)).toEqual({ deviceId: phone.device_id, keys: null, crossSigned: false });

    // New cross-signing keys (a reset) make the old signature stale: no longer cross-signed.
    const reset = crossSigningKeys(alice.user_id);
    const first = await t.call("POST", `${V3}/keys/device_signing/upload`, { token: alice.access_token, body: reset.body });
    const done = await t.call("POST", `${V3}/keys/device_signing/upload`, {
      token: alice.access_token,
      body: { ...reset.body, auth: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "password", session: first.json.session } },
    });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    expect(byId(await gql(t, DEVICES, undefined, alice.access_token)).get(alice.device_id).crossSigned).toBe(false);
  });
});
