// Hostile servers, signing keys (issue 40): a hostile server whose key document claims validity for ten
// years (trusted 7 days at most: from room version 5 an event signed after that does not verify, while
// versions 1–4 ignore key validity), one that signs with a key whose document already expired (dropped in v10, taken in v4, as Synapse), a
// notary (configured trusted key server) that answers for the hostile server with a key the document's
// self-signature does not match, and one that lies consistently (a key the server does not serve, the
// document self-signed by it and countersigned by the notary). Judged by alice's timeline. SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../../helpers/federation.ts";
import { registerUser, type Session } from "../../helpers/users.ts";
import { createRoom } from "../../helpers/rooms.ts";
import { memberView, startHostileServer, type HostileServer } from "../../helpers/hostile-server.ts";
import { startFakeOrigin, type FakeOrigin } from "../../helpers/fake-origin.ts";
import { generateSigningKey } from "../../../src/domain/signing-key.ts";
import { buildServerKeysResponse } from "../../../src/domain/keys/server-keys.ts";
import { signJson } from "../../../src/domain/signing.ts";
import { eventually } from "../../helpers/federation-peer.ts";

const DAY = 86_400_000;

describe.each(backends())("hostile signing keys on %s", (backend) => {
  let a: FederatedServer;
  let notary: FakeOrigin;
  let alice: Session;
  /** Servers the notary lies about: the key it claims for each. */
  const lies = new Map<string, () => unknown>();
  const hostiles: HostileServer[] = [];

  beforeAll(async () => {
    notary = await startFakeOrigin((req) => {
      if (req.method !== "POST" || req.path !== "/_matrix/key/v2/query") return undefined;
      const asked = Object.keys((req.body as { server_keys: Record<string, unknown> }).server_keys);
      const docs = asked.filter((n) => lies.has(n)).map((n) => signJson(lies.get(n)!() as object, notary.serverName, notary.key));
      return { status: 200, json: { server_keys: docs } };
    });
    a = await startFederatedServer({ backend, config: { trusted_key_servers: [{ server_name: notary.serverName, verify_keys: { [notary.key.keyId]: notary.key.publicKeyBase64 } }] } });
    alice = await registerUser(a, "alice");
  });
  afterAll(async () => {
    await Promise.all([a?.close(), notary?.close(), ...hostiles.map((h) => h.close())]);
  });

  async function hostile(): Promise<HostileServer> {
    const h = await startHostileServer(a);
    hostiles.push(h);
    return h;
  }
  async function room(h: HostileServer, version: string): Promise<string> {
    const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: version });
    await h.join(roomId, "mallory");
    return roomId;
  }
  const timeline = async (roomId: string) => (await memberView(a, alice.access_token, roomId)).timeline;

  it("a key claimed valid for ten years is trusted for 7 days: an event signed 8 days ahead is dropped in v10, taken in v4", async () => {
    const h = await hostile();
    h.keyDocument = () => buildServerKeysResponse({ serverName: h.serverName, keys: [h.key], validityMs: 3650 * DAY });
    const [v10, v4] = [await room(h, "10"), await room(h, "4")];
    const stored = await a.hs.services.keyRing.verifyKey(h.serverName, h.key.keyId, Date.now() + 8 * DAY);
    expect(stored, "not trusted 8 days ahead").toBeUndefined();
    for (const [roomId, kept] of [[v10, false], [v4, true]] as const) {
      const m = await h.craft(roomId, { type: "m.room.message", sender: h.user("mallory"), content: { msgtype: "m.text", body: "from the future" }, originServerTs: Date.now() + 8 * DAY });
      const res = await h.send([m.pdu]);
      expect(res.json.pdus[m.eventId].error === undefined, `kept in ${roomId}`).toBe(kept);
      expect((await timeline(roomId)).includes(m.eventId)).toBe(kept);
    }
  });

  it("a key whose document expired before the event: the event is dropped in v10, taken in v4 (which ignores key validity)", async () => {
    const h = await hostile();
    const [v10, v4] = [await room(h, "10"), await room(h, "4")];
    const stale = generateSigningKey("stale");
    h.keyDocument = () => signJson(buildServerKeysResponse({ serverName: h.serverName, keys: [h.key, stale], validityMs: 1000, now: Date.now() - DAY }), h.serverName, stale);
    const signer = { serverName: h.serverName, key: stale };
    // Weft fetches the new document (its refetch floor after the joins' fetch passed) and keeps the
    // expired key: good for v1–v4 events (as Synapse: minimum_valid_until_ts 0 without
    // enforce_key_validity), not for an event signed after its validity.
    await eventually(() => a.hs.services.keyRing.verifyKey(h.serverName, stale.keyId, 0), "the expired key held", 30_000);
    expect(await a.hs.services.keyRing.verifyKey(h.serverName, stale.keyId, Date.now())).toBeUndefined();
    for (const [roomId, kept] of [[v10, false], [v4, true]] as const) {
      const m = await h.craft(roomId, { type: "m.room.message", sender: h.user("mallory"), content: { msgtype: "m.text", body: "with an expired key" } }, { signer });
      const res = await h.send([m.pdu]);
      expect(res.json.pdus[m.eventId].error === undefined, `kept in ${roomId}`).toBe(kept);
      expect((await timeline(roomId)).includes(m.eventId)).toBe(kept);
    }
  });

  it("a notary's key for the server that the server's own signature does not match: ignored, the server's own key used", async () => {
    const h = await hostile();
    const fake = generateSigningKey(h.key.keyId.slice("ed25519:".length));
    // The notary lists the fake public key under the server's key id, with the server's real self-signature.
    lies.set(h.serverName, () => {
      const honest = buildServerKeysResponse({ serverName: h.serverName, keys: [h.key], validityMs: DAY }) as unknown as Record<string, any>;
      return { ...honest, verify_keys: { [h.key.keyId]: { key: fake.publicKeyBase64 } } };
    });
    const roomId = await room(h, "10");
    const honest = await h.craft(roomId, { type: "m.room.message", sender: h.user("mallory"), content: { msgtype: "m.text", body: "really mine" } });
    const forged = await h.craft(roomId, { type: "m.room.message", sender: h.user("mallory"), content: { msgtype: "m.text", body: "signed by the notary's key" } }, { signer: { serverName: h.serverName, key: fake } });
    expect((await h.send([honest.pdu])).json).toEqual({ pdus: { [honest.eventId]: {} } });
    expect((await h.send([forged.pdu])).json.pdus[forged.eventId].error).toBeDefined();
    const t = await timeline(roomId);
    expect(t).toContain(honest.eventId);
    expect(t).not.toContain(forged.eventId);
  });

  it("a notary lying consistently (a key id the server does not serve, self-signed by that key): trusted, as Synapse trusts its trusted_key_servers", async () => {
    const h = await hostile();
    const ghost = generateSigningKey("ghost");
    lies.set(h.serverName, () => signJson(buildServerKeysResponse({ serverName: h.serverName, keys: [ghost], validityMs: DAY }), h.serverName, ghost));
    const roomId = await room(h, "10");
    // The server itself does not list the key (its document has its own key only); the notary vouches for it.
    await eventually(() => a.hs.services.keyRing.verifyKey(h.serverName, ghost.keyId, Date.now()), "the notary's key held", 30_000);
    const viaNotary = await h.craft(roomId, { type: "m.room.message", sender: h.user("mallory"), content: { msgtype: "m.text", body: "signed by the notary's word" } }, { signer: { serverName: h.serverName, key: ghost } });
    const own = await h.craft(roomId, { type: "m.room.message", sender: h.user("mallory"), content: { msgtype: "m.text", body: "signed by the server's own key" } });
    expect((await h.send([viaNotary.pdu, own.pdu])).json).toEqual({ pdus: { [viaNotary.eventId]: {}, [own.eventId]: {} } });
    const t = await timeline(roomId);
    expect(t).toContain(viaNotary.eventId);
    expect(t).toContain(own.eventId);
    lies.delete(h.serverName);
  });

  it("a notary lying consistently about the server's own key id, before Weft met the server: its key is taken first (Synapse's order), the server's own requests refused", async () => {
    const h = await hostile();
    const fake = generateSigningKey(h.key.keyId.slice("ed25519:".length));
    lies.set(h.serverName, () => signJson(buildServerKeysResponse({ serverName: h.serverName, keys: [fake], validityMs: DAY }), h.serverName, fake));
    try {
      const roomId = await createRoom(a, alice, { preset: "public_chat", room_version: "10" });
      const asked = notary.requests.length;
      const t = await h.call("GET", `/_matrix/federation/v1/make_join/${encodeURIComponent(roomId)}/${encodeURIComponent(h.user("mallory"))}?ver=10`);
      expect(t.status, JSON.stringify(t.json)).toBe(401);
      expect(notary.requests.length).toBeGreaterThan(asked);
      const held = await a.hs.services.serverKeys.forServer(h.serverName);
      expect(held.map((k) => [k.keyId, k.verifyKey, k.fromServer])).toEqual([[h.key.keyId, fake.publicKeyBase64, notary.serverName]]);
      const v = await memberView(a, alice.access_token, roomId);
      expect([...v.state.keys()].some((k) => k.includes(h.serverName))).toBe(false);
    } finally {
      lies.delete(h.serverName);
    }
  });
});
