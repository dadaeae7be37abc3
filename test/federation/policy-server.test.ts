// Policy Servers (spec v1.18, MSC4284), the homeserver's side, on SQLite and PostgreSQL and beside a live
// Synapse 1.163. A scripted policy server (a fake origin with its own `ed25519:policy_server` key,
// published in m.room.policy) joins the room through make_join / send_join with one user, then judges
// every POST /_matrix/policy/v1/sign: a body mentioning "spam" is refused with 400 M_FORBIDDEN (and an
// extra field), anything else is signed — or, as the test says, signed with another key, or answered
// with no signature. Local sends: a signed message carries the signature (read back over federation), a
// refused one gets the policy server's error verbatim and is stored nowhere, a bad or missing signature is
// 403 M_FORBIDDEN, an unreachable policy server 500 M_UNKNOWN (Synapse's answers); m.room.policy itself is
// never sent to it; a room whose `via` has no joined user asks nobody. Weft only: membership, redactions
// and invites are signed too (Synapse asks only for events of its non-member path), the unstable
// `org.matrix.msc4284.policy` event and /sign path, this server as `via`, and events received from a
// second scripted server: without the policy server's signature they are asked about, soft-failed on a
// refusal (never in /sync or /messages, never a prev_event of the next local event) and accepted with
// the signature they get, which is stored and served with them; backfilled history alike.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, type JsonResponse } from "../helpers/server.ts";
import { startFederatedServer, type FederatedServer } from "../helpers/federation.ts";
import { startFakeOrigin, type FakeOrigin, type FakeRequest } from "../helpers/fake-origin.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { registerUser } from "../helpers/users.ts";
import { expectRequestMatchesSpec } from "../helpers/spec.ts";
import { eventually } from "../helpers/federation-peer.ts";
import { TestKeyRing } from "../helpers/dag.ts";
import { eventOnRoom, sendTransaction, signPdu, signedCall, syncUntil, type Signer } from "../helpers/by-hand.ts";
import { generateSigningKey, type SigningKey } from "../../src/domain/signing-key.ts";
import { eventSignature } from "../../src/domain/rooms/build-event.ts";
import { getRoomVersion } from "../../src/domain/rooms/room-versions.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";
import { authenticateRequest } from "../../src/domain/federation/request-auth.ts";
import { hasValidPolicySignature } from "../../src/domain/rooms/policy-server.ts";
import type { Pdu } from "../../src/domain/events/types.ts";

const V3 = "/_matrix/client/v3";
const FED = "/_matrix/federation";
const SIGN = "/_matrix/policy/v1/sign";
const UNSTABLE_SIGN = "/_matrix/policy/unstable/org.matrix.msc4284/sign";
const VERSION = "11";
const V = getRoomVersion(VERSION)!;
const enc = encodeURIComponent;
const SPAM_ERROR = "The message appears to contain possible spam";

/** A homeserver under test, Weft or Synapse, through its client and federation APIs. */
interface Home {
  serverName: string;
  fed: { baseUrl: string; serverName: string };
  signingKey: SigningKey;
  call(method: string, path: string, opts?: { body?: unknown; token?: string }): Promise<JsonResponse>;
  user(localpart: string): Promise<{ user_id: string; access_token: string }>;
}

/** The scripted policy server. */
interface PolicyServer {
  origin: FakeOrigin;
  /** Its policy key (`ed25519:policy_server`), the one m.room.policy names. */
  key: SigningKey;
  signer: Signer;
  userId: string;
  /** "judge": refuse "spam", sign the rest; "wrong-key": sign with another key; "empty": answer {}; "unstable-only": 404 on the stable path. */
  mode: "judge" | "wrong-key" | "empty" | "unstable-only";
  /** The /sign requests received (either path), for events of `roomId` if given. */
  signRequests(roomId?: string): FakeRequest[];
  /** The event ids the policy server was asked about. */
  askedAbout(roomId?: string): string[];
  /** Every PDU the homeserver sent it in transactions. */
  received(): Pdu[];
}

const isSpam = (pdu: Pdu) => JSON.stringify(pdu.content ?? {}).includes("spam");

