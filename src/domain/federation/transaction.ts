// An inbound transaction (PUT /_matrix/federation/v1/send/{txnId}): the body checked (origin, at most 50
// PDUs and 100 EDUs); idempotent per (origin, txnId) — a retry, concurrent or later, gets the stored answer
// and changes nothing; one transaction at a time per origin (as Synapse), each origin on its own. PDUs are
// grouped per room (rooms in parallel, each room's PDUs in order) and received through the pipeline
// (ingest.ts); a PDU for a room this server does not know is ignored, one that cannot be processed is an
// error in the answer (one the auth rules rejected or soft-failed is answered {}), never a failed
// transaction. EDUs, beside the PDUs, go to the handler declared for their edu_type
// (extensions.eduHandlers); unknown types are dropped (logged once per type). With several processes,
// the PDUs of a room another instance writes, and the EDUs of a stream another writes, are sent to that
// instance over the internal routes (cluster/internal-client.ts) and its answers merged in.
// Spec: Server-Server API "Transactions", "PDUs", "EDUs".
import { serverAllowedInState } from "./server-acl.ts";
import type { Services } from "../services.ts";
import type { BackgroundTask } from "../extensions.ts";
import type { InboundTransactions } from "../process-state.ts";
import { isPlainObject, type Pdu } from "../events/types.ts";
import { eventIdOf } from "../events/hashes.ts";
import { validatePduFormat } from "../events/validate.ts";
import { MatrixError } from "../errors.ts";
import { loadRoom, type RoomSnapshot } from "../rooms/room-cache.ts";
import { ReceivedTransactionStore } from "../store/received-transactions.ts";
import { parsePdu, type ParsedPdu } from "./fetch-events.ts";
import { ingestPdus, type PduResult } from "./ingest.ts";
import { receiveOutOfBandUpdate } from "./membership/out-of-band-update.ts";
import { reportRefusal } from "./refusals.ts";
import { eduOwner } from "../cluster/write-routes.ts";

export const MAX_PDUS = 50;
export const MAX_EDUS = 100;
/** Transactions of one origin waiting behind the one being processed before we answer 429. */
const MAX_QUEUED_PER_ORIGIN = 3;
/** Rooms of one transaction processed at once (Synapse: 10). */
const ROOM_CONCURRENCY = 10;
/** How long an answered transaction is remembered (Synapse: a day). */
const KEEP_MS = 24 * 60 * 60 * 1000;

export interface TransactionBody {
  pdus: unknown[];
  edus: unknown[];
}

export interface TransactionResponse {
  pdus: Record<string, { error?: string }>;
}

/** Checks a transaction's body: M_BAD_JSON for a wrong shape, M_FORBIDDEN for another origin, M_TOO_LARGE. */
export function parseTransaction(origin: string, body: Record<string, unknown>): TransactionBody {
  if (typeof body.origin !== "string") throw new MatrixError("M_BAD_JSON", "origin must be a server name", 400);
  if (body.origin !== origin) throw new MatrixError("M_FORBIDDEN", "The transaction's origin is not the server that signed the request", 403);
  if (typeof body.origin_server_ts !== "number" || !Number.isSafeInteger(body.origin_server_ts)) throw new MatrixError("M_BAD_JSON", "origin_server_ts must be an integer", 400);
  if (!Array.isArray(body.pdus)) throw new MatrixError("M_BAD_JSON", "pdus must be a list", 400);
  if (body.edus !== undefined && !Array.isArray(body.edus)) throw new MatrixError("M_BAD_JSON", "edus must be a list", 400);
  const edus = (body.edus as unknown[] | undefined) ?? [];
  if (body.pdus.length > MAX_PDUS || edus.length > MAX_EDUS)
    throw new MatrixError("M_TOO_LARGE", `A transaction carries at most ${MAX_PDUS} PDUs and ${MAX_EDUS} EDUs`, 400);
  return { pdus: body.pdus, edus };
}

