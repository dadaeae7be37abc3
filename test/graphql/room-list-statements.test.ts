// The 100-room viewer query (what a room list shows of each room: name, avatar and its browser URL, member
// counts, unread counts, the last event) on SQLite and PostgreSQL: the database reads of that request,
// counted through the metrics' query hook (raw SQL and Prisma alike, test/helpers/statement-count.ts;
// its writes are the session's last-seen bookkeeping, at most a few), do not grow with the number of rooms — the
// same count for 10 rooms as for 100 on warm caches (and for each room's state and members); after a restart (cold) at most the statements that
// IN lists split at 500 parameters add — and the answers are right.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { countStatements, ROOM_DETAILS_QUERY, ROOM_LIST_QUERY } from "../helpers/statement-count.ts";

const MANY = 100;
const FEW = 10;

describe.each(backends())("room list statements on %s", (backend) => {
  let t: TestServer;
  let many: Session;
  let few: Session;
  let writer: Session;

  beforeAll(async () => {
    // Metrics for the statement hook, request contexts to put each statement to its request.
    t = await startTestServer({ backend, config: { enable_metrics: true, log_request_context: true } });
    many = await registerUser(t, "many");
    few = await registerUser(t, "few");
    writer = await registerUser(t, "writer");
    // Each room: a name, an avatar, the writer joined, and their message last (an unread notification).
    for (const [owner, n] of [[many, MANY], [few, FEW]] as const) {
      for (let i = 0; i < n; i++) {
        const roomId = await createRoom(t, owner, { name: `${owner.user_id} ${i}`, preset: "public_chat", initial_state: [{ type: "m.room.avatar", state_key: "", content: { url: `mxc://weft.test/avatar${i}` } }] });
        expect((await t.call("POST", `/_matrix/client/v3/join/${encodeURIComponent(roomId)}`, { token: writer.access_token, body: {} })).status).toBe(200);
        const sent = await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/t${i}`, { token: writer.access_token, body: { msgtype: "m.text", body: `hello ${i}` } });
        expect(sent.status).toBe(200);
      }
    }
  }, 600_000);
  afterAll(async () => { await t?.close(); });

  async function roomList(who: Session, n: number, query = ROOM_LIST_QUERY) {
    const counter = countStatements(t.hs);
    const started = performance.now();
    try {
      const r = await t.call("POST", "/graphql", { body: { query, variables: { first: n } }, token: who.access_token });
      expect(r.json.errors).toBeUndefined();
      const c = counter.of(r.headers.get("x-request-id")!);
      return { rooms: r.json.data.viewer.rooms.edges.map((e: any) => e.node), statements: c.reads, writes: c.writes, byKind: c.byKind, ms: performance.now() - started };
    } finally {
      counter.stop();
    }
  }

  function checkRooms(rooms: any[], who: Session, n: number) {
    expect(rooms).toHaveLength(n);
    // Newest membership first: room n-1 first.
    rooms.forEach((room, k) => {
      const i = n - 1 - k;
      expect(room.name).toBe(`${who.user_id} ${i}`);
      expect(room.avatarUrl).toBe(`mxc://weft.test/avatar${i}`);
      expect(room.avatar).toMatch(/\/_impl\/media\/v1\/thumbnail\//);
      expect([room.joinedMemberCount, room.invitedMemberCount]).toEqual([2, 0]);
      expect(room.unreadCounts.total).toEqual({ notifications: 1, highlights: 0 });
      const last = room.timeline.edges;
      expect(last).toHaveLength(1);
      expect([last[0].node.type, last[0].node.sender, last[0].node.content.body]).toEqual(["m.room.message", writer.user_id, `hello ${i}`]);
      expect(room.timeline.pageInfo.hasPreviousPage).toBe(true);
    });
  }

  it(`reads the state and members of ${MANY} rooms in as many statements as of ${FEW}`, async () => {
    await roomList(few, FEW, ROOM_DETAILS_QUERY);
    await roomList(many, MANY, ROOM_DETAILS_QUERY);
    const fewWarm = await roomList(few, FEW, ROOM_DETAILS_QUERY);
    const manyWarm = await roomList(many, MANY, ROOM_DETAILS_QUERY);
    expect(manyWarm.rooms).toHaveLength(MANY);
    manyWarm.rooms.forEach((room: any, k: number) => {
      expect(room.state.map((e: any) => e.content.url)).toEqual([`mxc://weft.test/avatar${MANY - 1 - k}`]);
      expect(room.members.edges.map((e: any) => e.node.userId).sort()).toEqual([many.user_id, writer.user_id].sort());
    });
    console.log(`${backend}: room details statements: warm ${FEW} rooms ${fewWarm.statements}, ${MANY} rooms ${manyWarm.statements}`);
    expect(manyWarm.statements, JSON.stringify({ few: fewWarm.byKind, many: manyWarm.byKind })).toBe(fewWarm.statements);
  }, 120_000);

  it(`reads ${MANY} rooms in as many statements as ${FEW}, warm and cold`, async () => {
    // Warm: caches filled by a first run of each.
    await roomList(few, FEW);
    await roomList(many, MANY);
    const fewWarm = await roomList(few, FEW);
    const manyWarm = await roomList(many, MANY);
    checkRooms(fewWarm.rooms, few, FEW);
    checkRooms(manyWarm.rooms, many, MANY);

    // Cold: a fresh process over the same database (enable_metrics stays on).
    await t.restart();
    const fewCold = await roomList(few, FEW);
    await t.restart();
    const manyCold = await roomList(many, MANY);
    checkRooms(manyCold.rooms, many, MANY);
    console.log(`${backend}: room list statements: warm ${FEW} rooms ${fewWarm.statements}, ${MANY} rooms ${manyWarm.statements}; ` +
      `cold ${FEW} rooms ${fewCold.statements}, ${MANY} rooms ${manyCold.statements} (${JSON.stringify(manyCold.byKind)})`);
    expect(manyWarm.statements, JSON.stringify({ few: fewWarm.byKind, many: manyWarm.byKind })).toBe(fewWarm.statements);
    // Cold, the state groups' reads (a walk of prev_group chains, one query per step for all rooms, then
    // their entries) split IN lists at 500 parameters: a statement more per 500 ids, none per room.
    expect(manyCold.statements, JSON.stringify({ few: fewCold.byKind, many: manyCold.byKind })).toBeLessThanOrEqual(fewCold.statements + 2);
    expect(manyCold.statements).toBeLessThanOrEqual(35);
    for (const run of [fewWarm, manyWarm, fewCold, manyCold]) expect(run.writes, JSON.stringify(run.byKind)).toBeLessThanOrEqual(3);
  }, 120_000);
});
