// Fetching what a room's events need from another server, bounded: events by id (GET /event), an event's
// auth chain (GET /event_auth), the state after an event this server lacks (GET /state_ids, then the
// events it lacks by GET /event, or the whole GET /state when it lacks many — Synapse's 10% rule), all
// stored as outliers through the pipeline (signatures, hashes and auth checked there); and events pulled
// from another server (a /get_missing_events or /backfill answer) placed into the room: oldest first,
// the state after each prev_event still missing fetched with it, then their auth events still missing.
// Every answer is untrusted: shapes, counts and sizes checked; an event is kept only if it is one asked
// for. A budget (requests, time) bounds the whole of one gap's filling, so a hostile server cannot make
// us loop. Spec: Server-Server API "Retrieving events", "Room State", "Backfilling and retrieving missing
// events", "Authorization of events" (event_auth).
import type { Services } from "../services.ts";
import type { Pdu } from "../events/types.ts";
import { isPlainObject, prevEventIds } from "../events/types.ts";
import { eventIdOf, roomIdOf } from "../events/hashes.ts";
import { validatePduFormat } from "../events/validate.ts";
import { stateKeyOf, type StateMap } from "../store/state-groups.ts";
import type { RoomSnapshot } from "../rooms/room-cache.ts";
import { receiveRemoteEvents, type RemoteEventInput, type RemoteOutcome } from "../rooms/receive.ts";
import { fedPath, type Query } from "../../federation/client.ts";
import { FederationError } from "../../federation/errors.ts";
import { authIdsOf } from "./dag-walk.ts";

/** What one gap's filling may spend (one pushed PDU's missing events, one backfill). */
export interface FetchLimits {
  /** Requests to the remote server. */
  requests: number;
  /** Milliseconds for all of them. */
  timeMs: number;
  /** Missing prev_events whose state is fetched (a /state_ids each). */
  stateFetches: number;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = { requests: 60, timeMs: 60_000, stateFetches: 4 };

/** One request's cap on time (within the budget's). */
const REQUEST_TIMEOUT_MS = 30_000;
/** Most ids a /state_ids answer may list (each list). */
const MAX_STATE_IDS = 50_000;
/** Events fetched one by one (GET /event) before asking for the whole state instead. */
const MAX_SINGLE_FETCHES = 20;
/** Parallel GET /event requests. */
const CONCURRENCY = 5;

const MIB = 1024 * 1024;

/** A parsed PDU of the room (format, id and room checked; signatures and auth are the pipeline's). */
export interface ParsedPdu {
  eventId: string;
  pdu: Pdu;
}

/** The PDU's id and form if it is a well-formed event of `room`, else undefined. */
export function parsePdu(room: RoomSnapshot, json: unknown): ParsedPdu | undefined {
  try {
    const pdu = validatePduFormat(json, room.version);
    if (roomIdOf(pdu, room.version) !== room.roomId) return undefined;
    return { eventId: eventIdOf(pdu, room.version), pdu };
  } catch {
    return undefined;
  }
}

/**
 * parsePdu over a long answer (an auth chain of thousands), giving the event loop a turn every so often:
 * hashing each event is synchronous work other requests must not wait behind.
 */
async function parseMany(room: RoomSnapshot, list: readonly unknown[]): Promise<ParsedPdu[]> {
  const out: ParsedPdu[] = [];
  for (const [i, json] of list.entries()) {
    if (i % 64 === 63) await new Promise<void>((resolve) => setImmediate(resolve));
    const p = parsePdu(room, json);
    if (p) out.push(p);
  }
  return out;
}

const invalid = (server: string, what: string) => new FederationError("invalid_response", server, what);

/** An array of objects at `field` of an answer, else an invalid_response error. */
function objects(server: string, answer: unknown, field: string, max: number): unknown[] {
  const list = isPlainObject(answer) ? answer[field] : undefined;
  if (!Array.isArray(list)) throw invalid(server, `no ${field} list`);
  if (list.length > max) throw invalid(server, `more than ${max} entries in ${field}`);
  return list;
}

/** An array of strings at `field` of an answer, else an invalid_response error. */
function strings(server: string, answer: unknown, field: string, max: number): string[] {
  const list = objects(server, answer, field, max);
  if (!list.every((x) => typeof x === "string")) throw invalid(server, `${field} must list event ids`);
  return list as string[];
}

export class RemoteRoomFetcher {
  private readonly deadline: number;
  private requestsLeft: number;
  private stateFetchesLeft: number;

  constructor(
    private readonly s: Services,
    readonly room: RoomSnapshot,
    readonly server: string,
    limits: FetchLimits = DEFAULT_FETCH_LIMITS,
  ) {
    this.deadline = Date.now() + limits.timeMs;
    this.requestsLeft = limits.requests;
    this.stateFetchesLeft = limits.stateFetches;
  }

