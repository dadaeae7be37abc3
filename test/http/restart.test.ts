// What must survive a restart: access and refresh tokens, devices, and UIA sessions in progress
// (sessions live in the database, so another worker or a restarted server can finish them).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { loginUser, registerUser } from "../helpers/users.ts";

describe.each(backends())("restart on %s", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("keeps tokens and finishes a UIA session started before the restart", async () => {
    const s = await registerUser(t, "phoenix", "before");
    const refreshing = await loginUser(t, "phoenix", "before", { refresh_token: true });
    const regStart = await t.call("POST", "/_matrix/client/v3/register", { body: { username: "latecomer", password: "pw" } });
    const pwStart = await t.call("POST", "/_matrix/client/v3/account/password", { token: s.access_token, body: { new_password: "after", logout_devices: false } });
    expect(pwStart.status).toBe(401);

    await t.restart();

    expect((await t.call("GET", "/_matrix/client/v3/account/whoami", { token: s.access_token })).json.device_id).toBe(s.device_id);
    const refreshed = await t.call("POST", "/_matrix/client/v3/refresh", { body: { refresh_token: refreshing.refresh_token } });
    expect(refreshed.status).toBe(200);
    const pwDone = await t.call("POST", "/_matrix/client/v3/account/password", {
      token: s.access_token,
      body: { new_password: "after", logout_devices: false, auth: { type: "m.login.password", user: "phoenix", password: "before", session: pwStart.json.session } },
    });
    expect(pwDone.status).toBe(200);
    await loginUser(t, "phoenix", "after");
    const regDone = await t.call("POST", "/_matrix/client/v3/register", { body: { auth: { type: "m.login.dummy", session: regStart.json.session } } });
    expect(regDone.status).toBe(200);
    expect(regDone.json.user_id).toBe("@latecomer:weft.test");
    await loginUser(t, "latecomer", "pw");
  });
});