/** Receives one transaction from `origin` (authenticated); returns the spec's answer. */
export async function receiveTransaction(s: Services, origin: string, txnId: string, rawBody: Record<string, unknown>): Promise<TransactionResponse> {
  const body = parseTransaction(origin, rawBody);
  const st = s.processState.inboundTransactions;
  const key = `${origin}\u0000${txnId}`;
  const running = st.running.get(key);
  if (running) return running;
  const store = new ReceivedTransactionStore(s.storage.sql);
  const answered = await store.response(origin, txnId);
  if (answered !== undefined) return answered as TransactionResponse;
  const again = st.running.get(key); // started while we read
  if (again) return again;
  const queued = st.pending.get(origin) ?? 0;
  if (queued > MAX_QUEUED_PER_ORIGIN)
    throw new MatrixError("M_LIMIT_EXCEEDED", "Too many concurrent transactions", 429, { retry_after_ms: 1000 });
  st.pending.set(origin, queued + 1);
  const work = st.lanes
    .run(origin, async () => {
      const done = await store.response(origin, txnId);
      if (done !== undefined) return done as TransactionResponse;
      const [pdus] = await Promise.all([receivePdus(s, origin, body.pdus), receiveEdus(s, origin, body.edus, st)]);
      const response: TransactionResponse = { pdus };
      await store.record(origin, txnId, response, s.clock.now());
      return response;
    })
    .finally(() => {
      st.running.delete(key);
      const n = (st.pending.get(origin) ?? 1) - 1;
      if (n <= 0) st.pending.delete(origin);
      else st.pending.set(origin, n);
    });
  st.running.set(key, work);
  return work;
}

/** Why a PDU of a known room is not an event of it; with its id, when one can be told. */
function badPdu(room: RoomSnapshot, json: Record<string, unknown>): { eventId?: string; reason: string } {
  let reason = "The event belongs to another room";
  try {
    validatePduFormat(json, room.version);
  } catch (err) {
    reason = `Bad event format: ${(err as Error).message}`;
  }
  try {
    return { eventId: eventIdOf(json as Pdu, room.version), reason };
  } catch {
    return { reason };
  }
}

/** A PDU of a server the room's ACL denies: refused (logged, counted) with Synapse's answer. */
function refuseForAcl(s: Services, origin: string, roomId: string, eventId: string): string {
  reportRefusal(s, { origin, roomId, eventId, rule: "server_acl", outcome: "refused" });
  return "Server is banned from room";
}

/**
 * The PDUs of a transaction: grouped per known room, received; each one's result by event id. With several
 * events writers (cluster/topology.ts) the PDUs of a room another instance writes are sent to it, and its
 * answers merged in; `forwarded`: these came from another instance, which sends only this one's rooms.
 */
async function receivePdus(s: Services, origin: string, list: unknown[], forwarded = false): Promise<Record<string, { error?: string }>> {
  const out: Record<string, { error?: string }> = {};
  const rooms = new Map<string, { room: RoomSnapshot; pdus: ParsedPdu[] }>();
  const elsewhere = new Map<string, unknown[]>();
  for (const json of list) {
    const roomId = isPlainObject(json) ? json["room_id"] : undefined;
    if (typeof roomId !== "string") {
      s.log.info({ origin }, "ignoring a PDU without a room_id");
      continue;
    }
    if (s.topology.distributed && !s.topology.writesRoom(roomId)) {
      const writer = s.topology.eventWriterFor(roomId);
      // Never forwarded twice: instances that disagree on stream_writers drop it (the origin retries it later).
      if (forwarded) s.log.error({ origin, roomId, writer }, "a PDU forwarded here for a room another instance writes: stream_writers differ between instances");
      else {
        let batch = elsewhere.get(writer);
        if (!batch) elsewhere.set(writer, (batch = []));
        batch.push(json);
      }
      continue;
    }
    const room = rooms.get(roomId)?.room ?? (await loadRoom(s, roomId));
    if (!room) {
      // A room whose state we lack: only the end of a local user's out-of-band invite or knock is taken.
      const update = await receiveOutOfBandUpdate(s, origin, roomId, json);
      if (update) {
        out[update.eventId] = update.error === undefined ? {} : { error: update.error };
        continue;
      }
      // Without the room's version the event's id cannot be told (Synapse ignores it too).
      s.log.info({ origin, roomId }, "ignoring a PDU for an unknown room");
      continue;
    }
    const parsed = parsePdu(room, json);
    if (!parsed) {
      const bad = badPdu(room, json as Record<string, unknown>);
      if (bad.eventId) out[bad.eventId] = { error: bad.reason };
      reportRefusal(s, { origin, roomId, eventId: bad.eventId, rule: bad.reason.startsWith("Bad event format") ? "format" : "wrong_room", outcome: "dropped", detail: bad.reason });
      continue;
    }
    let group = rooms.get(roomId);
    if (!group) rooms.set(roomId, (group = { room, pdus: [] }));
    group.pdus.push(parsed);
  }
  const queue = [...rooms.values()];
  const worker = async () => {
    for (let g = queue.shift(); g; g = queue.shift()) {
      let results: Map<string, PduResult>;
      try {
        // A server the room's ACL denies has none of its PDUs taken (Synapse's answer for each).
        results = (await serverAllowedInState(s, g.room.state, origin))
          ? await ingestPdus(s, origin, g.room, g.pdus)
          : new Map(g.pdus.map((p) => [p.eventId, refuseForAcl(s, origin, g!.room.roomId, p.eventId)]));
      } catch (err) {
        s.log.error({ err, origin, roomId: g.room.roomId }, "failed to receive PDUs");
        results = new Map(g.pdus.map((p) => [p.eventId, "Internal error while processing the event"]));
      }
      for (const [id, error] of results) out[id] = error === undefined ? {} : { error };
    }
  };
  // An instance that cannot be reached fails the transaction (not recorded: the origin sends it again).
  const forward = async ([instance, pdus]: [string, unknown[]]) => {
    const answer = await s.internal.call(instance, INTERNAL_PDUS, { origin, pdus });
    Object.assign(out, answer.pdus);
  };
  await Promise.all([...Array.from({ length: Math.min(ROOM_CONCURRENCY, queue.length) }, worker), ...[...elsewhere].map(forward)]);
  return out;
}