  /** Time and a request from the budget, or a "timeout" error when it is spent. */
  private spend(): number {
    const left = this.deadline - Date.now();
    if (left <= 0 || this.requestsLeft <= 0) throw new FederationError("timeout", this.server, "the budget for filling this gap is spent");
    this.requestsLeft--;
    return Math.min(left, REQUEST_TIMEOUT_MS);
  }

  get(path: string, query: Query | undefined, maxBytes: number): Promise<unknown> {
    return this.s.federation.getJson(this.server, path, query, { timeoutMs: this.spend(), maxBytes });
  }

  post(path: string, body: unknown, maxBytes: number): Promise<unknown> {
    return this.s.federation.postJson(this.server, path, body, { timeoutMs: this.spend(), maxBytes });
  }

  /** The PDUs among `list` that are events of the room whose ids are in `wanted` (once each). */
  private keepWanted(list: unknown[], wanted: ReadonlySet<string>): ParsedPdu[] {
    const out = new Map<string, ParsedPdu>();
    for (const json of list) {
      const p = parsePdu(this.room, json);
      if (p && wanted.has(p.eventId) && !out.has(p.eventId)) out.set(p.eventId, p);
    }
    return [...out.values()];
  }

  /** Events by id, one GET /event each (a few at a time). Those the server does not give are left out. */
  async events(ids: readonly string[]): Promise<ParsedPdu[]> {
    const out: ParsedPdu[] = [];
    const queue = [...new Set(ids)];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        let answer: unknown;
        try {
          answer = await this.get(fedPath`/_matrix/federation/v1/event/${id}`, undefined, MIB);
        } catch (err) {
          if (err instanceof FederationError && err.kind === "timeout") throw err;
          continue; // this one is not to be had from here
        }
        const list = isPlainObject(answer) && Array.isArray(answer["pdus"]) ? answer["pdus"] : [];
        out.push(...this.keepWanted(list.slice(0, 1), new Set([id])));
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    return out;
  }

  /** Stores events as outliers (checked by the pipeline; those failing are dropped or rejected there). */
  async storeOutliers(events: readonly ParsedPdu[]): Promise<RemoteOutcome[]> {
    if (events.length === 0) return [];
    return receiveRemoteEvents(this.s, this.room.roomId, events.map((e) => ({ pdu: e.pdu, outlier: true })), { origin: this.server });
  }

  /** The auth chain of `eventId` (GET /event_auth), stored as outliers where missing. */
  async fetchAuthChain(eventId: string): Promise<void> {
    const answer = await this.get(fedPath`/_matrix/federation/v1/event_auth/${this.room.roomId}/${eventId}`, undefined, 32 * MIB);
    const list = objects(this.server, answer, "auth_chain", MAX_STATE_IDS);
    const parsed = (await parseMany(this.room, list)).filter((p) => p.eventId !== eventId);
    const stored = await this.s.rooms.events.getMany(parsed.map((p) => p.eventId));
    await this.storeOutliers(parsed.filter((p) => !stored.has(p.eventId)));
  }

  /**
   * `fetchAuthChain`, a failure of which is only logged (as Synapse: a server that does not serve
   * /event_auth, or fails, leaves the event's auth events to be found otherwise — or not, and the caller
   * then leaves the event out). A spent budget is still thrown.
   */
  async tryFetchAuthChain(eventId: string): Promise<void> {
    try {
      await this.fetchAuthChain(eventId);
    } catch (err) {
      if (err instanceof FederationError && err.kind === "timeout") throw err;
      this.s.log.info({ err, roomId: this.room.roomId, eventId, server: this.server }, "could not fetch an event's auth chain");
    }
  }

