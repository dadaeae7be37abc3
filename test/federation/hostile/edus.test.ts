// Hostile servers, EDUs (issue 40): a joined hostile server sends, in /send transactions, typing
// notices, read receipts, presence, device-list and signing-key updates for users of another server
// (the local alice, a third server's carol), to-device messages claiming senders it does not own, and
// typing and receipts for rooms it is not in. Each transaction ends with an honest EDU of its own (the
// sentinel): once alice's /sync shows the sentinel, the forged EDUs before it were handled, and what
// alice sees (her /sync, /presence, /keys/query) must show nothing of them. SQLite and PostgreSQL.
import { beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../helpers/server.ts";
import { createRoom } from "../../helpers/rooms.ts";
import { hostileFixture } from "../../helpers/hostile-server.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("forged EDUs from a hostile server on %s", (backend) => {
  const f = hostileFixture(backend);
  let carol: string;
  let shared: string;
  let elsewhere: string;
  let since: string;

  beforeAll(async () => {
    carol = "@carol:third.example";
    shared = await createRoom(f.a, f.alice, { preset: "public_chat" });
    elsewhere = await createRoom(f.a, f.alice, { preset: "public_chat" });
    await f.h.join(shared, "mallory");
    since = (await f.a.call("GET", `${V3}/sync`, { token: f.alice.access_token })).json.next_batch;
  });

  const ephemeral = (sync: any, roomId: string, type: string) => (sync.rooms?.join?.[roomId]?.ephemeral?.events ?? []).filter((e: any) => e.type === type);

  /** alice's /sync responses from `since` until `done` holds for one; all of them. */
  async function syncUntil(done: (sync: any) => boolean): Promise<any[]> {
    const deadline = Date.now() + 20_000;
    const seen: any[] = [];
    for (;;) {
      const res = await f.a.call("GET", `${V3}/sync?since=${enc(since)}&timeout=5000`, { token: f.alice.access_token });
      expect(res.status).toBe(200);
      since = res.json.next_batch;
      seen.push(res.json);
      if (done(res.json)) return seen;
      if (Date.now() > deadline) throw new Error("the sentinel never showed in /sync");
    }
  }

  /** Sends `forged` EDUs then mallory's honest typing in the shared room; alice's syncs until it shows. */
  async function withTypingSentinel(forged: unknown[]): Promise<any[]> {
    const sentinel = { edu_type: "m.typing", content: { room_id: shared, user_id: f.mallory, typing: true } };
    const res = await f.h.send([], [...forged, sentinel]);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const seen = await syncUntil((s) => ephemeral(s, shared, "m.typing").some((e: any) => e.content.user_ids.includes(f.mallory)));
    await f.h.send([], [{ edu_type: "m.typing", content: { room_id: shared, user_id: f.mallory, typing: false } }]);
    await syncUntil((s) => ephemeral(s, shared, "m.typing").some((e: any) => !e.content.user_ids.includes(f.mallory)));
    return seen;
  }
  const typers = (syncs: any[], roomId: string) => syncs.flatMap((s) => ephemeral(s, roomId, "m.typing").flatMap((e: any) => e.content.user_ids as string[]));

  it("typing for a local user (alice made to type): never shown", async () => {
    const seen = await withTypingSentinel([{ edu_type: "m.typing", content: { room_id: shared, user_id: f.alice.user_id, typing: true } }]);
    expect(typers(seen, shared)).not.toContain(f.alice.user_id);
  });

  it("typing for a third server's user: never shown", async () => {
    const seen = await withTypingSentinel([{ edu_type: "m.typing", content: { room_id: shared, user_id: carol, typing: true } }]);
    expect(typers(seen, shared)).not.toContain(carol);
  });

  it("typing in a room the origin is not in: never shown there", async () => {
    const seen = await withTypingSentinel([{ edu_type: "m.typing", content: { room_id: elsewhere, user_id: f.mallory, typing: true } }]);
    expect(typers(seen, elsewhere)).toEqual([]);
    const full = await f.a.call("GET", `${V3}/sync`, { token: f.alice.access_token });
    expect(ephemeral(full.json, elsewhere, "m.typing").flatMap((e: any) => e.content.user_ids)).not.toContain(f.mallory);
  });

  /** alice's own read receipt as her sync shows it (initial sync). */
  async function receiptsIn(roomId: string): Promise<Record<string, any>> {
    const full = await f.a.call("GET", `${V3}/sync`, { token: f.alice.access_token });
    return Object.assign({}, ...ephemeral(full.json, roomId, "m.receipt").map((e: any) => e.content));
  }

  it("a read receipt for a local user (alice's read marker moved back): ignored", async () => {
    const first = (await f.a.hs.services.rooms.events.extremities(shared))[0]!;
    const mine = await f.a.call("PUT", `${V3}/rooms/${enc(shared)}/send/m.room.message/r${Math.random()}`, { token: f.alice.access_token, body: { msgtype: "m.text", body: "read up to here" } });
    await f.a.call("POST", `${V3}/rooms/${enc(shared)}/receipt/m.read/${enc(mine.json.event_id)}`, { token: f.alice.access_token, body: {} });
    const forged = { edu_type: "m.receipt", content: { [shared]: { "m.read": { [f.alice.user_id]: { event_ids: [first], data: { ts: Date.now() } } } } } };
    await withTypingSentinel([forged]);
    const receipts = await receiptsIn(shared);
    expect(receipts[first]?.["m.read"]?.[f.alice.user_id]).toBeUndefined();
    expect(receipts[mine.json.event_id]["m.read"][f.alice.user_id]).toBeDefined();
  });

  it("a read receipt of mallory's in a room the origin is not in: not shown there", async () => {
    const any = (await f.a.hs.services.rooms.events.extremities(elsewhere))[0]!;
    await withTypingSentinel([{ edu_type: "m.receipt", content: { [elsewhere]: { "m.read": { [f.mallory]: { event_ids: [any], data: { ts: Date.now() } } } } } }]);
    expect(JSON.stringify(await receiptsIn(elsewhere))).not.toContain(f.mallory);
  });

  it("presence for a local user (alice set offline, 'hacked'): alice's presence unchanged", async () => {
    await f.a.call("PUT", `${V3}/presence/${enc(f.alice.user_id)}/status`, { token: f.alice.access_token, body: { presence: "online", status_msg: "mine" } });
    await withTypingSentinel([{ edu_type: "m.presence", content: { push: [{ user_id: f.alice.user_id, presence: "offline", status_msg: "hacked", last_active_ago: 1 }] } }]);
    const p = await f.a.call("GET", `${V3}/presence/${enc(f.alice.user_id)}/status`, { token: f.alice.access_token });
    expect([p.status, p.json.presence, p.json.status_msg]).toEqual([200, "online", "mine"]);
  });

  it("presence for a third server's user: not taken", async () => {
    await withTypingSentinel([{ edu_type: "m.presence", content: { push: [{ user_id: carol, presence: "online", status_msg: "carol via mallory" }] } }]);
    const p = await f.a.call("GET", `${V3}/presence/${enc(carol)}/status`, { token: f.alice.access_token });
    expect(p.json.status_msg).not.toBe("carol via mallory");
  });

  const keysOf = async (userId: string) => {
    const q = await f.a.call("POST", `${V3}/keys/query`, { token: f.alice.access_token, body: { device_keys: { [userId]: [] } } });
    expect(q.status).toBe(200);
    return q.json;
  };

  it("a device-list update for a local user (a device added to alice): alice's devices unchanged", async () => {
    const before = Object.keys((await keysOf(f.alice.user_id)).device_keys[f.alice.user_id] ?? {});
    const keys = { user_id: f.alice.user_id, device_id: "EVIL", algorithms: ["m.olm.v1.curve25519-aes-sha2"], keys: { "ed25519:EVIL": "x".repeat(43) }, signatures: {} };
    await withTypingSentinel([{ edu_type: "m.device_list_update", content: { user_id: f.alice.user_id, device_id: "EVIL", stream_id: 1, prev_id: [], keys } }]);
    const after = await keysOf(f.alice.user_id);
    expect(Object.keys(after.device_keys[f.alice.user_id] ?? {})).toEqual(before);
    const devices = await f.a.call("GET", `${V3}/devices`, { token: f.alice.access_token });
    expect((devices.json.devices as any[]).map((d) => d.device_id)).not.toContain("EVIL");
  });

  it("a signing-key update for a local user (a master key planted on alice): none shown", async () => {
    const master = { user_id: f.alice.user_id, usage: ["master"], keys: { [`ed25519:${"m".repeat(43)}`]: "m".repeat(43) } };
    await withTypingSentinel([{ edu_type: "m.signing_key_update", content: { user_id: f.alice.user_id, master_key: master } }]);
    const after = await keysOf(f.alice.user_id);
    expect(after.master_keys?.[f.alice.user_id]).toBeUndefined();
  });

  /** alice's to-device messages in `syncs`. */
  const toDevice = (syncs: any[]) => syncs.flatMap((s) => (s.to_device?.events ?? []) as any[]);

  async function withToDeviceSentinel(forged: unknown[]): Promise<any[]> {
    const sentinel = { edu_type: "m.direct_to_device", content: { sender: f.mallory, type: "m.test", message_id: `s${Math.random()}`, messages: { [f.alice.user_id]: { [f.alice.device_id]: { sentinel: true } } } } };
    await f.h.send([], [...forged, sentinel]);
    return syncUntil((s) => (s.to_device?.events ?? []).some((e: any) => e.content.sentinel === true));
  }

  it("a to-device message claiming a local sender (alice to herself): never delivered", async () => {
    const seen = await withToDeviceSentinel([{ edu_type: "m.direct_to_device", content: { sender: f.alice.user_id, type: "m.room_key_request", message_id: `f${Math.random()}`, messages: { [f.alice.user_id]: { [f.alice.device_id]: { forged: "local" } } } } }]);
    expect(toDevice(seen).filter((e) => e.content.forged)).toEqual([]);
    expect(toDevice(seen).map((e) => e.sender)).toEqual([f.mallory]);
  });

  it("a to-device message claiming a third server's sender: never delivered", async () => {
    const seen = await withToDeviceSentinel([{ edu_type: "m.direct_to_device", content: { sender: carol, type: "m.room.encrypted", message_id: `f${Math.random()}`, messages: { [f.alice.user_id]: { "*": { forged: "third" } } } } }]);
    expect(toDevice(seen).filter((e) => e.content.forged)).toEqual([]);
  });
});
