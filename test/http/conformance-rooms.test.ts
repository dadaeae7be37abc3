// Rooms as two mature conformance suites check them (issue 34), over HTTP on SQLite and PostgreSQL: an
// upgrade reaches the upgrader's /sync at once — the old room's tombstone, the new room with every event
// a waiting client counts (guest access among them, also for a room that had none) — and the upgrader's
// push rules follow; /messages from the prev_batch of a timeline that holds the whole room serves it with
// an `end`; m.room.canonical_alias refuses what is no alias with M_INVALID_PARAM and an alias elsewhere
// with M_BAD_ALIAS (other servers are asked only for a member who may send it); avatar URLs must be MXC
// URIs and member events show the avatar the profile shows; deactivating with a wrong password answers
// the UIA body with `completed`.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { expectError } from "../helpers/e2ee.ts";
import { registerUser, type Session } from "../helpers/users.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("rooms (conformance) on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });
  let txn = 0;

  async function sync(who: Session, query: string) {
    const res = await t.call("GET", `${V3}/sync?${query}`, { token: who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  }
  const send = async (who: Session, roomId: string, type: string, content: Record<string, unknown>) =>
    expect((await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/${enc(type)}/r${++txn}`, { token: who.access_token, body: content })).status).toBe(200);
  const stateOf = async (roomId: string, type: string, key = "") => (await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/${enc(key)}`, { token: alice.access_token })).json;

  it("an upgrade reaches the upgrader's /sync at once: the old room's tombstone, the new room whole, the push rules", async () => {
    // A public room has no m.room.guest_access: the new room must still carry one.
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    expect((await t.call("PUT", `${V3}/pushrules/global/room/${enc(roomId)}`, { token: alice.access_token, body: { actions: ["dont_notify"] } })).status).toBe(200);
    const before = await sync(alice, "");
    // As a waiting client does: a sync that shows no room, then long polls from its token, counting.
    const quiet = await sync(alice, `filter=${enc(JSON.stringify({ room: { rooms: [] }, account_data: {}, presence: { types: [] } }))}&set_presence=offline`);
    const up = await t.call("POST", `${V3}/rooms/${enc(roomId)}/upgrade`, { token: alice.access_token, body: { new_version: "2" } });
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    expectMatchesSpec(up, "POST", `${V3}/rooms/${enc(roomId)}/upgrade`);
    const newId = up.json.replacement_room as string;
    const wanted = ["m.room.create", "m.room.member", "m.room.guest_access", "m.room.history_visibility", "m.room.join_rules", "m.room.power_levels"];
    const seen = new Set<string>();
    let since = quiet.next_batch;
    const started = Date.now();
    while (!wanted.every((x) => seen.has(x))) {
      expect(Date.now() - started, `still waiting for ${wanted.filter((x) => !seen.has(x))}`).toBeLessThan(10_000);
      const body = await sync(alice, `since=${enc(since)}&timeout=1000&set_presence=offline`);
      since = body.next_batch;
      const room = body.rooms?.join?.[newId];
      for (const e of [...(room?.timeline.events ?? []), ...(room?.state.events ?? [])]) seen.add(e.type);
    }
    expect(await stateOf(newId, "m.room.guest_access")).toEqual({ guest_access: "forbidden" });

    const after = await sync(alice, `since=${enc(before.next_batch)}`);
    const create = after.rooms.join[newId].timeline.events[0];
    const tombstone = after.rooms.join[roomId].timeline.events[0];
    expect(tombstone).toMatchObject({ type: "m.room.tombstone", state_key: "", content: { replacement_room: newId } });
    expect(create).toMatchObject({ type: "m.room.create", content: { room_version: "2", predecessor: { room_id: roomId, event_id: tombstone.event_id } } });
    // The upgrader's rule for the old room now also names the new one, in /sync's push rules too.
    const rules = after.account_data.events.find((e: any) => e.type === "m.push_rules")?.content.global.room ?? [];
    expect(rules.filter((r: any) => [roomId, newId].includes(r.rule_id)).map((r: any) => [r.rule_id, r.actions])).toEqual(
      expect.arrayContaining([[roomId, ["dont_notify"]], [newId, ["dont_notify"]]]),
    );
  });

  it("/messages from the prev_batch of a timeline holding the whole room serves it again, with an end, then stops", async () => {
    const roomId = await createRoom(t, alice);
    await send(alice, roomId, "m.room.test", {});
    await send(alice, roomId, "m.room.message", { msgtype: "m.text", body: "Here is the message content" });
    const timeline = (await sync(alice, "")).rooms.join[roomId].timeline;
    expect(timeline.limited).toBe(false);
    expect(timeline.events[0].type).toBe("m.room.create");
    const path = `${V3}/rooms/${enc(roomId)}/messages`;
    const page = await t.call("GET", `${path}?dir=b&from=${enc(timeline.prev_batch)}`, { token: alice.access_token });
    expect(page.status).toBe(200);
    expectMatchesSpec(page, "GET", path);
    expect(page.json.chunk.map((e: any) => e.event_id)).toEqual(timeline.events.map((e: any) => e.event_id).reverse());
    expect(typeof page.json.end).toBe("string");
    const next = await t.call("GET", `${path}?dir=b&from=${enc(page.json.end)}`, { token: alice.access_token });
    expect(next.json.chunk).toEqual([]);
    expect(next.json).not.toHaveProperty("end");
  });

  it("m.room.canonical_alias: no alias at all is M_INVALID_PARAM, an alias pointing elsewhere M_BAD_ALIAS; nothing stored", async () => {
    const name = `canon${Date.now()}`;
    const roomId = await createRoom(t, alice, { room_alias_name: name });
    await createRoom(t, alice, { room_alias_name: `${name}2` });
    const alias = `#${name}:weft.test`;
    const put = (content: unknown) => t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.canonical_alias/`, { token: alice.access_token, body: content });
    const ok = await put({ alias, alt_aliases: [alias] });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    for (const [content, errcode] of [
      [{ alias: `%${name}:weft.test` }, "M_INVALID_PARAM"],
      [{ alias, alt_aliases: [`%${name}:weft.test`] }, "M_INVALID_PARAM"],
      [{ alias: 7 }, "M_INVALID_PARAM"],
      [{ alias, alt_aliases: [alias, ["#nested:weft.test"]] }, "M_INVALID_PARAM"],
      [{ alias: `#NOT-${name}:weft.test` }, "M_BAD_ALIAS"],
      [{ alias, alt_aliases: [`#NOT-${name}:weft.test`] }, "M_BAD_ALIAS"],
      [{ alias, alt_aliases: [`#${name}2:weft.test`] }, "M_BAD_ALIAS"],
    ] as const) {
      expectError(await put(content), 400, errcode);
    }
    // Someone who may not send the event is refused by the auth rules; no other server is asked first.
    const stranger = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.canonical_alias/`, { token: bob.access_token, body: { alias: "#far:other.example" } });
    expectError(stranger, 403, "M_FORBIDDEN");
    expect(await stateOf(roomId, "m.room.canonical_alias")).toEqual({ alias, alt_aliases: [alias] });
  });

  it("an avatar URL must be an MXC URI; member events carry the avatar the profile shows", async () => {
    const carol = await registerUser(t, `carol${++txn}`);
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: carol.access_token, body: {} });
    const profilePath = `${V3}/profile/${enc(carol.user_id)}/avatar_url`;
    const member = () => stateOf(roomId, "m.room.member", carol.user_id);

    expectError(await t.call("PUT", profilePath, { token: carol.access_token, body: { avatar_url: "LemurLover" } }), 400, "M_INVALID_PARAM");
    expect((await t.call("GET", profilePath)).json).toEqual({});
    expect(await member()).not.toHaveProperty("avatar_url");

    const mxc = "mxc://weft.test/LemurLover";
    expect((await t.call("PUT", profilePath, { token: carol.access_token, body: { avatar_url: mxc } })).status).toBe(200);
    expect((await member()).avatar_url).toBe(mxc);

    // A value stored before avatar URLs were checked is no avatar: the profile shows none, and neither
    // does the member event of a room joined now.
    const s = t.hs.services;
    await s.db.$transaction((tx) => s.users.setProfileField(tx, carol.user_id, "avatarUrl", "LemurLover"));
    s.invalidations.publish({ kind: "profile", userId: carol.user_id });
    expect((await t.call("GET", profilePath)).json).toEqual({});
    const other = await createRoom(t, alice, { preset: "public_chat" });
    expect((await t.call("POST", `${V3}/join/${enc(other)}`, { token: carol.access_token, body: {} })).status).toBe(200);
    const joined = await stateOf(other, "m.room.member", carol.user_id);
    expect(joined.membership).toBe("join");
    expect(joined).not.toHaveProperty("avatar_url");
  });

  it("deactivation with a wrong password answers 401 with the UIA body, completed included, and deactivates nothing", async () => {
    const dave = await registerUser(t, `dave${++txn}`);
    const body = (password: string, session?: string) => ({
      auth: { type: "m.login.password", identifier: { type: "m.id.user", user: dave.user_id }, password, ...(session ? { session } : {}) },
    });
    const wrong = await t.call("POST", `${V3}/account/deactivate`, { token: dave.access_token, body: body("wrong_password") });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ errcode: "M_FORBIDDEN", flows: [{ stages: ["m.login.password"] }], params: {}, completed: [] });
    expect(typeof wrong.json.session).toBe("string");
    expect(typeof wrong.json.error).toBe("string");
    expectMatchesSpec(wrong, "POST", `${V3}/account/deactivate`);
    expect((await t.call("GET", `${V3}/account/whoami`, { token: dave.access_token })).status).toBe(200);
    // A request without auth is the first step: no `completed` yet.
    const fresh = await t.call("POST", `${V3}/account/deactivate`, { token: dave.access_token, body: {} });
    expect(fresh.status).toBe(401);
    expect(fresh.json).not.toHaveProperty("completed");

    const done = await t.call("POST", `${V3}/account/deactivate`, { token: dave.access_token, body: body("password", wrong.json.session) });
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    expect((await t.call("GET", `${V3}/account/whoami`, { token: dave.access_token })).status).toBe(401);
  });
});
