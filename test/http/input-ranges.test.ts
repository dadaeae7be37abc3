// Integers and search terms out of range (issue 11, findings 3 and 4), the same on SQLite and
// PostgreSQL: integer query parameters and tokens beyond Matrix's integer range are refused with
// 400 M_INVALID_PARAM before they reach storage (PostgreSQL's bigint would fail), and search terms over
// MAX_SEARCH_TERM_LENGTH are refused (SQLite's LIKE fails on 50,000 bytes) while long but bounded ones
// — a thousand one-letter words — are answered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SEARCH_TERM_LENGTH } from "../../src/domain/text.ts";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V1 = "/_matrix/client/v1";
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const HUGE = "99999999999999999999999";

describe.each(backends())("input ranges on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let roomId: string;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    roomId = await createRoom(t, alice, { preset: "public_chat" });
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token: alice.access_token, body });
  const expectInvalid = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    expect.soft([res.status, res.json?.errcode], `${method} ${path.slice(0, 120)}: ${JSON.stringify(res.json)}`).toEqual([400, "M_INVALID_PARAM"]);
  };

  it("refuses integers beyond Matrix's range in query parameters and tokens", async () => {
    const r = enc(roomId);
    await expectInvalid("GET", `${V1}/rooms/${r}/timestamp_to_event?ts=${HUGE}&dir=f`);
    await expectInvalid("GET", `${V1}/rooms/${r}/timestamp_to_event?ts=9007199254740992&dir=f`);
    await expectInvalid("GET", `${V1}/rooms/${r}/timestamp_to_event?ts=-1&dir=b`);
    await expectInvalid("GET", `${V1}/rooms/${r}/timestamp_to_event?ts=1e3&dir=b`);
    await expectInvalid("GET", `${V3}/rooms/${r}/messages?dir=b&limit=${HUGE}`);
    await expectInvalid("GET", `${V3}/rooms/${r}/messages?dir=b&from=s${HUGE}`);
    await expectInvalid("GET", `${V3}/rooms/${r}/messages?dir=f&to=s${HUGE}`);
    await expectInvalid("GET", `${V3}/rooms/${r}/members?at=s${HUGE}`);
    await expectInvalid("GET", `${V3}/sync?since=s${HUGE}_0_0`);
    await expectInvalid("GET", `${V3}/sync?timeout=${HUGE}`);
    await expectInvalid("GET", `${V3}/events?timeout=${HUGE}`);
    await expectInvalid("GET", `${V3}/publicRooms?limit=${HUGE}`);
    await expectInvalid("GET", `${V1}/rooms/${r}/hierarchy?limit=${HUGE}`);
    await expectInvalid("GET", `${V1}/rooms/${r}/relations/${enc("$x")}?limit=${HUGE}`);
    // The largest safe integer is a timestamp like any other: no event lies after it.
    const max = await call("GET", `${V1}/rooms/${r}/timestamp_to_event?ts=9007199254740991&dir=f`);
    expect([max.status, max.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
  });

  it("refuses search terms over the bound and answers long bounded ones", async () => {
    const tooLong = "x".repeat(50_000);
    await expectInvalid("POST", `${V3}/user_directory/search`, { search_term: tooLong });
    await expectInvalid("POST", `${V3}/search`, { search_categories: { room_events: { search_term: tooLong } } });
    await expectInvalid("POST", `${V3}/publicRooms`, { filter: { generic_search_term: tooLong } });
    const words = Array.from({ length: MAX_SEARCH_TERM_LENGTH / 2 }, () => "a").join(" ");
    expect(words.length).toBeLessThanOrEqual(MAX_SEARCH_TERM_LENGTH);
    const dir = await call("POST", `${V3}/user_directory/search`, { search_term: words });
    expect(dir.status, JSON.stringify(dir.json)).toBe(200);
    expect(dir.json.results.map((u: any) => u.user_id)).toContain(alice.user_id);
    const atBound = await call("POST", `${V3}/user_directory/search`, { search_term: "y".repeat(MAX_SEARCH_TERM_LENGTH) });
    expect(atBound.status).toBe(200);
    expect((await call("POST", `${V3}/search`, { search_categories: { room_events: { search_term: words } } })).status).toBe(200);
    expect((await call("POST", `${V3}/publicRooms`, { filter: { generic_search_term: "z".repeat(MAX_SEARCH_TERM_LENGTH) } })).status).toBe(200);
  });
});
