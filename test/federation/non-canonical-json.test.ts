// Federation bodies holding a value canonical JSON cannot carry — a float, an integer past 2^53 — in rooms
// of version 6 and later (SQLite and PostgreSQL), as a suite's fake remote server sends them: the request
// is signed over the body as sent (by hand here: the test writes the canonical text itself), so it is
// authenticated — never a 401 for the whole request — and then only the offending event is refused: in
// a transaction the other PDUs are received and the bad one is an error, not stored; send_join (v1, v2), send_leave
// and invite answer 400 M_BAD_JSON with nothing stored; an invite the invitee's server answers with such a
// value is our client's 400 M_BAD_JSON. A signature over other numbers than those sent is still a 401.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { federationCall, startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startFakeOrigin, type FakeOrigin } from "../helpers/fake-origin.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { eventOnRoom, signPdu, signedCall, signerOf, syncUntil, type Signer } from "../helpers/by-hand.ts";
import { base64Unpadded } from "../../src/domain/canonical-json.ts";
import { signBytes } from "../../src/domain/signing.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation";
const enc = encodeURIComponent;
/** A number canonical JSON has no room for (2^53 + 1), written into bodies as text. */
const BIG = "9007199254740993";

/** JSON text with every object's keys sorted (what a sender's canonical encoder writes); numbers as JS writes them. */
function sortedJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(obj[k])}`).join(",")}}`;
}

/**
 * Sends `text` (a JSON body) from `from` to `to`, signed over `signedText` (the body as the sender encoded
 * it for signing: `text` unless the test says otherwise), as the spec's request signature: the canonical
 * object {content, destination, method, origin, uri}.
 */
function rawSignedPut(from: Signer, to: FederatedServer, path: string, text: string, signedText = text) {
  const signed = `{"content":${signedText},"destination":${JSON.stringify(to.serverName)},"method":"PUT","origin":${JSON.stringify(from.serverName)},"uri":${JSON.stringify(path)}}`;
  const sig = base64Unpadded(signBytes(Buffer.from(signed, "utf8"), from.key.privateKey));
  const authorization = `X-Matrix origin="${from.serverName}",destination="${to.serverName}",key="${from.key.keyId}",sig="${sig}"`;
  return federationCall(to.baseUrl, { method: "PUT", path, raw: text, authorization });
}

