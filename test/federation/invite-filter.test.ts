// Invite filtering (MSC4155) on SQLite and PostgreSQL, between two Weft servers on loopback: the
// invitee's `org.matrix.msc4155.invite_permission_config` blocks (403 M_INVITE_BLOCKED, nothing stored) or
// ignores (stored, not shown in /sync) invites by user and server globs — from its own server (/invite,
// the state API, createRoom's invite) and from another (PUT /invite); allowed users pass a blocked server;
// server admins are exempt; without msc4155_enabled the account data means nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { loginUser, registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const CONFIG = "org.matrix.msc4155.invite_permission_config";

describe.each(backends())("invite filtering on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let local: Session;
  let remote: Session;
  let n = 0;

  beforeAll(async () => {
    [a, b] = await Promise.all([
      startFederatedServer({ backend, config: { experimental_features: { msc4155_enabled: true } } }),
      startFederatedServer({ backend }),
    ]);
    [local, remote] = await Promise.all([registerUser(a, "inviter"), registerUser(b, "remote")]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  /** A fresh invitee on A with this invite filter. */
  async function invitee(config: Record<string, unknown> | undefined): Promise<Session> {
    const who = await registerUser(a, `invitee${++n}`);
    if (config) expect((await a.call("PUT", `${V3}/user/${enc(who.user_id)}/account_data/${CONFIG}`, { token: who.access_token, body: config })).status).toBe(200);
    return who;
  }
  const invite = (t: FederatedServer, by: Session, roomId: string, userId: string) => t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: by.access_token, body: { user_id: userId } });
  const invitedRooms = async (who: Session) => Object.keys((await a.call("GET", `${V3}/sync`, { token: who.access_token })).json.rooms?.invite ?? {});
  const membership = async (roomId: string, userId: string) => (await a.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(userId)}`, { token: local.access_token })).status;

  it("blocks a user: /invite, the state API and createRoom are refused with M_INVITE_BLOCKED, nothing stored", async () => {
    const who = await invitee({ blocked_users: [local.user_id] });
    const roomId = await createRoom(a, local);
    const res = await invite(a, local, roomId, who.user_id);
    expect([res.status, res.json.errcode]).toEqual([403, "M_INVITE_BLOCKED"]);
    const state = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.member/${enc(who.user_id)}`, { token: local.access_token, body: { membership: "invite" } });
    expect([state.status, state.json.errcode]).toEqual([403, "M_INVITE_BLOCKED"]);
    expect(await membership(roomId, who.user_id)).toBe(404);
    const rooms = (await a.call("GET", `${V3}/joined_rooms`, { token: local.access_token })).json.joined_rooms.length;
    const created = await a.call("POST", `${V3}/createRoom`, { token: local.access_token, body: { invite: [who.user_id] } });
    expect([created.status, created.json.errcode]).toEqual([403, "M_INVITE_BLOCKED"]);
    expect((await a.call("GET", `${V3}/joined_rooms`, { token: local.access_token })).json.joined_rooms).toHaveLength(rooms);
    expect(await invitedRooms(who)).toEqual([]);
  });

  it("blocks a server by glob over federation: the remote inviter gets the 403; another server's users pass", async () => {
    const who = await invitee({ blocked_servers: ["127.0.0.*"] });
    const remoteRoom = await createRoom(b, remote);
    const res = await invite(b, remote, remoteRoom, who.user_id);
    expect([res.status, res.json.errcode]).toEqual([403, "M_INVITE_BLOCKED"]);
    expect(await invitedRooms(who)).toEqual([]);
    // "127.0.0.*" names both test servers: the local inviter is refused too.
    const localRoom = await createRoom(a, local);
    expect((await invite(a, local, localRoom, who.user_id)).json.errcode).toBe("M_INVITE_BLOCKED");
  });

  it("an allowed user passes a blocked server; a user glob blocks; null fields mean nothing", async () => {
    const who = await invitee({ allowed_users: [remote.user_id], blocked_servers: [b.serverName] });
    const remoteRoom = await createRoom(b, remote);
    expect((await invite(b, remote, remoteRoom, who.user_id)).status).toBe(200);
    await expect.poll(() => invitedRooms(who), { timeout: 10_000 }).toEqual([remoteRoom]);

    const globbed = await invitee({ blocked_users: ["@invit?r:*"] });
    const room = await createRoom(a, local);
    expect((await invite(a, local, room, globbed.user_id)).json.errcode).toBe("M_INVITE_BLOCKED");

    const nulls = await invitee({ allowed_users: null, ignored_users: null, blocked_users: null, allowed_servers: null, ignored_servers: null, blocked_servers: null });
    expect((await invite(a, local, room, nulls.user_id)).status).toBe(200);
    expect(await invitedRooms(nulls)).toEqual([room]);
  });

  it("ignores: the invite is made, but not shown in /sync, from this server or another", async () => {
    const who = await invitee({ ignored_users: [local.user_id], ignored_servers: [b.serverName] });
    const room = await createRoom(a, local);
    expect((await invite(a, local, room, who.user_id)).status).toBe(200);
    expect(await membership(room, who.user_id)).toBe(200);
    const remoteRoom = await createRoom(b, remote);
    expect((await invite(b, remote, remoteRoom, who.user_id)).status).toBe(200);
    expect(await invitedRooms(who)).toEqual([]);
    // Without the rule, both show.
    expect((await a.call("PUT", `${V3}/user/${enc(who.user_id)}/account_data/${CONFIG}`, { token: who.access_token, body: { allowed_users: [] } })).status).toBe(200);
    expect((await invitedRooms(who)).sort()).toEqual([room, remoteRoom].sort());
  });

  it("a server admin may invite whoever blocks them; with msc4155 off the account data means nothing", async () => {
    const who = await invitee({ blocked_users: [local.user_id] });
    await a.hs.services.users.setAdmin(local.user_id, true);
    try {
      const admin = await loginUser(a, "inviter");
      const room = await createRoom(a, admin);
      expect((await invite(a, admin, room, who.user_id)).status).toBe(200);
    } finally {
      await a.hs.services.users.setAdmin(local.user_id, false);
    }
    const bobby = await registerUser(b, `bobby${n}`);
    expect((await b.call("PUT", `${V3}/user/${enc(bobby.user_id)}/account_data/${CONFIG}`, { token: bobby.access_token, body: { blocked_users: ["*"] } })).status).toBe(200);
    const room = await createRoom(b, remote);
    expect((await invite(b, remote, room, bobby.user_id)).status).toBe(200);
  });
});
