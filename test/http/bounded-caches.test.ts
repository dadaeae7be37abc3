// In-memory caches are bounded (issue 11, finding 7), and an eviction never costs correctness: with
// every cache of the sync path sized to nothing (caches.per_cache_factors 0, event_cache_size 1), users
// syncing incrementally across several rooms still receive every event exactly once, typing, joins and
// leaves included — memory answers less, storage answers the rest. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const NOTHING = 0;
const SYNC_CACHES = [
  "sync_room_recent",
  "sync_member_event_in_room",
  "sync_member_event_about",
  "sync_memberships",
  "sync_membership_generations",
  "sync_lazy_members",
  "state_group_cache",
  "state_group_chain_lengths",
  "room_snapshots",
  "get_user_by_access_token",
  "presence_rows",
  "e2e_key_summaries",
  "sync_filters",
  "typing_rooms",
  "event_child_targets",
];

describe.each(backends())("bounded caches on %s", (backend) => {
  let t: TestServer;
  let users: Session[];
  let rooms: string[];

  beforeAll(async () => {
    t = await startTestServer({
      backend,
      config: { event_cache_size: 1, caches: { per_cache_factors: Object.fromEntries(SYNC_CACHES.map((c) => [c, NOTHING])) } },
    });
    users = [await registerUser(t, "u0"), await registerUser(t, "u1"), await registerUser(t, "u2")];
    rooms = [await createRoom(t, users[0]!, { preset: "public_chat" }), await createRoom(t, users[1]!, { preset: "public_chat" }), await createRoom(t, users[2]!, { preset: "public_chat" })];
  });
  afterAll(async () => {
    await t?.close();
  });

  it("delivers every event exactly once to incremental syncs", async () => {
    const call = async (who: Session, method: string, path: string, body?: unknown) => {
      const res = await t.call(method, path, { token: who.access_token, body });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.json)}`).toBe(200);
      return res.json;
    };
    // u0 in rooms 0 and 1, u1 in 1 and 2, u2 in 2 and 0.
    await call(users[0]!, "POST", `${V3}/join/${enc(rooms[1]!)}`, {});
    await call(users[1]!, "POST", `${V3}/join/${enc(rooms[2]!)}`, {});
    await call(users[2]!, "POST", `${V3}/join/${enc(rooms[0]!)}`, {});
    const filter = enc(JSON.stringify({ room: { timeline: { limit: 50 }, state: { lazy_load_members: true } } }));
    const since: (string | undefined)[] = [undefined, undefined, undefined];
    const seen: Map<string, string[]>[] = users.map(() => new Map());
    const typingSeen = users.map(() => new Set<string>());
    const syncAll = async () => {
      for (const [i, who] of users.entries()) {
        const res = await call(who, "GET", `${V3}/sync?filter=${filter}${since[i] ? `&since=${since[i]}` : ""}`);
        since[i] = res.next_batch;
        for (const [roomId, room] of Object.entries((res.rooms?.join ?? {}) as Record<string, any>)) {
          expect(room.timeline.limited, `u${i} ${roomId} timeline limited`).not.toBe(true);
          const list = seen[i]!.get(roomId) ?? [];
          list.push(...room.timeline.events.map((e: any) => e.event_id));
          seen[i]!.set(roomId, list);
          for (const e of room.ephemeral?.events ?? []) if (e.type === "m.typing") for (const u of e.content.user_ids) typingSeen[i]!.add(`${roomId} ${u}`);
        }
      }
    };
    await syncAll();
    let n = 0;
    for (let round = 0; round < 6; round++) {
      for (const [i, who] of users.entries()) {
        const room = rooms[(i + round) % 3]!;
        const member = (i === 0 && room !== rooms[2]) || (i === 1 && room !== rooms[0]) || (i === 2 && room !== rooms[1]);
        if (!member) continue;
        await call(who, "PUT", `${V3}/rooms/${enc(room)}/send/m.room.message/m${++n}`, { msgtype: "m.text", body: `round ${round}` });
        if (round === 1) await call(who, "PUT", `${V3}/rooms/${enc(room)}/typing/${enc(who.user_id)}`, { typing: true, timeout: 30_000 });
      }
      if (round === 3) {
        await call(users[1]!, "POST", `${V3}/rooms/${enc(rooms[2]!)}/leave`, {});
        await call(users[1]!, "POST", `${V3}/join/${enc(rooms[2]!)}`, {});
      }
      await syncAll();
    }
    // What each user saw of each room equals the room's history since they synced first, once each.
    for (const [i, who] of users.entries()) {
      for (const [roomId, ids] of seen[i]!) {
        expect(new Set(ids).size, `u${i} duplicates in ${roomId}`).toBe(ids.length);
        const history = await call(who, "GET", `${V3}/rooms/${enc(roomId)}/messages?dir=f&limit=1000`);
        const all: string[] = history.chunk.map((e: any) => e.event_id);
        const tail = all.slice(all.indexOf(ids[0]!));
        if (!(i === 1 && roomId === rooms[2])) expect(ids, `u${i} in ${roomId}`).toEqual(tail);
        else for (const id of tail) if (!ids.includes(id)) expect(history.chunk.find((e: any) => e.event_id === id)?.content.membership, `u1 missed ${id}`).toBe("leave");
      }
    }
    // u2 typed in room 0 (round 1), which u0 shares.
    expect([...typingSeen[0]!]).toContain(`${rooms[0]} ${users[2]!.user_id}`);
  });
});
