// Third-party invites across two Weft servers (SQLite and PostgreSQL), with the test identity server:
// alice of A invites an e-mail address; when bob of B binds it, the identity server calls B's
// PUT /3pid/onbind; B is not in the room, so it asks A (PUT /exchange_third_party_invite/{roomId}); A
// makes the invite, signed by the identity server, and bob joins. A bound user of A is invited by A
// itself. Forged or foreign exchanges and bad onbind bodies are refused, and nothing is made of them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, signedBy, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { startIdentityServer, type TestIdentityServer } from "../helpers/identity-server.ts";
import { eventually } from "../helpers/federation-peer.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("third-party invites across Weft servers on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let is: TestIdentityServer;
  let alice: Session;
  let bob: Session;
  const isConfig = { use_insecure_ssl_client_just_for_testing_do_not_use: true };

  beforeAll(async () => {
    is = await startIdentityServer(() => a.baseUrl);
    [a, b] = await Promise.all([startFederatedServer({ backend, config: isConfig }), startFederatedServer({ backend, config: isConfig })]);
    [alice, bob] = await Promise.all([registerUser(a, "alice"), registerUser(b, "bob")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), is?.close()]);
  });

  const invite3pid = async (roomId: string, address: string) => {
    const res = await a.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, {
      token: alice.access_token,
      body: { id_server: is.name, id_access_token: is.accessToken, medium: "email", address },
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return is.invites.find((i) => i.body.address === address && i.body.room_id === roomId)!;
  };
  const memberOn = async (t: FederatedServer, who: Session, roomId: string, userId: string) =>
    (await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: who.access_token })).json;

  it("a remote user binding the address is invited through exchange_third_party_invite, and joins", async () => {
    const roomId = await createRoom(a, alice, { preset: "private_chat", name: "Invite by mail" });
    const stored = await invite3pid(roomId, "bob@example.org");
    expect(stored).toBeDefined();

    const told = await is.bindAndNotify(b.baseUrl, "email", "bob@example.org", bob.user_id);
    expect(told.status, JSON.stringify(told.json)).toBe(200);
    expect(told.json).toEqual({});

    const member = await eventually(async () => { const m = await memberOn(a, alice, roomId, bob.user_id); return m.membership === "invite" && m; }, "the invite on A");
    expect(member.third_party_invite.signed.token).toBe(stored.token);
    expect(member.third_party_invite.signed.mxid).toBe(bob.user_id);
    expect(member.third_party_invite.display_name).toBe("b...@example.org");
    // B holds the invite (A asked B to countersign it): bob sees it and joins.
    await eventually(async () => (await b.call("GET", `${V3}/sync`, { token: bob.access_token })).json.rooms?.invite?.[roomId], "the invite in bob's sync");
    const joined = await b.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    await eventually(async () => (await memberOn(a, alice, roomId, bob.user_id)).membership === "join", "bob's join on A");
  });

  it("a user of the room's own server is invited directly at onbind", async () => {
    const carol = await registerUser(a, "carol");
    const roomId = await createRoom(a, alice, { preset: "private_chat" });
    await invite3pid(roomId, "carol@example.org");
    const told = await is.bindAndNotify(a.baseUrl, "email", "carol@example.org", carol.user_id);
    expect(told.status).toBe(200);
    expect((await memberOn(a, alice, roomId, carol.user_id)).membership).toBe("invite");
    expect((await a.call("POST", `${V3}/join/${enc(roomId)}`, { token: carol.access_token, body: {} })).status).toBe(200);
  });

  it("refuses exchanges it must not make, and bad onbind bodies", async () => {
    const roomId = await createRoom(a, alice, { preset: "private_chat" });
    const stored = await invite3pid(roomId, "dave@example.org");
    const daveOfB = `@dave:${b.serverName}`;
    const exchange = (origin: string, body: Record<string, unknown>, signer = b) =>
      federationCall(a.baseUrl, {
        method: "PUT",
        path: `/_matrix/federation/v1/exchange_third_party_invite/${enc(roomId)}`,
        body,
        authorization: signedBy(origin, signer.hs.services.signingKeys[0]!, a.serverName, { method: "PUT", path: `/_matrix/federation/v1/exchange_third_party_invite/${enc(roomId)}`, body }),
      });
    const event = (mxid: string, signed: Record<string, unknown>) => ({ type: "m.room.member", room_id: roomId, sender: alice.user_id, state_key: mxid, content: { membership: "invite", third_party_invite: { signed } } });

    // A signature the identity server never made: the auth rules refuse it.
    const forged = await exchange(b.serverName, event(daveOfB, { mxid: daveOfB, token: stored.token, signatures: { [is.name]: { "ed25519:0": "A".repeat(86) } } }));
    expect(forged.status).toBe(403);
    // B may not exchange for a user of another server.
    const foreign = await exchange(b.serverName, event(`@eve:elsewhere.test`, { mxid: "@eve:elsewhere.test", token: stored.token, signatures: {} }));
    expect([foreign.status, foreign.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    // Unsigned: 401.
    const unsigned = await federationCall(a.baseUrl, { method: "PUT", path: `/_matrix/federation/v1/exchange_third_party_invite/${enc(roomId)}`, body: event(daveOfB, { mxid: daveOfB, token: stored.token, signatures: {} }) });
    expect(unsigned.status).toBe(401);
    // Malformed.
    const wrongRoom = await exchange(b.serverName, { ...event(daveOfB, { mxid: daveOfB, token: stored.token, signatures: {} }), room_id: "!other:x" });
    expect([wrongRoom.status, wrongRoom.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    expect((await memberOn(a, alice, roomId, daveOfB)).membership).toBeUndefined();

    const onbind = (body: unknown) => federationCall(b.baseUrl, { method: "PUT", path: "/_matrix/federation/v1/3pid/onbind", body });
    for (const [body, errcode] of [
      [{ address: "x@example.org", mxid: bob.user_id }, "M_MISSING_PARAM"],
      [{ medium: "email", address: "x@example.org", mxid: 5 }, "M_BAD_JSON"],
      [{ medium: "email", address: "x@example.org", mxid: bob.user_id, invites: "no" }, "M_BAD_JSON"],
      [{ medium: "email", address: "x@example.org", mxid: bob.user_id, invites: [{ room_id: roomId, sender: alice.user_id, mxid: bob.user_id }] }, "M_BAD_JSON"],
      [{ medium: "email", address: "x@example.org", mxid: `@z:${a.serverName}`, invites: [] }, "M_FORBIDDEN"],
    ] as const) {
      const r = await onbind(body);
      expect([r.status, r.json.errcode], JSON.stringify(body)).toEqual([errcode === "M_FORBIDDEN" ? 403 : 400, errcode]);
    }
  });
});
