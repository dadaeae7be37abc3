// Room upgrades as a mature client-server test suite checks them (issue 16), over HTTP on SQLite and
// PostgreSQL: the new room reaches the upgrader's next /sync at once with the state the spec lists
// (guest access among it), and each local member's m.direct entry, tags and push rules follow the room —
// after a manual upgrade too (createRoom naming the predecessor, then a tombstone; beyond Synapse, whose
// issue #19199 this is: Complement's TestPushRuleRoomUpgrade/parallel/manually_upgrading_...).
import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/federation-peer.ts";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("room upgrade conformance on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });

  it("copies the listed state, which the upgrader's next sync delivers whole", async () => {
    const roomId = await createRoom(t, alice); // private_chat: guest access can_join
    const state: Record<string, Record<string, unknown>> = {
      "m.room.topic": { topic: "topic" },
      "m.room.name": { name: "name" },
      "m.room.join_rules": { join_rule: "public" },
      "m.room.guest_access": { guest_access: "forbidden" },
      "m.room.history_visibility": { history_visibility: "joined" },
      "m.room.avatar": { url: "http://something" },
      "m.room.encryption": { algorithm: "m.megolm.v1.aes-sha2" },
      "m.room.server_acl": { allow: ["*"], allow_ip_literals: false, deny: ["*.evil.com", "evil.com"] },
    };
    for (const [type, content] of Object.entries(state)) {
      const res = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${type}`, { token: alice.access_token, body: content });
      expect(res.status, type).toBe(200);
    }
    const since = (await t.call("GET", `${V3}/sync`, { token: alice.access_token })).json.next_batch;
    const up = await t.call("POST", `${V3}/rooms/${enc(roomId)}/upgrade`, { token: alice.access_token, body: { new_version: "2" } });
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const newId = up.json.replacement_room;
    // The next incremental sync has the new room with every copied state event (timeline or state).
    const sync = await t.call("GET", `${V3}/sync?since=${enc(since)}&timeout=10000`, { token: alice.access_token });
    const room = sync.json.rooms.join[newId];
    expect(room).toBeDefined();
    const events = [...room.state.events, ...room.timeline.events];
    for (const type of ["m.room.create", "m.room.member", "m.room.power_levels", ...Object.keys(state)]) {
      const e = events.find((x: any) => x.type === type && x.state_key === (type === "m.room.member" ? alice.user_id : ""));
      expect(e, type).toBeDefined();
      if (state[type]) expect(e.content, type).toEqual(state[type]);
    }
  });

  it("carries each local member's m.direct entry, tags and push rules over to the new room", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    await t.call("PUT", `${V3}/user/${enc(alice.user_id)}/account_data/m.direct`, { token: alice.access_token, body: { [bob.user_id]: [roomId, "!other:weft.test"] } });
    await t.call("PUT", `${V3}/user/${enc(bob.user_id)}/rooms/${enc(roomId)}/tags/m.favourite`, { token: bob.access_token, body: { order: 0.25 } });
    expect((await t.call("PUT", `${V3}/pushrules/global/room/${enc(roomId)}`, { token: bob.access_token, body: { actions: ["notify"] } })).status).toBe(200);
    const cond = { kind: "event_match", key: "room_id", pattern: roomId };
    expect((await t.call("PUT", `${V3}/pushrules/global/override/mine`, { token: bob.access_token, body: { actions: ["dont_notify"], conditions: [cond] } })).status).toBe(200);

    const up = await t.call("POST", `${V3}/rooms/${enc(roomId)}/upgrade`, { token: alice.access_token, body: { new_version: "10" } });
    expect(up.status, JSON.stringify(up.json)).toBe(200);
    const newId = up.json.replacement_room as string;

    const direct = await t.call("GET", `${V3}/user/${enc(alice.user_id)}/account_data/m.direct`, { token: alice.access_token });
    expect(direct.json).toEqual({ [bob.user_id]: [roomId, "!other:weft.test", newId] });
    const tags = await t.call("GET", `${V3}/user/${enc(bob.user_id)}/rooms/${enc(newId)}/tags`, { token: bob.access_token });
    expect(tags.json).toEqual({ tags: { "m.favourite": { order: 0.25 } } });
    const rules = (await t.call("GET", `${V3}/pushrules/`, { token: bob.access_token })).json.global;
    expect(rules.room.find((r: any) => r.rule_id === newId)).toMatchObject({ actions: ["notify"], enabled: true });
    const copied = rules.override.find((r: any) => r.rule_id === newId);
    expect(copied).toMatchObject({ actions: ["dont_notify"], conditions: [{ ...cond, pattern: newId }] });
    // The old room's rules stay.
    expect(rules.room.find((r: any) => r.rule_id === roomId)).toBeDefined();
  });

  it("a manual upgrade (a new room naming the old as predecessor, then the tombstone) carries them over too", async () => {
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    for (const who of [alice, bob]) expect((await t.call("PUT", `${V3}/pushrules/global/room/${enc(roomId)}`, { token: who.access_token, body: { actions: ["dont_notify"] } })).status).toBe(200);
    await t.call("PUT", `${V3}/user/${enc(bob.user_id)}/rooms/${enc(roomId)}/tags/m.favourite`, { token: bob.access_token, body: { order: 0.5 } });
    // A tombstone naming a room that does not name this one as predecessor carries nothing.
    const unrelated = await createRoom(t, alice, { preset: "public_chat", room_version: "11" });
    const newId = await createRoom(t, alice, { preset: "public_chat", room_version: "11", creation_content: { predecessor: { room_id: roomId } } });
    const tombstone = (replacement: string) => t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.tombstone/`, { token: alice.access_token, body: { body: "replaced", replacement_room: replacement } });
    expect((await tombstone(unrelated)).status).toBe(200);
    expect((await tombstone(newId)).status).toBe(200);
    const ruleFor = async (who: typeof alice, room: string) => ((await t.call("GET", `${V3}/pushrules/`, { token: who.access_token })).json.global.room as any[]).find((r) => r.rule_id === room);
    for (const who of [alice, bob]) expect(await eventually(() => ruleFor(who, newId), `${who.user_id}'s rule for the new room`)).toMatchObject({ actions: ["dont_notify"], enabled: true });
    const tags = await t.call("GET", `${V3}/user/${enc(bob.user_id)}/rooms/${enc(newId)}/tags`, { token: bob.access_token });
    expect(tags.json).toEqual({ tags: { "m.favourite": { order: 0.5 } } });
    for (const who of [alice, bob]) expect(await ruleFor(who, unrelated)).toBeUndefined();
    // The upgrader's /sync shows the rule (Complement waits for it there).
    const sync = await t.call("GET", `${V3}/sync`, { token: alice.access_token });
    const pushRules = (sync.json.account_data.events as any[]).find((e) => e.type === "m.push_rules");
    expect((pushRules.content.global.room as any[]).map((r) => r.rule_id)).toEqual(expect.arrayContaining([roomId, newId]));
  });
});
