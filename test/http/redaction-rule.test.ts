// Who may redact, wherever a redaction comes from: the one rule (src/domain/auth/redaction.ts) decides
// whether a redaction takes effect when it is stored and again when the redacted event is served. A
// state-keyed m.room.redaction (the state API, either face) is never a redaction; a user without the
// redact level redacts only their own events (one with it may redact an event not seen here); the power level at the redaction counts, not today's; an
// event of another room is out of reach; a redaction row that was stored unchecked (before this rule, or
// from a remote server whose target arrived later) is applied only if the rule holds.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import type { Session } from "../helpers/users.ts";
import { errcode, gql } from "../graphql/client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

const SEND_STATE = `mutation ($roomId: String!, $type: String!, $stateKey: String!, $content: JSONObject!) {
  sendStateEvent(roomId: $roomId, type: $type, stateKey: $stateKey, content: $content) { eventId }
}`;
const REDACT = `mutation ($roomId: String!, $eventId: String!, $txnId: String!) { redactEvent(roomId: $roomId, eventId: $eventId, txnId: $txnId) { eventId } }`;

describe.each(backends())("the redaction rule on %s", (backend) => {
  const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });
  let txn = 0;
  const nextTxn = () => `r${++txn}`;

  async function ok(res: Promise<{ status: number; json: any }>) {
    const r = await res;
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return r.json;
  }
  const send = async (who: Session, roomId: string, body: string) =>
    (await ok(t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${nextTxn()}`, { token: who.access_token, body: { msgtype: "m.text", body } }))).event_id as string;
  const redact = (who: Session, roomId: string, eventId: string) =>
    t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(eventId)}/${nextTxn()}`, { token: who.access_token, body: {} });
  const event = async (who: Session, roomId: string, eventId: string) =>
    ok(t.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(eventId)}`, { token: who.access_token }));
  const setLevel = (roomId: string, userId: string, level: number) =>
    ok(t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.power_levels`, {
      token: alice.access_token,
      body: { users: { [alice.user_id]: 100, [userId]: level }, state_default: 0, redact: 50 },
    }));

  async function expectIntact(roomId: string, eventId: string, body: string) {
    for (const who of [alice, bob]) {
      const e = await event(who, roomId, eventId);
      expect(e.content.body).toBe(body);
      expect(e.unsigned?.redacted_because).toBeUndefined();
    }
    const m = await ok(t.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=50`, { token: bob.access_token }));
    expect((m.chunk as any[]).find((e) => e.event_id === eventId).content.body).toBe(body);
  }

  async function expectRedactedBy(roomId: string, eventId: string, redactionId: string) {
    for (const who of [alice, bob]) {
      const e = await event(who, roomId, eventId);
      expect(e.content).toEqual({});
      expect(e.unsigned.redacted_because.event_id).toBe(redactionId);
    }
  }

  /** A room where everyone may send state (state_default 0) but redacting others' events needs 50. */
  async function openRoom(version: string): Promise<string> {
    const roomId = await createRoom(t, alice, { room_version: version, preset: "public_chat", power_level_content_override: { state_default: 0, redact: 50 } });
    await ok(t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} }));
    return roomId;
  }

  it.each(["10", "11", "12"])("v%s: a state-keyed m.room.redaction is stored as state and redacts nothing, from either face", async (v) => {
    const roomId = await openRoom(v);
    const secret = `secret${v}`;
    const target = await send(alice, roomId, secret);

    // The redaction API refuses bob (level 0) ...
    const denied = await redact(bob, roomId, target);
    expect([denied.status, denied.json.errcode]).toEqual([403, "M_FORBIDDEN"]);
    const gqlDenied = await gql(t, REDACT, { roomId, eventId: target, txnId: nextTxn() }, bob.access_token);
    expect(errcode(gqlDenied.body)).toBe("M_FORBIDDEN");

    // ... and the state API, which takes any state event the power levels allow, redacts nothing.
    const viaRest = await ok(t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.redaction/x`, { token: bob.access_token, body: { redacts: target } }));
    const viaGql = await gql(t, SEND_STATE, { roomId, type: "m.room.redaction", stateKey: "y", content: { redacts: target } }, bob.access_token);
    expect(viaGql.body.errors, JSON.stringify(viaGql.body.errors)).toBeUndefined();
    const state = await ok(t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.redaction/x?format=event`, { token: bob.access_token }));
    expect(state.event_id).toBe(viaRest.event_id);
    await expectIntact(roomId, target, secret);

    // Nothing was taken out of the search index either.
    const found = await ok(t.call("POST", `${V3}/search`, { token: alice.access_token, body: { search_categories: { room_events: { search_term: secret } } } }));
    expect(found.search_categories.room_events.results.map((r: any) => r.result.event_id)).toContain(target);

    // Nor does it take effect when read back from storage (cold caches after a restart).
    await t.restart();
    await expectIntact(roomId, target, secret);
  });

  it("anyone redacts their own events; the power level at the redaction counts, not the current one", async () => {
    const roomId = await openRoom("11");
    const own = await send(bob, roomId, "mine");
    const ownRedaction = (await ok(redact(bob, roomId, own))).event_id;
    await expectRedactedBy(roomId, own, ownRedaction);

    // Promoted, bob may redact alice's message; demoted later, the redaction stands.
    const before = await send(alice, roomId, "before promotion");
    await setLevel(roomId, bob.user_id, 50);
    const r = (await ok(redact(bob, roomId, before))).event_id;
    await setLevel(roomId, bob.user_id, 0);
    await expectRedactedBy(roomId, before, r);
    await t.restart();
    await expectRedactedBy(roomId, before, r);

    // Demoted, he may not redact what she sends next.
    const after = await send(alice, roomId, "after demotion");
    expect((await redact(bob, roomId, after)).status).toBe(403);
    await expectIntact(roomId, after, "after demotion");
  });

  it("an event this server has not seen: redacted by one with the redact level (as Synapse), 404 for others", async () => {
    const roomId = await openRoom("11");
    const unseen = "$not-seen-here:elsewhere.example";
    const denied = await redact(bob, roomId, unseen);
    expect([denied.status, denied.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    const done = await redact(alice, roomId, unseen);
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    const stored = await event(alice, roomId, done.json.event_id);
    expect(stored).toMatchObject({ type: "m.room.redaction", sender: alice.user_id, content: { redacts: unseen } });
  });

  it("an event of another room cannot be redacted from this one", async () => {
    const here = await openRoom("11");
    const there = await openRoom("11");
    const target = await send(bob, there, "elsewhere");
    const res = await redact(alice, here, target);
    // 400, as Synapse ("Cannot redact event from a different room"; issue 16).
    expect([res.status, res.json.errcode]).toEqual([400, "M_UNKNOWN"]);
    await expectIntact(there, target, "elsewhere");
  });

  it("a redaction stored unchecked is applied only when the rule holds as the event is served", async () => {
    const roomId = await openRoom("11");
    const target = await send(alice, roomId, "kept");
    const victim = await send(alice, roomId, "removed");
    // What the commit used to store for any m.room.redaction: rows for a state-keyed one (bob, level 0)
    // and a message-less one of alice's own (level 100, non-state: it holds).
    const stateKeyed = (await ok(t.call("PUT", `${V3}/rooms/${enc(roomId)}/state/m.room.redaction/z`, { token: bob.access_token, body: { redacts: target } }))).event_id;
    const legit = (await ok(redact(alice, roomId, victim))).event_id;
    const sql = t.hs.services.storage.sql;
    await sql.run(`INSERT INTO redactions (event_id, redacts, room_id) VALUES (?, ?, ?)`, [stateKeyed, target, roomId]);
    expect(await sql.all(`SELECT event_id FROM redactions WHERE redacts IN (?, ?) ORDER BY event_id`, [target, victim])).toHaveLength(2);
    await t.restart();
    await expectIntact(roomId, target, "kept");
    await expectRedactedBy(roomId, victim, legit);
  });
});
