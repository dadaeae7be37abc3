// Device management on the GraphQL face, on SQLite and PostgreSQL: renameDevice as REST reads it;
// deleteDevices answering the typed AuthRequired result (flows, session, completed, a failed stage's
// errcode) until the m.login.password stage is sent as `auth`, changing nothing before; a UIA session
// started on REST finished through GraphQL. Bad input answers errcode and extensions.code.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { gql } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const DELETE = `mutation ($ids: [String!]!, $auth: AuthInput) { deleteDevices(deviceIds: $ids, auth: $auth) {
  __typename ... on DevicesDeleted { deviceIds } ... on AuthRequired { flows { stages } params session completed errcode error } } }`;

describe.each(backends())("GraphQL device management on %s", (backend) => {
  const { t, users: { alice, alice2, alice3, alice4 } } = withServer({ backend, users: ["alice"], logins: { alice2: "alice", alice3: "alice", alice4: "alice" } });

  const ok = async (query: string, variables: Record<string, unknown>) => {
    const res = await gql(t, query, variables, alice.access_token);
    expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
    return res.body.data;
  };
  const restDevice = (id: string) => t.call("GET", `${V3}/devices/${enc(id)}`, { token: alice.access_token });

  it("renameDevice: REST reads the new name; an unknown device or a too long name is refused", async () => {
    const renamed = await ok(`mutation ($d: String!) { renameDevice(deviceId: $d, displayName: "Work laptop") { deviceId displayName } }`, { d: alice2.device_id });
    expect(renamed.renameDevice).toEqual({ deviceId: alice2.device_id, displayName: "Work laptop" });
    expect((await restDevice(alice2.device_id)).json.display_name).toBe("Work laptop");
    const viewer = await ok(`{ viewer { devices { deviceId displayName } } }`, {});
    expect(viewer.viewer.devices).toContainEqual({ deviceId: alice2.device_id, displayName: "Work laptop" });

    const unknown = await gql(t, `mutation { renameDevice(deviceId: "NOSUCHDEVICE", displayName: "x") { deviceId } }`, {}, alice.access_token);
    expect(unknown.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_NOT_FOUND", code: "NOT_FOUND" });
    const long = await gql(t, `mutation ($d: String!, $n: String!) { renameDevice(deviceId: $d, displayName: $n) { deviceId } }`, { d: alice2.device_id, n: "x".repeat(1000) }, alice.access_token);
    expect(long.body.errors?.[0]?.extensions).toMatchObject({ errcode: "M_TOO_LARGE", code: "TOO_LARGE" });
    expect((await restDevice(alice2.device_id)).json.display_name).toBe("Work laptop");
  });

  it("deleteDevices: AuthRequired, a wrong password, then the password stage deletes", async () => {
    const first = (await ok(DELETE, { ids: [alice2.device_id] })).deleteDevices;
    expect(first.__typename).toBe("AuthRequired");
    expect(first.flows).toContainEqual({ stages: ["m.login.password"] });
    expect(first.session).toMatch(/./);
    expect(first.completed).toEqual([]);
    expect(first.errcode).toBeNull();
    expect((await restDevice(alice2.device_id)).status).toBe(200);

    const identifier = { type: "m.id.user", user: alice.user_id };
    const wrong = (await ok(DELETE, { ids: [alice2.device_id], auth: { type: "m.login.password", session: first.session, identifier, password: "wrong" } })).deleteDevices;
    expect(wrong).toMatchObject({ __typename: "AuthRequired", session: first.session, errcode: "M_FORBIDDEN" });
    expect((await restDevice(alice2.device_id)).status).toBe(200);

    const done = (await ok(DELETE, { ids: [alice2.device_id], auth: { type: "m.login.password", session: first.session, identifier, password: "password" } })).deleteDevices;
    expect(done).toEqual({ __typename: "DevicesDeleted", deviceIds: [alice2.device_id] });
    expect((await restDevice(alice2.device_id)).status).toBe(404);
    expect((await t.call("GET", `${V3}/account/whoami`, { token: alice2.access_token })).status).toBe(401);
  });

  it("deleteDevices finishes a UIA session REST started, for several devices", async () => {
    const started = await t.call("POST", `${V3}/delete_devices`, { token: alice.access_token, body: { devices: [alice3.device_id, alice4.device_id] } });
    expect(started.status).toBe(401);
    const auth = { type: "m.login.password", session: started.json.session, identifier: { type: "m.id.user", user: alice.user_id }, password: "password" };
    const done = (await ok(DELETE, { ids: [alice3.device_id, alice4.device_id], auth })).deleteDevices;
    expect(done).toEqual({ __typename: "DevicesDeleted", deviceIds: [alice3.device_id, alice4.device_id] });
    expect((await restDevice(alice3.device_id)).status).toBe(404);
    expect((await restDevice(alice4.device_id)).status).toBe(404);
  });
});
