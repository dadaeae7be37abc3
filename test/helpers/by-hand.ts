// Federation steps done by hand in tests, through the real federation API, while the parts that do them
// for real are built elsewhere: a user of one server joining a room resident on another (what make_join /
// send_join will do: the join built on the resident's room, signed by the joining server and sent to the
// resident in a transaction; the joining server then stores the resident's state before the join and its
// auth chain as outliers and the join itself with that state), and events pushed from one server to
// another in a transaction (what the federation sender will do).
import { expect } from "vitest";
import type { Services } from "../../src/domain/services.ts";
import type { Pdu } from "../../src/domain/events/types.ts";
import type { SigningKey } from "../../src/domain/signing-key.ts";
import { buildEvent, type EventDraft } from "../../src/domain/rooms/build-event.ts";
import { loadRoom } from "../../src/domain/rooms/room-cache.ts";
import { receiveRemoteEvents } from "../../src/domain/rooms/receive.ts";
import { eventIdOf, withContentHash } from "../../src/domain/events/hashes.ts";
import { redactEvent } from "../../src/domain/events/redaction.ts";
import { signJson } from "../../src/domain/signing.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";
import { federationCall, signedBy, type FederatedServer } from "./federation.ts";
import type { JsonResponse } from "./server.ts";

const enc = encodeURIComponent;
let txnCounter = 0;

/** A server that can sign: a Weft test server, or any name and key (a fake origin, Synapse). */
export interface Signer {
  serverName: string;
  key: SigningKey;
}

export const signerOf = (t: FederatedServer): Signer => ({ serverName: t.serverName, key: t.hs.services.signingKeys[0]! });

/** A PDU (a make_join template, say) hashed and signed by `signer`, with its event id. */
export function signPdu(template: Pdu, version: string, signer: Signer): { eventId: string; pdu: Pdu } {
  const pdu = withContentHash({ ...template, signatures: {} } as Pdu);
  const signed = signJson(redactEvent(pdu, version) as unknown as Record<string, unknown>, signer.serverName, signer.key);
  pdu.signatures = { [signer.serverName]: signed.signatures[signer.serverName]! };
  return { eventId: eventIdOf(pdu, version), pdu };
}

/** A signed federation request from `from` to the server at `baseUrl` named `destination`. */
export function signedCall(from: Signer, to: { baseUrl: string; serverName: string }, method: "GET" | "PUT" | "POST", path: string, body?: unknown): Promise<JsonResponse> {
  const r = { method, path, body };
  return federationCall(to.baseUrl, { ...r, authorization: signedBy(from.serverName, from.key, to.serverName, r) });
}

/** PUTs a transaction of `pdus` (and `edus`) from `from` to `to`; returns the answer. */
export function sendTransaction(from: Signer, to: { baseUrl: string; serverName: string }, pdus: unknown[], edus?: unknown[], txnId = `t${Date.now()}.${++txnCounter}`): Promise<JsonResponse> {
  return signedCall(from, to, "PUT", `/_matrix/federation/v1/send/${enc(txnId)}`, {
    origin: from.serverName,
    origin_server_ts: Date.now(),
    pdus,
    ...(edus ? { edus } : {}),
  });
}

/** An event built by `signer` on the room as `resident` has it now (its state, tips and depth). */
export async function eventOnRoom(resident: Services, roomId: string, signer: Signer, draft: EventDraft): Promise<{ eventId: string; pdu: Pdu }> {
  const room = (await loadRoom(resident, roomId))!;
  const ctx = {
    roomId,
    version: room.version,
    state: room.state,
    extremities: room.extremities,
    maxDepth: room.maxDepth,
    lookup: async (id: string) => (await resident.rooms.events.get(id))?.pdu,
  };
  return buildEvent(resident, ctx, draft, Date.now(), signer);
}

/**
 * Joins `userId` (a user of `joiner`) to `roomId` on `resident`, by hand (see the module comment). Both
 * sides go through their federation API: the join reaches the resident in a transaction, and the joiner
 * reads the state from the resident's /state. Returns the join's event id.
 */
