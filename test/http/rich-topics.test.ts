// Rich topics (spec v1.15, MSC3765) on SQLite and PostgreSQL, beside the pinned live Synapse with the same
// assertions: createRoom's `topic` gives an m.room.topic with an `m.topic` block holding it as plain text;
// an `m.topic` with several representations is kept as sent and its first text/plain one is the topic the
// room directory, GET /v1/room_summary and GET /v1/rooms/{roomId}/hierarchy show; an unreadable `m.topic`
// falls back to `topic`. Responses validated against the spec.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startSynapse } from "../helpers/synapse.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

interface Home {
  call: TestServer["call"];
  register(localpart: string): Promise<Session>;
  close(): Promise<void>;
}

const homes: [string, () => Promise<Home>][] = [
  ...backends().map((backend): [string, () => Promise<Home>] => [`Weft on ${backend}`, async () => {
    const t = await startTestServer({ backend });
    return { call: t.call.bind(t), register: (l) => registerUser(t, l), close: () => t.close() };
  }]),
  ["Synapse", async () => {
    const s = await startSynapse({});
    return { call: (m, p, o) => s.call(m, p, o), register: (l) => s.register(l), close: () => s.close() };
  }],
];

describe.each(homes)("rich topics on %s", (_name, start) => {
  let home: Home;
  let alice: Session;
  let roomId: string;

  beforeAll(async () => {
    home = await start();
    alice = await home.register("alice");
    const res = await home.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "public_chat", visibility: "public", name: "Topics", topic: "All about topics" } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    roomId = res.json.room_id;
  }, 120_000);
  afterAll(async () => { await home?.close(); });

  /** The topic as the directory, the room summary and the hierarchy show it, once all three agree on `want`. */
  async function shownTopics(want: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const [dir, summary, tree] = await Promise.all([
        home.call("POST", `${V3}/publicRooms`, { token: alice.access_token, body: { filter: { generic_search_term: "Topics" } } }),
        home.call("GET", `/_matrix/client/v1/room_summary/${enc(roomId)}`, { token: alice.access_token }),
        home.call("GET", `/_matrix/client/v1/rooms/${enc(roomId)}/hierarchy`, { token: alice.access_token }),
      ]);
      const seen = [dir.json.chunk?.find((r: { room_id: string }) => r.room_id === roomId)?.topic, summary.json.topic, tree.json.rooms?.[0]?.topic];
      if (seen.every((t) => t === want)) {
        expectMatchesSpec(dir, "POST", `${V3}/publicRooms`);
        expectMatchesSpec(tree, "GET", `/_matrix/client/v1/rooms/${enc(roomId)}/hierarchy`);
        return;
      }
      // Synapse's directory follows room state in the background: wait for it, a bounded while.
      if (Date.now() > deadline) expect(seen).toEqual([want, want, want]);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("createRoom's topic is an m.room.topic with the topic as its m.topic plain text", async () => {
    const res = await home.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.topic/`, { token: alice.access_token });
    expect(res.status).toBe(200);
    expect(res.json.topic).toBe("All about topics");
    const reps = res.json["m.topic"]["m.text"] as { body: string; mimetype?: string }[];
    expect(reps).toHaveLength(1);
    expect(reps[0]!.body).toBe("All about topics");
    // Synapse leaves the mimetype out (text/plain by default); Weft writes it.
    expect([undefined, "text/plain"]).toContain(reps[0]!.mimetype);
    await shownTopics("All about topics");
  });

  it("keeps an m.topic as sent and shows its first text/plain representation", async () => {
    const content = {
      topic: "plain fallback",
      "m.topic": { "m.text": [{ mimetype: "text/html", body: "<b>rich</b> topic" }, { body: "rich topic" }, { mimetype: "text/plain", body: "second plain" }] },
    };
    const put = await home.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.topic/`, { token: alice.access_token, body: content });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    const got = await home.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.topic/`, { token: alice.access_token });
    expect(got.json).toEqual(content);
    await shownTopics("rich topic");
  });

  it("falls back to topic when m.topic cannot be read", async () => {
    const put = await home.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.topic/`, { token: alice.access_token, body: { topic: "only plain", "m.topic": { "m.text": "not a list" } } });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    await shownTopics("only plain");
  });
});
