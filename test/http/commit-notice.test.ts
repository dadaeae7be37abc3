// The commit notice (src/domain/consumers/commit-feed.ts): every event commit publishes one plain-JSON
// notice (stream, writer, position, room, event ids) to the in-memory indexes, and a notice received from
// elsewhere (another writer process, later) feeds the same indexes after loading its events.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import type { Commit, CommitNotice } from "../../src/domain/consumers/commit-feed.ts";

const V3 = "/_matrix/client/v3";

describe.each(backends())("commit notice on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("one notice per commit, in plain JSON; a received notice feeds the indexes as the writer's did", async () => {
    const s = t.hs.services;
    const roomId = await createRoom(t, alice, { preset: "public_chat" });
    const published: Commit[] = [];
    const publish = s.commits.publish.bind(s.commits);
    s.commits.publish = (c) => (published.push(c), publish(c));
    let notice: CommitNotice;
    let eventId: string;
    try {
      const res = await t.call("PUT", `${V3}/rooms/${encodeURIComponent(roomId)}/send/m.room.message/n1`, { token: alice.access_token, body: { msgtype: "m.text", body: "hi" } });
      expect(res.status).toBe(200);
      eventId = res.json.event_id as string;
      const pos = (await s.rooms.events.get(eventId))!.streamOrdering;
      expect(published.map((c) => c.notice)).toEqual([{ stream: "events", writer: "master", position: pos, roomId, eventIds: [eventId] }]);
      expect(published[0]!.snapshot?.position).toBe(pos);
      notice = JSON.parse(JSON.stringify(published[0]!.notice)) as CommitNotice;
    } finally {
      s.commits.publish = publish;
    }

    // As if another writer had committed it: events loaded by id, the room cache dropped (no snapshot),
    // readers notified.
    const heard: string[] = [];
    const off = s.rooms.notifier.onEvent((n) => heard.push(n.eventId));
    expect(s.rooms.cache.get(roomId)).toBeDefined();
    await s.commits.receive(notice);
    off();
    expect(heard).toEqual([eventId]);
    expect(s.rooms.cache.get(roomId)).toBeUndefined();
    // The room reloads from storage with the same current state and tip.
    const sync = await t.call("GET", `${V3}/sync?timeout=0`, { token: alice.access_token });
    expect(sync.json.rooms.join[roomId].timeline.events.at(-1).event_id).toBe(eventId);
  });
});
