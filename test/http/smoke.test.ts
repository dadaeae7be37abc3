import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.ts";

describe("smoke", () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });
  it("registers and whoamis", async () => {
    const r1 = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "alice", password: "pw" } });
    expect(r1.status).toBe(401);
    const r2 = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "alice", password: "pw", auth: { type: "m.login.dummy", session: r1.json.session } } });
    expect(r2.status, JSON.stringify(r2.json)).toBe(200);
    const w = await t.call("GET", "/_proto/client/r0/account/whoami", { token: r2.json.access_token });
    expect(w.json).toEqual({ user_id: "@alice:weft.test", is_guest: false, device_id: r2.json.device_id });
    expect((await t.call("PUT", "/_matrix/client/v3/login")).status).toBe(405);
    expect((await t.call("OPTIONS", "/_matrix/client/v3/whatever")).status).toBe(200);
    expect((await t.call("GET", "/_matrix/client/v3/nope")).json.errcode).toBe("M_UNRECOGNIZED");
    expect((await t.call("POST", "/_matrix/client/v3/login", { raw: "{nope" })).json.errcode).toBe("M_NOT_JSON");
    const k = await t.call("GET", "/_matrix/key/v2/server");
    expect(k.json.server_name).toBe("weft.test");
  });
});