async function startPolicyServer(): Promise<PolicyServer> {
  const key = generateSigningKey("policy_server");
  const wrongKey = generateSigningKey("policy_server");
  const origin = await startFakeOrigin();
  const ps: PolicyServer = {
    origin,
    key,
    signer: { serverName: origin.serverName, key: origin.key },
    userId: `@policy:${origin.serverName}`,
    mode: "judge",
    signRequests: (roomId) => origin.requests.filter((r) => r.method === "POST" && (r.path === SIGN || r.path === UNSTABLE_SIGN) && (roomId === undefined || (r.body as Pdu).room_id === roomId)),
    askedAbout: (roomId) => ps.signRequests(roomId).map((r) => eventIdOf(r.body as Pdu, VERSION)),
    received: () => origin.requests.filter((r) => r.method === "PUT" && r.path.startsWith(`${FED}/v1/send/`)).flatMap((r) => (r.body as { pdus: Pdu[] }).pdus),
  };
  origin.handler = (req) => {
    if (req.method === "PUT" && req.path.startsWith(`${FED}/v1/send/`)) return { status: 200, json: { pdus: {} } };
    if (req.method !== "POST" || (req.path !== SIGN && req.path !== UNSTABLE_SIGN)) return undefined;
    if (ps.mode === "unstable-only" && req.path === SIGN) return undefined; // 404 M_UNRECOGNIZED
    const pdu = req.body as Pdu;
    if (ps.mode === "empty") return { status: 200, json: {} };
    if (isSpam(pdu)) return { status: 400, json: { errcode: "M_FORBIDDEN", error: SPAM_ERROR, "org.example.verdict": "spam" } };
    const signature = eventSignature(pdu, V, { serverName: origin.serverName, key: ps.mode === "wrong-key" ? wrongKey : key });
    return { status: 200, json: { [origin.serverName]: { "ed25519:policy_server": signature } } };
  };
  return ps;
}

/** A user of `signer`'s server joins `roomId` on `home` through make_join / send_join v2, as its server would. */
async function joinThroughHandshake(home: Home, signer: Signer, roomId: string, userId: string): Promise<string> {
  const t = await signedCall(signer, home.fed, "GET", `${FED}/v1/make_join/${enc(roomId)}/${enc(userId)}?ver=${VERSION}`);
  expect(t.status, JSON.stringify(t.json)).toBe(200);
  const join = signPdu({ ...t.json.event, origin_server_ts: Date.now() } as Pdu, t.json.room_version, signer);
  const res = await signedCall(signer, home.fed, "PUT", `${FED}/v2/send_join/${enc(roomId)}/${enc(join.eventId)}`, join.pdu);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return join.eventId;
}

const policyContent = (ps: PolicyServer) => ({ via: ps.origin.serverName, public_keys: { ed25519: ps.key.publicKeyBase64 } });

async function putState(home: Home, token: string, roomId: string, type: string, stateKey: string, content: unknown): Promise<JsonResponse> {
  return home.call("PUT", `${V3}/rooms/${enc(roomId)}/state/${enc(type)}/${enc(stateKey)}`, { token, body: content });
}

/** A room of `owner` on `home`, public, with `ps`'s user joined (unless `join: false`) and m.room.policy naming it. */
async function policyRoom(home: Home, owner: { access_token: string }, ps: PolicyServer, opts: { join?: boolean } = {}): Promise<string> {
  const created = await home.call("POST", `${V3}/createRoom`, { token: owner.access_token, body: { preset: "public_chat", room_version: VERSION } });
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  const roomId = created.json.room_id as string;
  if (opts.join !== false) await joinThroughHandshake(home, ps.signer, roomId, ps.userId);
  const set = await putState(home, owner.access_token, roomId, "m.room.policy", "", policyContent(ps));
  expect(set.status, JSON.stringify(set.json)).toBe(200);
  return roomId;
}