export async function joinByHand(joiner: FederatedServer, resident: FederatedServer, roomId: string, userId: string): Promise<string> {
  const signer = signerOf(joiner);
  const join = await eventOnRoom(resident.hs.services, roomId, signer, { type: "m.room.member", stateKey: userId, sender: userId, content: { membership: "join" } });
  const sent = await sendTransaction(signer, resident, [join.pdu]);
  expect([sent.status, sent.json], JSON.stringify(sent.json)).toEqual([200, { pdus: { [join.eventId]: {} } }]);
  const state = await signedCall(signer, resident, "GET", `/_matrix/federation/v1/state/${enc(roomId)}?event_id=${enc(join.eventId)}`);
  expect(state.status, JSON.stringify(state.json)).toBe(200);
  await storeJoin(joiner.hs.services, roomId, join, state.json.pdus, state.json.auth_chain);
  return join.eventId;
}

/** Stores a joined room on the joining server: state and auth chain as outliers, the join with its state. */
export async function storeJoin(s: Services, roomId: string, join: { eventId: string; pdu: Pdu }, statePdus: Pdu[], authChain: Pdu[]): Promise<void> {
  const create = statePdus.find((p) => p.type === "m.room.create" && p.state_key === "")!;
  const version = String(create.content["room_version"] ?? "1");
  const before = new Map<string, string>();
  for (const p of statePdus) before.set(stateKeyOf(p.type, p.state_key!), eventIdOf(p, version));
  const outliers = [...authChain, ...statePdus].map((pdu) => ({ pdu, outlier: true }));
  const out = await receiveRemoteEvents(s, roomId, [...outliers, { pdu: join.pdu, stateBefore: before }]);
  expect(out[out.length - 1], JSON.stringify(out)).toEqual({ status: "accepted", eventId: join.eventId });
}

/** Takes stored events of `from` (by id) and pushes them to `to` in one transaction signed by `from`. */
export async function pushEvents(from: FederatedServer, to: { baseUrl: string; serverName: string }, eventIds: string[]): Promise<JsonResponse> {
  const found = await from.hs.services.rooms.events.getMany(eventIds);
  return sendTransaction(signerOf(from), to, eventIds.map((id) => found.get(id)!.pdu));
}

/**
 * Long-polls `/sync` as `token` on `t` until `found` holds for the timeline of `roomId` (the events seen so
 * far, in order), at most `ms`; returns those events. Waits on the server, never sleeps.
 */
export async function syncUntil(
  t: { call: FederatedServer["call"] },
  token: string,
  roomId: string,
  found: (events: { event_id: string; type: string; content: Record<string, unknown>; sender: string }[]) => boolean,
  ms = 20_000,
): Promise<{ event_id: string; type: string; content: Record<string, unknown>; sender: string }[]> {
  const deadline = Date.now() + ms;
  const seen: { event_id: string; type: string; content: Record<string, unknown>; sender: string }[] = [];
  let since: string | undefined;
  for (;;) {
    const left = deadline - Date.now();
    const filter = enc(JSON.stringify({ room: { timeline: { limit: 100 } } }));
    const q = since ? `?since=${enc(since)}&timeout=${Math.max(0, Math.min(left, 5000))}&filter=${filter}` : `?timeout=0&filter=${filter}`;
    const res = await t.call("GET", `/_matrix/client/v3/sync${q}`, { token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    since = res.json.next_batch;
    seen.push(...(res.json.rooms?.join?.[roomId]?.timeline?.events ?? []));
    if (found(seen)) return seen;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting on /sync of ${roomId}; seen ${JSON.stringify(seen.map((e) => [e.type, e.content.body]))}`);
  }
}

/** Messages `body1`..`bodyN` (`prefix` + number) sent one by one by `token`'s user on `t`; their ids. */
export async function sendMessages(t: { call: FederatedServer["call"] }, token: string, roomId: string, prefix: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= n; i++) {
    const res = await t.call("PUT", `/_matrix/client/v3/rooms/${enc(roomId)}/send/m.room.message/${enc(`${prefix}${i}-${Date.now()}`)}`, { token, body: { msgtype: "m.text", body: `${prefix}${i}` } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    ids.push(res.json.event_id);
  }
  return ids;
}