describe.each(backends())("values canonical JSON cannot carry, in federation bodies, on %s", (backend) => {
  let a: FederatedServer;
  let b: FederatedServer;
  let fake: FakeOrigin;
  let alice: Session;
  let roomId: string;
  let bobId: string;

  beforeAll(async () => {
    [a, b, fake] = await Promise.all([startFederatedServer({ backend }), startFederatedServer({ backend }), startFakeOrigin()]);
    alice = await registerUser(a, "alice");
    bobId = `@bob:${b.serverName}`;
    roomId = await createRoom(a, alice, { preset: "public_chat", room_version: "10" });
    // bob of B joins A's room (make_join / send_join v2, as B would).
    const join = await completed(bobId, "join");
    const res = await signedCall(signerOf(b), a, "PUT", `${FED}/v2/send_join/${enc(roomId)}/${enc(join.eventId)}`, join.pdu);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), fake?.close()]);
  });

  /** A's make_join / make_leave template for `userId`, completed and signed by B. */
  async function completed(userId: string, kind: "join" | "leave") {
    const t = await signedCall(signerOf(b), a, "GET", `${FED}/v1/make_${kind}/${enc(roomId)}/${enc(userId)}${kind === "join" ? "?ver=10" : ""}`);
    expect(t.status, JSON.stringify(t.json)).toBe(200);
    return signPdu({ ...t.json.event, origin_server_ts: Date.now() } as Pdu, t.json.room_version, signerOf(b));
  }

  /** `pdu` as JSON text with `"bad_val":<number text>` added to the object at `where` (its content, or the event). */
  function withBadValue(pdu: Pdu, number: string, where: "content" | "event" = "content"): string {
    const marker = "__BAD__";
    const copy = structuredClone(pdu) as Record<string, any>;
    (where === "content" ? copy.content : copy).bad_val = marker;
    return sortedJson(copy).replace(`"${marker}"`, number);
  }

  it("a transaction: signed over the body as sent, so taken; its other PDUs received, the offending one not stored", async () => {
    const good = await eventOnRoom(a.hs.services, roomId, signerOf(b), { type: "m.room.message", sender: bobId, content: { msgtype: "m.text", body: "Good event" } });
    const bad = await eventOnRoom(a.hs.services, roomId, signerOf(b), { type: "m.room.message", sender: bobId, content: { msgtype: "m.text", body: "Bad event" } });
    const big = await eventOnRoom(a.hs.services, roomId, signerOf(b), { type: "m.room.message", sender: bobId, content: { msgtype: "m.text", body: "Big event" } });
    const txn = `float-${Date.now()}`;
    const text = `{"origin":${JSON.stringify(b.serverName)},"origin_server_ts":${Date.now()},"pdus":[${sortedJson(good.pdu)},${withBadValue(bad.pdu, "1.1")},${withBadValue(big.pdu, BIG)}]}`;
    const res = await rawSignedPut(signerOf(b), a, `${FED}/v1/send/${txn}`, text);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.pdus[good.eventId]).toEqual({});
    const seen = await syncUntil(a, alice.access_token, roomId, (evs) => evs.some((e) => e.event_id === good.eventId));
    expect(seen.map((e) => e.content.body)).not.toContain("Bad event");
    for (const e of [bad, big]) {
      // Its id is known (the value is in content, which its reference hash leaves out): refused by name.
      expect(res.json.pdus[e.eventId].error).toMatch(/not canonical JSON/);
      expect(await a.hs.services.rooms.events.get(e.eventId)).toBeUndefined();
      const shown = await a.call("GET", `${V3}/rooms/${enc(roomId)}/event/${enc(e.eventId)}`, { token: alice.access_token });
      expect([shown.status, shown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
    }
    // A signature over other numbers than those sent is no signature of this body.
    const forged = await rawSignedPut(signerOf(b), a, `${FED}/v1/send/${txn}-2`, text, text.replace('"bad_val":1.1', '"bad_val":1.2'));
    expect([forged.status, forged.json.errcode]).toEqual([401, "M_UNAUTHORIZED"]);
  });

  it("send_join (v1 and v2) and send_leave with such a value: 400 M_BAD_JSON, nothing stored", async () => {
    const carol = `@carol:${b.serverName}`;
    const join = await completed(carol, "join");
    for (const [version, number] of [["v2", "1.1"], ["v1", "1.1"], ["v2", BIG]] as const) {
      const res = await rawSignedPut(signerOf(b), a, `${FED}/${version}/send_join/${enc(roomId)}/${enc(join.eventId)}`, withBadValue(join.pdu, number));
      expect([res.status, res.json.errcode], `${version} ${number}`).toEqual([400, "M_BAD_JSON"]);
    }
    expect(await a.hs.services.rooms.store.membership(roomId, carol)).toBeUndefined();
    // The leave of a member, with a float in a field of its own (not its content).
    const leave = await completed(bobId, "leave");
    for (const version of ["v1", "v2"]) {
      const res = await rawSignedPut(signerOf(b), a, `${FED}/${version}/send_leave/${enc(roomId)}/xxx`, withBadValue(leave.pdu, "1.1", "event"));
      expect([res.status, res.json.errcode], version).toEqual([400, "M_BAD_JSON"]);
    }
    expect((await a.hs.services.rooms.store.membership(roomId, bobId))?.membership).toBe("join");
  });

  it("an invite with such a value: 400 M_BAD_JSON, nothing stored", async () => {
    const dora = await registerUser(a, "dora");
    const theirs = await createRoom(b, await registerUser(b, "erin"), { preset: "private_chat", room_version: "6" });
    const erinId = `@erin:${b.serverName}`;
    const invite = await eventOnRoom(b.hs.services, theirs, signerOf(b), { type: "m.room.member", stateKey: dora.user_id, sender: erinId, content: { membership: "invite" } });
    const text = `{"event":${withBadValue(invite.pdu, "1.1")},"invite_room_state":[],"room_version":"6"}`;
    const res = await rawSignedPut(signerOf(b), a, `${FED}/v2/invite/${enc(theirs)}/${enc(invite.eventId)}`, text);
    expect([res.status, res.json.errcode]).toEqual([400, "M_BAD_JSON"]);
    expect(await a.hs.services.rooms.store.membership(theirs, dora.user_id)).toBeUndefined();
  });

  it("an invite the invitee's server answers with such a value: the client's 400 M_BAD_JSON, the invite not kept", async () => {
    fake.handler = (req) => {
      if (req.method === "PUT" && req.path.startsWith(`${FED}/v2/invite/`)) {
        const event = (req.body as { event: Record<string, unknown> }).event;
        return { status: 200, json: { event: { ...event, bad_val: 1.1 } } };
      }
      return undefined;
    };
    const mine = await createRoom(a, alice, { preset: "private_chat", room_version: "6" });
    const invitee = fake.user("frank");
    const res = await a.call("POST", `${V3}/rooms/${enc(mine)}/invite`, { token: alice.access_token, body: { user_id: invitee } });
    expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([400, "M_BAD_JSON"]);
    expect(fake.requests.some((r) => r.path.startsWith(`${FED}/v2/invite/`))).toBe(true);
    expect(await a.hs.services.rooms.store.membership(mine, invitee)).toBeUndefined();
  });
});