let txn = 0;
function say(home: Home, token: string, roomId: string, body: string): Promise<JsonResponse> {
  return home.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/p${Date.now()}-${++txn}`, { token, body: { msgtype: "m.text", body } });
}

/** The bodies of the latest messages of `roomId` as `token`'s user reads them (/messages, backwards). */
async function messageBodies(home: Home, token: string, roomId: string): Promise<string[]> {
  const res = await home.call("GET", `${V3}/rooms/${enc(roomId)}/messages?dir=b&limit=100`, { token });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return (res.json.chunk as { type: string; content: { body?: string } }[]).filter((e) => e.type === "m.room.message").map((e) => e.content.body!);
}

/** An event of `home` as another server reads it (GET /event, signed by the policy server: a member). */
async function overFederation(home: Home, ps: PolicyServer, eventId: string): Promise<Pdu> {
  const res = await signedCall(ps.signer, home.fed, "GET", `${FED}/v1/event/${enc(eventId)}`);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.pdus[0] as Pdu;
}

interface LocalScenario {
  home: Home;
  owner: { user_id: string; access_token: string };
  ps: PolicyServer;
  roomId: string;
  /** A room whose policy server no longer answers. */
  downRoomId: string;
  /** Weft only: the rows stored in the room holding `text`. */
  storedWith?: (roomId: string, text: string) => Promise<number>;
}

/** The local-send cases, the same against Weft and against Synapse. */
function localSendCases(ctx: () => LocalScenario): void {
  it("a local message is signed by the policy server (a signed request with the full PDU); the stored event carries the signature", async () => {
    const { home, owner, ps, roomId } = ctx();
    const res = await say(home, owner.access_token, roomId, "hello, policed room");
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const eventId = res.json.event_id as string;
    const asked = ps.signRequests(roomId).filter((r) => eventIdOf(r.body as Pdu, VERSION) === eventId);
    expect(asked).toHaveLength(1);
    const req = asked[0]!;
    expect(req.path).toBe(SIGN);
    expectRequestMatchesSpec(req.body, "POST", SIGN);
    // The full PDU, signed by its origin (hashes, signatures, auth and prev events).
    const body = req.body as Pdu;
    expect(body).toMatchObject({ type: "m.room.message", sender: owner.user_id, room_id: roomId, content: { body: "hello, policed room" } });
    expect(Object.keys(body.signatures?.[home.serverName] ?? {})).toHaveLength(1);
    expect(body.hashes?.sha256).toEqual(expect.any(String));
    // A federation request signed by the homeserver (X-Matrix), checked as the policy server would.
    const origin = await authenticateRequest(
      { serverName: ps.origin.serverName, keyRing: new TestKeyRing().add(home.serverName, home.signingKey), now: Date.now() },
      { method: "POST", uri: SIGN, authorization: [req.authorization ?? ""], content: req.body },
    );
    expect(origin).toBe(home.serverName);
    // Served to other servers with the policy server's signature beside the origin's.
    const served = await overFederation(home, ps, eventId);
    expect(hasValidPolicySignature(served, V, { via: ps.origin.serverName, publicKey: ps.key.publicKeyBase64 })).toBe(true);
    expect(Object.keys(served.signatures![home.serverName]!)).toEqual(Object.keys(body.signatures![home.serverName]!));
    expect(await messageBodies(home, owner.access_token, roomId)).toContain("hello, policed room");
  });

  it("a refused message: the policy server's errcode and error reach the client verbatim; nothing is stored or shown", async () => {
    const { home, owner, ps, roomId, storedWith } = ctx();
    const before = ps.signRequests(roomId).length;
    const res = await say(home, owner.access_token, roomId, "buy spam now");
    expect([res.status, res.json]).toEqual([400, { errcode: "M_FORBIDDEN", error: SPAM_ERROR, "org.example.verdict": "spam" }]);
    expect(ps.signRequests(roomId)).toHaveLength(before + 1);
    // A state event alike.
    const topic = await putState(home, owner.access_token, roomId, "m.room.topic", "", { topic: "spam topic" });
    expect([topic.status, topic.json.errcode, topic.json.error]).toEqual([400, "M_FORBIDDEN", SPAM_ERROR]);
    const after = await say(home, owner.access_token, roomId, "after the refusal");
    expect(after.status).toBe(200);
    expect(await messageBodies(home, owner.access_token, roomId)).not.toContain("buy spam now");
    const sync = await home.call("GET", `${V3}/sync?timeout=0&filter=${enc(JSON.stringify({ room: { timeline: { limit: 50 } } }))}`, { token: owner.access_token });
    const timeline = sync.json.rooms.join[roomId].timeline.events as { content: { body?: string; topic?: string } }[];
    expect(timeline.map((e) => e.content.body)).toContain("after the refusal");
    expect(timeline.some((e) => e.content.body === "buy spam now" || e.content.topic === "spam topic")).toBe(false);
    if (storedWith) expect(await storedWith(roomId, "spam")).toBe(0);
    // Nothing went to the policy server's own copy of the room either.
    expect(ps.received().some((p) => isSpam(p))).toBe(false);
  });

  it("a signature by another key, or none: 403 M_FORBIDDEN, nothing stored", async () => {
    const { home, owner, ps, roomId, storedWith } = ctx();
    try {
      ps.mode = "wrong-key";
      const wrong = await say(home, owner.access_token, roomId, "signed by the wrong key");
      expect([wrong.status, wrong.json]).toEqual([403, { errcode: "M_FORBIDDEN", error: "This message has been rejected as probable spam" }]);
      ps.mode = "empty";
      const none = await say(home, owner.access_token, roomId, "signed by nobody");
      expect([none.status, none.json]).toEqual([403, { errcode: "M_FORBIDDEN", error: "This event has been rejected as probable spam by the policy server" }]);
    } finally {
      ps.mode = "judge";
    }
    const bodies = await messageBodies(home, owner.access_token, roomId);
    expect(bodies).not.toContain("signed by the wrong key");
    expect(bodies).not.toContain("signed by nobody");
    if (storedWith) expect(await storedWith(roomId, "signed by")).toBe(0);
  });

  it("the policy server unreachable: 500 M_UNKNOWN (as Synapse), nothing stored", async () => {
    const { home, owner, downRoomId, storedWith } = ctx();
    const res = await say(home, owner.access_token, downRoomId, "nobody checks this");
    expect([res.status, res.json.errcode], JSON.stringify(res.json)).toEqual([500, "M_UNKNOWN"]);
    expect(await messageBodies(home, owner.access_token, downRoomId)).not.toContain("nobody checks this");
    if (storedWith) expect(await storedWith(downRoomId, "nobody checks this")).toBe(0);
  }, 60_000);

  it("m.room.policy (empty state key) is never sent to the policy server; an m.room.policy with another state key is", async () => {
    const { home, owner, ps, roomId } = ctx();
    const changed = await putState(home, owner.access_token, roomId, "m.room.policy", "", { ...policyContent(ps), note: "same server" });
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    expect(ps.signRequests(roomId).some((r) => (r.body as Pdu).type === "m.room.policy" && (r.body as Pdu).state_key === "")).toBe(false);
    const other = await putState(home, owner.access_token, roomId, "m.room.policy", "elsewhere", { via: "example.org" });
    expect(other.status, JSON.stringify(other.json)).toBe(200);
    expect(ps.askedAbout(roomId)).toContain(other.json.event_id);
  });

  it("an m.room.policy that is not valid names no policy server: nobody is asked", async () => {
    const { home, owner, ps, roomId } = ctx();
    const key = ps.key.publicKeyBase64;
    const via = ps.origin.serverName;
    const invalid = [{}, { via }, { via, public_keys: [key] }, { via, public_keys: { ed25519: 42 } }, { via: 42, public_keys: { ed25519: key } }, { via: "not a server name!", public_keys: { ed25519: key } }, { via, public_key: key }];
    try {
      for (const content of invalid) {
        const set = await putState(home, owner.access_token, roomId, "m.room.policy", "", content);
        expect(set.status, JSON.stringify(set.json)).toBe(200);
        const before = ps.signRequests(roomId).length;
        const res = await say(home, owner.access_token, roomId, "spam nobody checks");
        expect(res.status, `${JSON.stringify(content)}: ${JSON.stringify(res.json)}`).toBe(200);
        expect(ps.signRequests(roomId), JSON.stringify(content)).toHaveLength(before);
      }
    } finally {
      const back = await putState(home, owner.access_token, roomId, "m.room.policy", "", policyContent(ps));
      expect(back.status).toBe(200);
    }
    expect((await say(home, owner.access_token, roomId, "more spam")).status).toBe(400);
  });

  it("a room whose via server has no joined user: the policy server is not asked", async () => {
    const { home, owner, ps } = ctx();
    const roomId = await policyRoom(home, owner, ps, { join: false });
    const res = await say(home, owner.access_token, roomId, "no policy server here");
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(ps.signRequests(roomId)).toEqual([]);
  });
}

describe.each(backends())("policy servers on Weft (%s)", (backend) => {
  let t: FederatedServer;
  let ps: PolicyServer;
  let downPs: PolicyServer;
  let home: Home;
  let alice: { user_id: string; access_token: string };
  let roomId: string;
  let downRoomId: string;

  beforeAll(async () => {
    [t, ps, downPs] = await Promise.all([startFederatedServer({ backend }), startPolicyServer(), startPolicyServer()]);
    home = {
      serverName: t.serverName,
      fed: { baseUrl: t.baseUrl, serverName: t.serverName },
      signingKey: t.hs.services.signingKeys[0]!,
      call: (m, p, o) => t.call(m, p, o),
      user: (l) => registerUser(t, l),
    };
    alice = await home.user("alice");
    roomId = await policyRoom(home, alice, ps);
    downRoomId = await policyRoom(home, alice, downPs);
    await downPs.origin.close();
  }, 60_000);
  afterAll(async () => {
    await Promise.all([t?.close(), ps?.origin.close()]);
  });

  const storedWith = async (room: string, text: string) => {
    const rows = await t.hs.services.storage.sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM events WHERE room_id = ? AND json LIKE ?`, [room, `%${text}%`]);
    return Number(rows[0]!.n);
  };
  localSendCases(() => ({ home, owner: alice, ps, roomId, downRoomId, storedWith }));

  it("membership changes, redactions and invites are signed too (Synapse asks only on its non-member path)", async () => {
    const bob = await home.user("bob");
    const invited = await t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: bob.user_id } });
    expect(invited.status, JSON.stringify(invited.json)).toBe(200);
    const joined = await t.call("POST", `${V3}/join/${enc(roomId)}`, { token: bob.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const msg = await say(home, bob.access_token, roomId, "to be redacted");
    const redacted = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/redact/${enc(msg.json.event_id)}/r${Date.now()}`, { token: bob.access_token, body: {} });
    expect(redacted.status, JSON.stringify(redacted.json)).toBe(200);
    const asked = ps.signRequests(roomId).map((r) => r.body as Pdu);
    expect(asked.some((p) => p.type === "m.room.member" && p.state_key === bob.user_id && p.content.membership === "invite")).toBe(true);
    expect(asked.some((p) => p.type === "m.room.member" && p.state_key === bob.user_id && p.content.membership === "join")).toBe(true);
    expect(ps.askedAbout(roomId)).toContain(redacted.json.event_id);
    // An invite of a user of another server: signed before the invitee's server sees it.
    const invitee = await startFakeOrigin((req) => (req.path.startsWith(`${FED}/v2/invite/`) ? { status: 200, json: { event: signPdu((req.body as { event: Pdu }).event, VERSION, { serverName: inviteeName, key: invitee.key }).pdu } } : { status: 200, json: { pdus: {} } }));
    const inviteeName = invitee.serverName;
    try {
      const remote = await t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: `@carol:${inviteeName}` } });
      expect(remote.status, JSON.stringify(remote.json)).toBe(200);
      const sent = invitee.requests.find((r) => r.path.startsWith(`${FED}/v2/invite/`))!.body as { event: Pdu };
      expect(hasValidPolicySignature(sent.event, V, { via: ps.origin.serverName, publicKey: ps.key.publicKeyBase64 })).toBe(true);
      // A refused invite reaches no one.
      const spamInvite = await t.call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: `@dave:${inviteeName}`, reason: "spam" } });
      expect([spamInvite.status, spamInvite.json.errcode, spamInvite.json.error]).toEqual([400, "M_FORBIDDEN", SPAM_ERROR]);
      expect(invitee.requests.filter((r) => r.path.startsWith(`${FED}/v2/invite/`))).toHaveLength(1);
    } finally {
      await invitee.close();
    }
  });

  it("the unstable org.matrix.msc4284.policy (public_key) is read when there is no m.room.policy, and the unstable /sign path asked when the stable one is unknown", async () => {
    const created = await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "public_chat", room_version: VERSION } });
    const room = created.json.room_id as string;
    await joinThroughHandshake(home, ps.signer, room, ps.userId);
    const set = await putState(home, alice.access_token, room, "org.matrix.msc4284.policy", "", { via: ps.origin.serverName, public_key: ps.key.publicKeyBase64 });
    expect(set.status).toBe(200);
    expect(ps.signRequests(room)).toEqual([]);
    try {
      ps.mode = "unstable-only";
      const res = await say(home, alice.access_token, room, "through the unstable path");
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const paths = ps.signRequests(room).filter((r) => eventIdOf(r.body as Pdu, VERSION) === res.json.event_id).map((r) => r.path);
      expect(paths).toEqual([SIGN, UNSTABLE_SIGN]);
      const stored = (await t.hs.services.rooms.events.get(res.json.event_id))!;
      expect(hasValidPolicySignature(stored.pdu, V, { via: ps.origin.serverName, publicKey: ps.key.publicKeyBase64 })).toBe(true);
    } finally {
      ps.mode = "judge";
    }
    // A stable m.room.policy present but invalid means no policy server (the unstable one is not read then).
    const invalid = await putState(home, alice.access_token, room, "m.room.policy", "", { via: ps.origin.serverName });
    expect(invalid.status).toBe(200);
    const before = ps.signRequests(room).length;
    expect((await say(home, alice.access_token, room, "buy spam, unpoliced")).status).toBe(200);
    expect(ps.signRequests(room)).toHaveLength(before);
  });

  it("this server as via: it never asks itself", async () => {
    const created = await t.call("POST", `${V3}/createRoom`, { token: alice.access_token, body: { preset: "public_chat", room_version: VERSION } });
    const room = created.json.room_id as string;
    const set = await putState(home, alice.access_token, room, "m.room.policy", "", { via: t.serverName, public_keys: { ed25519: ps.key.publicKeyBase64 } });
    expect(set.status).toBe(200);
    expect((await say(home, alice.access_token, room, "spam, but we are the policy server")).status).toBe(200);
  });

  describe("events received from another server", () => {
    let other: FakeOrigin;
    let otherSigner: Signer;
    let mallory: string;
    const psInfo = () => ({ via: ps.origin.serverName, publicKey: ps.key.publicKeyBase64 });

    beforeAll(async () => {
      other = await startFakeOrigin((req) => (req.method === "PUT" && req.path.startsWith(`${FED}/v1/send/`) ? { status: 200, json: { pdus: {} } } : undefined));
      otherSigner = { serverName: other.serverName, key: other.key };
      mallory = `@mallory:${other.serverName}`;
    });
    afterAll(async () => {
      await other?.close();
    });

    /** A message of mallory's built on the room as Weft has it now. */
    const built = (body: string) => eventOnRoom(t.hs.services, roomId, otherSigner, { type: "m.room.message", sender: mallory, content: { msgtype: "m.text", body } });

    it("a send_join without the policy server's signature is asked about, and stored with the one it gets", async () => {
      const joinId = await joinThroughHandshake(home, otherSigner, roomId, mallory);
      expect(ps.askedAbout(roomId)).toContain(joinId);
      const stored = (await t.hs.services.rooms.events.get(joinId))!;
      expect(stored.softFailed).toBe(false);
      expect(hasValidPolicySignature(stored.pdu, V, psInfo())).toBe(true);
      expect(Object.keys(stored.pdu.signatures![other.serverName]!)).toEqual([other.key.keyId]);
    });

    it("an event the policy server refuses is soft-failed: stored, not in /sync or /messages, not built upon", async () => {
      const spam = await built("cheap spam for everyone");
      const res = await sendTransaction(otherSigner, home.fed, [spam.pdu]);
      expect([res.status, res.json.pdus[spam.eventId]], JSON.stringify(res.json)).toEqual([200, {}]);
      expect(ps.askedAbout(roomId)).toContain(spam.eventId);
      const stored = (await t.hs.services.rooms.events.get(spam.eventId))!;
      expect([stored.softFailed, stored.rejectedReason]).toEqual([true, null]);
      // Not redacted: kept as received.
      expect(stored.pdu.content).toEqual(spam.pdu.content);
      const next = await say(home, alice.access_token, roomId, "after mallory's junk");
      expect(next.status).toBe(200);
      const mine = (await t.hs.services.rooms.events.get(next.json.event_id))!;
      expect(mine.pdu.prev_events).not.toContain(spam.eventId);
      const seen = await syncUntil(t, alice.access_token, roomId, (evs) => evs.some((e) => e.event_id === next.json.event_id));
      expect(seen.map((e) => e.event_id)).not.toContain(spam.eventId);
      expect(await messageBodies(home, alice.access_token, roomId)).not.toContain("cheap spam for everyone");
    });

    it("an event without the signature that the policy server signs when asked is accepted, stored and served with it", async () => {
      const ok = await built("a fair question");
      expect(ok.pdu.signatures![ps.origin.serverName]).toBeUndefined();
      const res = await sendTransaction(otherSigner, home.fed, [ok.pdu]);
      expect(res.json.pdus[ok.eventId], JSON.stringify(res.json)).toEqual({});
      expect(ps.askedAbout(roomId)).toContain(ok.eventId);
      const seen = await syncUntil(t, alice.access_token, roomId, (evs) => evs.some((e) => e.event_id === ok.eventId));
      expect(seen.find((e) => e.event_id === ok.eventId)!.content.body).toBe("a fair question");
      const stored = (await t.hs.services.rooms.events.get(ok.eventId))!;
      expect(stored.softFailed).toBe(false);
      expect(hasValidPolicySignature(await overFederation(home, ps, ok.eventId), V, psInfo())).toBe(true);
    });

    it("an event already carrying a valid signature is not asked about; one with a bad signature is asked again", async () => {
      const signed = await built("signed beforehand");
      signed.pdu.signatures![ps.origin.serverName] = { "ed25519:policy_server": eventSignature(signed.pdu, V, { serverName: ps.origin.serverName, key: ps.key }) };
      const forged = await built("signed by some other key");
      forged.pdu.signatures![ps.origin.serverName] = { "ed25519:policy_server": eventSignature(forged.pdu, V, { serverName: ps.origin.serverName, key: generateSigningKey("policy_server") }) };
      const res = await sendTransaction(otherSigner, home.fed, [signed.pdu, forged.pdu]);
      expect(res.json.pdus, JSON.stringify(res.json)).toEqual({ [signed.eventId]: {}, [forged.eventId]: {} });
      expect(ps.askedAbout(roomId)).not.toContain(signed.eventId);
      expect(ps.askedAbout(roomId)).toContain(forged.eventId);
      const stored = await t.hs.services.rooms.events.getMany([signed.eventId, forged.eventId]);
      for (const id of [signed.eventId, forged.eventId]) {
        expect(stored.get(id)!.softFailed).toBe(false);
        expect(hasValidPolicySignature(stored.get(id)!.pdu, V, psInfo())).toBe(true);
      }
      await syncUntil(t, alice.access_token, roomId, (evs) => [signed.eventId, forged.eventId].every((id) => evs.some((e) => e.event_id === id)));
    });

    it("backfilled history is checked the same way (fetched events enter through the same planner)", async () => {
      const [spam, fair] = [await built("backfilled spam"), await built("backfilled history")];
      const outcomes = await receiveRemoteEvents(t.hs.services, roomId, [{ pdu: spam.pdu }, { pdu: fair.pdu }], { backfill: true });
      expect(outcomes).toEqual([
        { status: "soft_failed", eventId: spam.eventId, reason: "Not recommended by the room's policy server", rule: "policy_server" },
        { status: "accepted", eventId: fair.eventId },
      ]);
      expect(ps.askedAbout(roomId)).toEqual(expect.arrayContaining([spam.eventId, fair.eventId]));
      expect(hasValidPolicySignature((await t.hs.services.rooms.events.get(fair.eventId))!.pdu, V, psInfo())).toBe(true);
      const bodies = await messageBodies(home, alice.access_token, roomId);
      expect(bodies).not.toContain("backfilled spam");
    });

    it("the policy server's signature on a local event travels with it to the room's other servers", async () => {
      const res = await say(home, alice.access_token, roomId, "to every server");
      const sent = await eventually(() => other.requests.filter((r) => r.path.startsWith(`${FED}/v1/send/`)).flatMap((r) => (r.body as { pdus: Pdu[] }).pdus).find((p) => eventIdOf(p, VERSION) === res.json.event_id), "the event sent to the other server");
      expect(hasValidPolicySignature(sent, V, psInfo())).toBe(true);
    });
  });
});

describe("policy servers on a live Synapse (the homeserver)", () => {
  let syn: SynapseServer;
  let ps: PolicyServer;
  let downPs: PolicyServer;
  let home: Home;
  let alice: { user_id: string; access_token: string };
  let roomId: string;
  let downRoomId: string;

  beforeAll(async () => {
    [syn, ps, downPs] = await Promise.all([startSynapse(), startPolicyServer(), startPolicyServer()]);
    home = {
      serverName: syn.serverName,
      fed: { baseUrl: syn.federationUrl, serverName: syn.serverName },
      signingKey: syn.signingKey,
      call: (m, p, o) => syn.call(m, p, o),
      user: (l) => syn.register(l),
    };
    alice = await home.user("alice");
    roomId = await policyRoom(home, alice, ps);
    downRoomId = await policyRoom(home, alice, downPs);
    await downPs.origin.close();
  }, 180_000);
  afterAll(async () => {
    await Promise.all([syn?.close(), ps?.origin.close()]);
  });

  localSendCases(() => ({ home, owner: alice, ps, roomId, downRoomId }));
});
