// The user directory follows rooms' join rules and history visibility (issue 16), over HTTP on SQLite and
// PostgreSQL: a user only in a private room is found by nobody outside it (not even by themselves, as
// Synapse); the room becoming public (join rule public or world_readable history) shows its members to
// everyone, and they disappear again once neither holds; room-mates always find each other.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import type { Session } from "../helpers/users.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("user directory and room publicity on %s", (backend) => {
  const { t, users: { alice, bob, eve } } = withServer({ backend, users: ["alice", "bob", "eve"] });

  async function finds(searcher: Session, term: string, target: Session): Promise<boolean> {
    const res = await t.call("POST", `${V3}/user_directory/search`, { token: searcher.access_token, body: { search_term: term } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.results.some((r: any) => r.user_id === target.user_id);
  }
  const setState = async (roomId: string, type: string, content: Record<string, unknown>) =>
    expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${type}`, { token: alice.access_token, body: content })).status).toBe(200);

  it("shows and hides a private room's members as its join rule and history visibility change", async () => {
    const name = "Zebedee Quux";
    await t.call("PUT", `${V3}/profile/${enc(bob.user_id)}/displayname`, { token: bob.access_token, body: { displayname: name } });
    const roomId = await createRoom(t, alice, { preset: "private_chat", invite: [bob.user_id] });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });

    expect(await finds(bob, name, bob)).toBe(false);
    expect(await finds(eve, name, bob)).toBe(false);
    expect(await finds(alice, name, bob)).toBe(true); // a room-mate

    await setState(roomId, "m.room.join_rules", { join_rule: "public" });
    expect(await finds(eve, name, bob)).toBe(true);
    expect(await finds(bob, name, bob)).toBe(true);
    await setState(roomId, "m.room.history_visibility", { history_visibility: "world_readable" });
    await setState(roomId, "m.room.join_rules", { join_rule: "invite" });
    // Still public through its world_readable history.
    expect(await finds(eve, name, bob)).toBe(true);
    await setState(roomId, "m.room.history_visibility", { history_visibility: "shared" });
    expect(await finds(eve, name, bob)).toBe(false);
    expect(await finds(bob, name, bob)).toBe(false);
    expect(await finds(alice, name, bob)).toBe(true);

    // Leaving the room ends the room-mate's view too.
    await t.call("POST", `${V3}/rooms/${enc(roomId)}/leave`, { token: bob.access_token, body: {} });
    expect(await finds(alice, name, bob)).toBe(false);
  });
});
