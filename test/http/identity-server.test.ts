// Identity servers over HTTP (a small spec-following identity server in test/helpers over HTTPS):
// /account/3pid/bind and /unbind (the unbind signed by this server), and invites by third-party identifier —
// a bound address invites its user, an unbound one stores the invite and sends m.room.third_party_invite —
// also from createRoom's invite_3pid; /3pid/onbind by PUT and by POST; the unstable bind path. Both databases.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startIdentityServer, type TestIdentityServer } from "../helpers/identity-server.ts";

describe.each(backends())("identity servers on %s", (backend) => {
  let t: TestServer;
  let is: TestIdentityServer;
  let alice: Session;
  let bob: Session;

  beforeAll(async () => {
    is = await startIdentityServer(() => t.baseUrl);
    t = await startTestServer({
      backend,
      config: {
        // The identity server runs on loopback with a self-signed certificate.
        ip_range_whitelist: ["127.0.0.1"],
        use_insecure_ssl_client_just_for_testing_do_not_use: true,
      },
    });
    alice = await registerUser(t, "alice", "alice-pw");
    bob = await registerUser(t, "bob", "bob-pw");
  });
  afterAll(async () => {
    await t?.close();
    await is?.close();
  });

  const enc = encodeURIComponent;

  it("binds an address on the identity server and unbinds it there, signed", async () => {
    const creds = is.validatedSession("email", "alice@example.org");
    const res = await t.call("POST", "/_matrix/client/v3/account/3pid/bind", { token: alice.access_token, body: { ...creds, id_server: is.name, id_access_token: is.accessToken } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", "/_matrix/client/v3/account/3pid/bind");
    expect(is.bindings.get("email alice@example.org")).toBe(alice.user_id);

    const unbind = await t.call("POST", "/_matrix/client/v3/account/3pid/unbind", { token: alice.access_token, body: { medium: "email", address: "alice@example.org" } });
    expect(unbind.status).toBe(200);
    expectMatchesSpec(unbind, "POST", "/_matrix/client/v3/account/3pid/unbind");
    expect(unbind.json).toEqual({ id_server_unbind_result: "success" });
    expect(is.bindings.has("email alice@example.org")).toBe(false);
    expect(is.unbinds.at(-1)).toEqual({ origin: "weft.test", body: { mxid: alice.user_id, threepid: { medium: "email", address: "alice@example.org" } } });
    // Nothing recorded any more: nothing to unbind.
    const again = await t.call("POST", "/_matrix/client/v3/account/3pid/unbind", { token: alice.access_token, body: { medium: "email", address: "alice@example.org" } });
    expect(again.json).toEqual({ id_server_unbind_result: "no-support" });
  });

  it("passes on the identity server's refusals", async () => {
    const creds = is.validatedSession("email", "x@example.org");
    const badToken = await t.call("POST", "/_matrix/client/v3/account/3pid/bind", { token: alice.access_token, body: { ...creds, id_server: is.name, id_access_token: "wrong" } });
    expect([badToken.status, badToken.json.errcode]).toEqual([400, "M_UNAUTHORIZED"]);
    const badSid = await t.call("POST", "/_matrix/client/v3/account/3pid/bind", { token: alice.access_token, body: { ...creds, sid: "nope", id_server: is.name, id_access_token: is.accessToken } });
    expect([badSid.status, badSid.json.errcode]).toEqual([400, "M_NO_VALID_SESSION"]);
    expect(is.bindings.has("email x@example.org")).toBe(false);
  });

  it("invites the user an address is bound to", async () => {
    const creds = is.validatedSession("email", "bob@example.org");
    expect((await t.call("POST", "/_matrix/client/v3/account/3pid/bind", { token: bob.access_token, body: { ...creds, id_server: is.name, id_access_token: is.accessToken } })).status).toBe(200);
    const room = (await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: {} })).json.room_id;
    const res = await t.call("POST", `/_matrix/client/v3/rooms/${enc(room)}/invite`, {
      token: alice.access_token,
      body: { id_server: is.name, id_access_token: is.accessToken, medium: "email", address: "Bob@Example.org" },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const member = await t.call("GET", `/_matrix/client/v3/rooms/${enc(room)}/state/m.room.member/${enc(bob.user_id)}`, { token: alice.access_token });
    expect(member.json.membership).toBe("invite");
    expect(is.invites).toHaveLength(0);
  });

  it("stores an invite for an unknown address, with the room's type, and sends m.room.third_party_invite", async () => {
    const space = (await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { name: "Garden", creation_content: { type: "m.space" } } })).json.room_id;
    const res = await t.call("POST", `/_matrix/client/v3/rooms/${enc(space)}/invite`, {
      token: alice.access_token,
      body: { id_server: is.name, id_access_token: is.accessToken, medium: "email", address: "carol@example.org" },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(is.invites).toHaveLength(1);
    const stored = is.invites[0]!;
    expect(stored.body).toMatchObject({ medium: "email", address: "carol@example.org", room_id: space, sender: alice.user_id, room_type: "m.space", room_name: "Garden", room_join_rules: "invite" });
    const event = await t.call("GET", `/_matrix/client/v3/rooms/${enc(space)}/state/m.room.third_party_invite/${stored.token}`, { token: alice.access_token });
    expect(event.status).toBe(200);
    expect(event.json).toEqual({
      display_name: "c...@example.org",
      key_validity_url: `https://${is.name}/_matrix/identity/v2/pubkey/isvalid`,
      public_key: is.publicKey,
      public_keys: [{ public_key: is.publicKey, key_validity_url: `https://${is.name}/_matrix/identity/v2/pubkey/isvalid` }],
    });
  });

  it("refuses a non-member, bad input, and identity servers it may not reach", async () => {
    const room = (await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: {} })).json.room_id;
    const body = { id_server: is.name, id_access_token: is.accessToken, medium: "email", address: "dan@example.org" };
    const outsider = await t.call("POST", `/_matrix/client/v3/rooms/${enc(room)}/invite`, { token: bob.access_token, body });
    expect([outsider.status, outsider.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const before = is.invites.length;
    for (const [bad, errcode] of [
      [{ ...body, medium: "pigeon" }, "M_INVALID_PARAM"],
      [{ ...body, address: "not an address" }, "M_INVALID_PARAM"],
      [{ ...body, id_access_token: undefined }, "M_MISSING_PARAM"],
      [{ ...body, id_server: "https://x" }, "M_INVALID_PARAM"],
      [{ ...body, id_server: "10.0.0.1" }, "M_SERVER_NOT_TRUSTED"],
    ] as const) {
      const res = await t.call("POST", `/_matrix/client/v3/rooms/${enc(room)}/invite`, { token: alice.access_token, body: bad });
      expect([res.status, res.json.errcode], JSON.stringify(bad)).toEqual([400, errcode]);
    }
    expect(is.invites.length).toBe(before);
  });
  it("createRoom with invite_3pid invites a bound address's user and stores an invite for an unknown one", async () => {
    const creds = is.validatedSession("email", "frank@example.org");
    const frank = await registerUser(t, "frank", "frank-pw");
    expect((await t.call("POST", "/_matrix/client/v3/account/3pid/bind", { token: frank.access_token, body: { ...creds, id_server: is.name, id_access_token: is.accessToken } })).status).toBe(200);
    const entry = (address: string) => ({ id_server: is.name, id_access_token: is.accessToken, medium: "email", address });
    const res = await t.call("POST", "/_matrix/client/v3/createRoom", {
      token: alice.access_token,
      body: { name: "By mail", invite_3pid: [entry("frank@example.org"), entry("gina@example.org")] },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expectMatchesSpec(res, "POST", "/_matrix/client/v3/createRoom");
    const room = res.json.room_id as string;
    const member = await t.call("GET", `/_matrix/client/v3/rooms/${enc(room)}/state/m.room.member/${enc(frank.user_id)}`, { token: alice.access_token });
    expect(member.json.membership).toBe("invite");
    const stored = is.invites.filter((i) => i.body.room_id === room);
    expect(stored.map((i) => i.body.address)).toEqual(["gina@example.org"]);
    expect(stored[0]!.body).toMatchObject({ sender: alice.user_id, room_name: "By mail" });
    const invite = await t.call("GET", `/_matrix/client/v3/rooms/${enc(room)}/state/m.room.third_party_invite/${stored[0]!.token}`, { token: alice.access_token });
    expect(invite.status).toBe(200);
    expect(invite.json).toMatchObject({ display_name: "g...@example.org", public_key: is.publicKey });
  });

  it("createRoom refuses malformed invite_3pid, and identity servers that cannot answer, before making any room", async () => {
    const joined = async () => (await t.call("GET", "/_matrix/client/v3/joined_rooms", { token: alice.access_token })).json.joined_rooms.length;
    const before = [await joined(), is.invites.length];
    const good = { id_server: is.name, id_access_token: is.accessToken, medium: "email", address: "hal@example.org" };
    for (const [invite_3pid, errcode] of [
      ["not a list", "M_BAD_JSON"],
      [[5], "M_BAD_JSON"],
      [[good, { ...good, id_access_token: undefined }], "M_MISSING_PARAM"],
      [[{ ...good, medium: "pigeon" }], "M_INVALID_PARAM"],
      [[{ ...good, id_server: "https://x" }], "M_INVALID_PARAM"],
      // An identity server this server may not reach, or that refuses the token: asked before the room is made.
      [[good, { ...good, id_server: "10.0.0.1" }], "M_SERVER_NOT_TRUSTED"],
      [[{ ...good, id_access_token: "wrong" }], "M_UNAUTHORIZED"],
    ] as const) {
      const res = await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: { invite_3pid } });
      expect([res.status, res.json.errcode], JSON.stringify(invite_3pid)).toEqual([400, errcode]);
    }
    expect([await joined(), is.invites.length]).toEqual(before);
  });

  it("takes /3pid/onbind by POST, as identity servers (Sydent) send it", async () => {
    const ivy = await registerUser(t, "ivy", "ivy-pw");
    const room = (await t.call("POST", "/_matrix/client/v3/createRoom", { token: alice.access_token, body: {} })).json.room_id;
    const res = await t.call("POST", `/_matrix/client/v3/rooms/${enc(room)}/invite`, {
      token: alice.access_token,
      body: { id_server: is.name, id_access_token: is.accessToken, medium: "email", address: "ivy@example.org" },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const told = await is.bindAndNotify(t.baseUrl, "email", "ivy@example.org", ivy.user_id, "POST");
    expect([told.status, told.json]).toEqual([200, {}]);
    const member = await t.call("GET", `/_matrix/client/v3/rooms/${enc(room)}/state/m.room.member/${enc(ivy.user_id)}`, { token: alice.access_token });
    expect(member.json.membership).toBe("invite");
    expect(member.json.third_party_invite.signed.mxid).toBe(ivy.user_id);
  });

  it("binds and unbinds under the unstable prefix older clients call", async () => {
    const jay = await registerUser(t, "jay", "jay-pw");
    const creds = is.validatedSession("email", "jay@example.org");
    const res = await t.call("POST", "/_matrix/client/unstable/account/3pid/bind", { token: jay.access_token, body: { ...creds, id_server: is.name, id_access_token: is.accessToken } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toEqual({});
    expect(is.bindings.get("email jay@example.org")).toBe(jay.user_id);
    const listed = await t.call("GET", "/_matrix/client/unstable/account/3pid", { token: jay.access_token });
    expect(listed.status).toBe(200);
    expect(Array.isArray(listed.json.threepids)).toBe(true);
    // And unbind there too (sytest binds and unbinds under /unstable).
    const unbind = await t.call("POST", "/_matrix/client/unstable/account/3pid/unbind", { token: jay.access_token, body: { medium: "email", address: "jay@example.org" } });
    expect([unbind.status, unbind.json]).toEqual([200, { id_server_unbind_result: "success" }]);
    expect(is.bindings.has("email jay@example.org")).toBe(false);
  });
});