  /**
   * The state after `prevId` (an event this server lacks) as the remote server has it: GET /state_ids at
   * it (the state before it), the events of that state and its auth chain this server lacks fetched and
   * stored as outliers (the prev event too), then the prev event itself added if it is a state event.
   * Only stored, not rejected state events of the room enter the answer (Synapse's rule).
   */
  async stateAfter(prevId: string): Promise<StateMap> {
    if (this.stateFetchesLeft <= 0) throw new FederationError("timeout", this.server, "too many missing prev_events to fetch the state of");
    this.stateFetchesLeft--;
    const roomId = this.room.roomId;
    const answer = await this.get(fedPath`/_matrix/federation/v1/state_ids/${roomId}`, { event_id: prevId }, 16 * MIB);
    const stateIds = strings(this.server, answer, "pdu_ids", MAX_STATE_IDS);
    const authIds = strings(this.server, answer, "auth_chain_ids", MAX_STATE_IDS);
    const wanted = new Set([...stateIds, ...authIds, prevId]);
    const have = await this.s.rooms.events.getMany(wanted);
    const missing = [...wanted].filter((id) => !have.has(id));
    if (missing.length > 0) {
      let fetched: ParsedPdu[] | undefined;
      if (missing.length > MAX_SINGLE_FETCHES || missing.length * 10 >= wanted.size) {
        try {
          const full = await this.get(fedPath`/_matrix/federation/v1/state/${roomId}`, { event_id: prevId }, 50 * MIB);
          fetched = this.keepWanted([...objects(this.server, full, "pdus", MAX_STATE_IDS), ...objects(this.server, full, "auth_chain", MAX_STATE_IDS)], new Set(missing));
        } catch (err) {
          if (err instanceof FederationError && err.kind === "timeout") throw err;
          // Then one by one, as far as that goes.
        }
      }
      fetched ??= await this.events(missing.slice(0, MAX_SINGLE_FETCHES));
      if (!have.has(prevId) && !fetched.some((p) => p.eventId === prevId)) fetched.push(...(await this.events([prevId])));
      await this.storeOutliers(fetched);
    }
    const stored = await this.s.rooms.events.getMany(wanted);
    const prev = stored.get(prevId);
    if (!prev || prev.roomId !== roomId) throw invalid(this.server, `the missing prev event ${prevId} could not be fetched`);
    const state = new Map<string, string>();
    for (const id of stateIds) {
      const e = stored.get(id);
      if (!e || e.roomId !== roomId || e.rejectedReason !== null || e.pdu.state_key === undefined) continue;
      state.set(stateKeyOf(e.pdu.type, e.pdu.state_key), id);
    }
    if (prev.rejectedReason === null && prev.pdu.state_key !== undefined) state.set(stateKeyOf(prev.pdu.type, prev.pdu.state_key), prevId);
    return state;
  }

  /**
   * Places events pulled from the remote server (an answer of /get_missing_events or /backfill) into the
   * room: those it has in its DAG already are skipped, the rest taken oldest first; for each prev_event
   * neither stored in the DAG nor among the pulled ones, the state after it (`stateAfter`), then the auth
   * events still missing (its auth chain). An event whose gap cannot be filled is left out (an
   * event after it then has a gap of its own). One commit for all.
   */
  async receivePulled(list: readonly unknown[], opts: { backfill?: boolean; exclude?: ReadonlySet<string> } = {}): Promise<RemoteOutcome[]> {
    const byId = new Map<string, ParsedPdu>();
    for (const json of list) {
      const p = parsePdu(this.room, json);
      if (p && !byId.has(p.eventId) && !opts.exclude?.has(p.eventId)) byId.set(p.eventId, p);
    }
    const refs = [...byId.values()].flatMap((p) => [p.eventId, ...prevEventIds(p.pdu), ...authIdsOf(p.pdu, this.room)]);
    let stored = await this.s.rooms.events.getMany(refs);
    const pulled = [...byId.values()].filter((p) => !stored.get(p.eventId) || stored.get(p.eventId)!.outlier).sort((a, b) => a.pdu.depth - b.pdu.depth);
    const placed = new Set(pulled.map((p) => p.eventId));
    const inputs: RemoteEventInput[] = [];
    const authMissing = (p: ParsedPdu) => authIdsOf(p.pdu, this.room).some((id) => !stored.has(id) && !placed.has(id));
    for (const p of pulled) {
      try {
        // As Synapse: the state after each missing prev_event first (its answer brings the auth chain
        // too), then /event_auth only for auth events still missing; an event whose auth events cannot be
        // found is left out, not stored as rejected (they may exist).
        const prevStates = new Map<string, StateMap>();
        for (const prev of prevEventIds(p.pdu)) {
          const e = stored.get(prev);
          if ((e && !e.outlier) || placed.has(prev)) continue;
          prevStates.set(prev, await this.stateAfter(prev));
        }
        if (prevStates.size > 0) stored = await this.s.rooms.events.getMany(refs);
        if (authMissing(p)) {
          await this.tryFetchAuthChain(p.eventId);
          stored = await this.s.rooms.events.getMany(refs);
          if (authMissing(p)) throw new Error("its auth events could not be found");
        }
        inputs.push(prevStates.size > 0 ? { pdu: p.pdu, prevStates } : { pdu: p.pdu });
      } catch (err) {
        this.s.log.info({ err, roomId: this.room.roomId, eventId: p.eventId, server: this.server }, "a pulled event cannot be placed: its gap cannot be filled");
        placed.delete(p.eventId);
      }
    }
    if (inputs.length === 0) return [];
    return receiveRemoteEvents(this.s, this.room.roomId, inputs, { backfill: opts.backfill, origin: this.server });
  }
}