/** The internal route that takes another instance's PDUs of rooms this one writes (compat/cluster.ts). */
export const INTERNAL_PDUS = "/federation/pdus";
/** The internal route that takes another instance's EDUs of streams this one writes. */
export const INTERNAL_EDUS = "/federation/edus";

/** The body of either internal route: the origin server and its PDUs or EDUs. */
function parseForwarded(body: Record<string, unknown>, key: "pdus" | "edus"): { origin: string; list: unknown[] } {
  const { origin } = body;
  const list = body[key];
  if (typeof origin !== "string" || !Array.isArray(list)) throw new MatrixError("M_BAD_JSON", `origin and ${key} are required`, 400);
  return { origin, list };
}

/** PDUs another instance received for rooms this one writes: each one's result by event id. */
export async function receiveForwardedPdus(s: Services, body: Record<string, unknown>): Promise<TransactionResponse> {
  const { origin, list } = parseForwarded(body, "pdus");
  return { pdus: await receivePdus(s, origin, list, true) };
}

/** EDUs another instance received for streams this one writes. */
export async function receiveForwardedEdus(s: Services, body: Record<string, unknown>): Promise<Record<string, never>> {
  const { origin, list } = parseForwarded(body, "edus");
  await receiveEdus(s, origin, list, s.processState.inboundTransactions, true);
  return {};
}

/**
 * The EDUs of a transaction, in order, each to the handler of its edu_type. A handler's MatrixError (bad
 * content) drops that EDU; any other failure fails the transaction (not recorded: the sender retries,
 * as Synapse makes it for EDUs that must not be lost, such as to-device messages).
 */
async function receiveEdus(s: Services, origin: string, list: unknown[], st: InboundTransactions, forwarded = false): Promise<void> {
  // EDUs of a stream another instance writes (typing, receipts, presence, to-device, device lists) go to
  // it, in their order; a failure fails the transaction, as a handler's would.
  const elsewhere = new Map<string, unknown[]>();
  for (const edu of list) {
    if (!isPlainObject(edu) || typeof edu["edu_type"] !== "string") {
      s.log.info({ origin }, "ignoring a malformed EDU");
      continue;
    }
    const type = edu["edu_type"];
    if (s.topology.distributed) {
      const owner = eduOwner(s, type);
      if (owner !== s.topology.instanceName) {
        if (forwarded) s.log.error({ origin, eduType: type, owner }, "an EDU forwarded here for a stream another instance writes: stream_writers differ between instances");
        else elsewhere.set(owner, [...(elsewhere.get(owner) ?? []), edu]);
        continue;
      }
    }
    const handler = s.extensions.eduHandlers.find((h) => h.type === type);
    if (!handler) {
      if (!st.unknownEdus.has(type)) {
        st.unknownEdus.add(type);
        s.log.info({ origin, eduType: type }, "dropping EDUs of a type no handler takes");
      }
      continue;
    }
    try {
      await handler.handle(s, origin, edu["content"]);
    } catch (err) {
      if (!(err instanceof MatrixError)) throw err;
      s.log.info({ err, origin, eduType: type }, "dropping an EDU its handler refused");
    }
  }
  for (const [instance, edus] of elsewhere) await s.internal.call(instance, INTERNAL_EDUS, { origin, edus });
}

/** Forgets answered transactions after a day (checked hourly). */
export const expireReceivedTransactions: BackgroundTask = (s) => {
  const store = new ReceivedTransactionStore(s.storage.sql);
  const timer = setInterval(() => {
    store.expire(s.clock.now() - KEEP_MS).catch((err: unknown) => s.log.warn({ err }, "expiring received transactions failed"));
  }, 60 * 60 * 1000);
  timer.unref();
  return () => clearInterval(timer);
};
