// The federation sender against a recording peer (test/helpers/federation-peer.ts), on SQLite and
// PostgreSQL: a Weft server's local events reach the remote server of a room member as signed PUT /send
// transactions — in order, once, one transaction in flight, at most 50 PDUs and 100 EDUs each; events of
// rooms without that server are not sent; while the peer fails or is gone the events wait (the backoff
// visible in the destination's state), survive a restart of the Weft server, and all arrive once it is
// back (a transaction tried again keeps its txn id, across the restart too); typing, public read
// receipts (never private ones) and presence go as EDUs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import type { FederatedServer } from "../helpers/federation.ts";
import { startSenderRoom, type SenderRoom } from "../helpers/sender-room.ts";
import { createRoom } from "../helpers/rooms.ts";
import { eventually, type RecordingPeer } from "../helpers/federation-peer.ts";
import type { Session } from "../helpers/users.ts";
import { eventIdOf } from "../../src/domain/events/hashes.ts";
import type { Pdu } from "../../src/domain/events/types.ts";
import { verifyJsonSignature } from "../../src/domain/signing.ts";
import { redactEvent } from "../../src/domain/events/redaction.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;

describe.each(backends())("federation sender on %s", (backend) => {
  let a: FederatedServer;
  let peer: RecordingPeer;
  let alice: Session;
  let roomId: string;

  let w: SenderRoom;
  beforeAll(async () => {
    // Retries come fast here (Weft's defaults: 1 minute, doubling, at most a day).
    w = await startSenderRoom({ backend, config: { federation: { destination_min_retry_interval: 100, destination_max_retry_interval: 400 } } });
    ({ a, peer, alice, roomId } = w);
  });
  afterAll(() => w?.close());

  const send = (body: string, room?: string) => w.send(body, room);
  const idOf = (p: Pdu) => eventIdOf(p, "11");
  const receivedIds = () => peer.pdus().map(idOf);
  const received = (ids: string[]) => eventually(() => ids.every((id) => receivedIds().includes(id)), `${ids.length} events at the peer`);
  const state = () => a.hs.services.federationSender.describe(peer.serverName);

  it("sends local events to the room's remote server, signed, in order, once; never the peer's own join", async () => {
    const ids = [await send("one"), await send("two"), await send("three")];
    await received(ids);
    const got = receivedIds();
    expect(got.filter((id) => ids.includes(id))).toEqual(ids);
    expect(new Set(got).size).toBe(got.length);
    const pdu = peer.pdus().find((p) => idOf(p) === ids[0])!;
    expect(pdu).toMatchObject({ room_id: roomId, sender: alice.user_id, type: "m.room.message", content: { body: "one" } });
    const [keyId, sig] = Object.entries(pdu.signatures[a.serverName]!)[0]!;
    expect(sig).toBeTruthy();
    expect(verifyJsonSignature(redactEvent(pdu, "11") as unknown as Record<string, unknown>, a.serverName, keyId, a.hs.services.signingKeys[0]!.publicKeyObject)).toBe(true);
    expect(peer.pdus().every((p) => p.sender.endsWith(`:${a.serverName}`))).toBe(true);
    expect(peer.transactions.every((t) => t.origin === a.serverName)).toBe(true);
    expect(peer.refused).toBe(0);
  });

  it("sends nothing of a room the peer is not in", async () => {
    const lonely = await createRoom(a, alice, { preset: "public_chat" });
    const hidden = await send("not for the peer", lonely);
    // The queue is ordered: once a later event of the shared room arrived, the other would have too.
    const marker = await send("marker");
    await received([marker]);
    expect(receivedIds()).not.toContain(hidden);
    expect(peer.pdus().some((p) => p.room_id === lonely)).toBe(false);
  });

  it("a destination that fails is backed off (its state visible); once it answers, everything arrives once, in order", async () => {
    peer.mode = "failing";
    const before = peer.attempts;
    const ids = [await send("while down 1"), await send("while down 2"), await send("while down 3")];
    const down = await eventually(async () => {
      const st = await state();
      return st?.down && st.queuedPdus === 3 ? st : undefined;
    }, "the destination marked down with 3 PDUs queued");
    expect(down.retryInterval).toBeGreaterThanOrEqual(100);
    expect(down.retryInterval).toBeLessThanOrEqual(400);
    expect(down.failureTs).not.toBeNull();
    expect(down.nextAttemptTs).toBe(down.retryLastTs + down.retryInterval);
    // It keeps trying, spaced by the backoff.
    await eventually(() => peer.attempts >= before + 3, "three attempts");
    expect(receivedIds().filter((id) => ids.includes(id))).toEqual([]);

    peer.mode = "up";
    await received(ids);
    const got = receivedIds();
    expect(got.filter((id) => ids.includes(id))).toEqual(ids);
    expect(new Set(got).size).toBe(got.length);
    const up = await eventually(async () => {
      const st = await state();
      return st && !st.down && st.queuedPdus === 0 ? st : undefined;
    }, "the destination up with nothing queued");
    expect(up.failureTs).toBeNull();
    expect(up.lastSuccessTs).not.toBeNull();
  });

  it("events queued for a destination that is gone survive a restart of the sending server", async () => {
    await peer.stop();
    const ids = [await send("before restart 1"), await send("before restart 2")];
    await eventually(async () => (await state())?.down === true, "the destination marked down");
    await a.restart();
    expect((await state())?.queuedPdus).toBe(2);
    const after = await send("after restart");
    await peer.start();
    await received([...ids, after]);
    const got = receivedIds();
    expect(got.filter((id) => [...ids, after].includes(id))).toEqual([...ids, after]);
    expect(new Set(got).size).toBe(got.length);
  });

  it("a failed transaction goes again under its txn id, also after a restart of the sending server", async () => {
    peer.mode = "failing";
    const before = peer.attemptedTxnIds.length;
    const ids = [await send("same txn 1"), await send("same txn 2")];
    await eventually(async () => (await state())?.queuedPdus === 2 && peer.attemptedTxnIds.length >= before + 2, "two failed attempts with both PDUs queued");
    const tried = peer.attemptedTxnIds.slice(before);
    const last = tried.at(-1)!;
    await a.restart();
    const restartedAt = peer.attemptedTxnIds.length;
    peer.mode = "up";
    await received(ids);
    // The restarted server sent what was queued under the id its predecessor last tried: the peer, which
    // dedupes by origin and txn id, would have handled it once even had an earlier attempt gone through.
    const accepted = peer.transactions.find((t) => t.pdus.some((p) => idOf(p) === ids[0]))!;
    expect(accepted.txnId).toBe(last);
    expect(peer.attemptedTxnIds.slice(restartedAt)[0]).toBe(last);
  });

  it("batches: at most 50 PDUs and 100 EDUs a transaction, one transaction in flight, order kept", async () => {
    peer.mode = "failing";
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) ids.push(await send(`batch ${i}`));
    await eventually(async () => (await state())?.queuedPdus === 120, "120 PDUs queued");
    for (let n = 0; n < 150; n++) a.hs.services.federationSender.sendEdu([peer.serverName], { edu_type: "org.weft.test", content: { n } });
    const first = peer.transactions.length;
    peer.answerDelayMs = 30;
    peer.maxInFlight = 0;
    peer.mode = "up";
    await received(ids);
    await eventually(() => peer.edus().filter((e) => e.edu_type === "org.weft.test").length === 150, "150 EDUs");
    const txns = peer.transactions.slice(first);
    expect(txns.every((t) => t.pdus.length <= 50 && t.edus.length <= 100)).toBe(true);
    expect(txns.slice(0, 3).map((t) => t.pdus.length)).toEqual([50, 50, 20]);
    // The first transaction that carries them holds 100 of the 150 EDUs. (A retry composed before they
    // were queued may still reach the peer after it came up: that one carries PDUs only.)
    expect(txns.find((t) => t.edus.some((e) => e.edu_type === "org.weft.test"))!.edus.length).toBe(100);
    expect(peer.edus().filter((e) => e.edu_type === "org.weft.test").map((e) => e.content.n)).toEqual([...Array(150).keys()]);
    expect(receivedIds().filter((id) => ids.includes(id))).toEqual(ids);
    expect(peer.maxInFlight).toBe(1);
    expect(new Set(peer.transactions.map((t) => t.txnId)).size).toBe(peer.transactions.length);
    peer.answerDelayMs = 0;
  });

  it("typing, public read receipts (threads apart) and presence go as EDUs; private receipts stay home", async () => {
    const edusOf = (type: string) => peer.edus().filter((e) => e.edu_type === type);
    const typing = await a.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, { token: alice.access_token, body: { typing: true, timeout: 20000 } });
    expect(typing.status).toBe(200);
    await eventually(() => edusOf("m.typing").some((e) => e.content.user_id === alice.user_id && e.content.typing === true), "typing: true");
    expect(edusOf("m.typing").at(-1)!.content).toEqual({ room_id: roomId, user_id: alice.user_id, typing: true });
    await a.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, { token: alice.access_token, body: { typing: false } });
    await eventually(() => edusOf("m.typing").at(-1)?.content.typing === false, "typing: false");

    const secret = await send("read privately");
    const seen = await send("read publicly");
    const root = await send("thread root");
    const priv = await a.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read.private/${enc(secret)}`, { token: alice.access_token, body: {} });
    expect(priv.status).toBe(200);
    const pub = await a.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(seen)}`, { token: alice.access_token, body: {} });
    expect(pub.status).toBe(200);
    const threaded = await a.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(root)}`, { token: alice.access_token, body: { thread_id: "main" } });
    expect(threaded.status).toBe(200);
    const receiptOf = (e: { content: any }) => e.content[roomId]?.["m.read"]?.[alice.user_id];
    await eventually(() => edusOf("m.receipt").some((e) => receiptOf(e)?.data?.thread_id === "main"), "the threaded receipt");
    const receipts = edusOf("m.receipt").map(receiptOf).filter(Boolean);
    expect(receipts).toContainEqual({ event_ids: [seen], data: { ts: expect.any(Number) } });
    expect(receipts).toContainEqual({ event_ids: [root], data: { ts: expect.any(Number), thread_id: "main" } });
    expect(JSON.stringify(edusOf("m.receipt"))).not.toContain(secret);
    expect(JSON.stringify(peer.edus())).not.toContain("m.read.private");
    // One receipt per room, type and user in an EDU: the threaded one went in its own.
    for (const e of edusOf("m.receipt")) expect(Object.keys(e.content[roomId]?.["m.read"] ?? {}).length).toBeLessThanOrEqual(1);

    const presence = await a.call("PUT", `${V3}/presence/${enc(alice.user_id)}/status`, { token: alice.access_token, body: { presence: "online", status_msg: "federating" } });
    expect(presence.status).toBe(200);
    const update = await eventually(() => edusOf("m.presence").flatMap((e) => e.content.push).find((p: any) => p.user_id === alice.user_id && p.status_msg === "federating"), "presence");
    expect(update).toMatchObject({ user_id: alice.user_id, presence: "online", currently_active: true, last_active_ago: expect.any(Number) });
  });
});
