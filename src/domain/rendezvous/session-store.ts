// MSC4108's rendezvous sessions ("Insecure rendezvous session"): one payload per session, with its
// content type, entity tag, last modification and expiry, held in this process's memory as Synapse holds
// them (its Rust RendezvousHandler): a session lives 60 s from its creation whatever its writes, payloads
// are at most 4 KiB, and once 200 sessions are held a creation first drops the expired ones, then the
// oldest until 100 are left — so the store never holds more than 200 × 4 KiB.
// Single process: a session is known only to the process that created it, and a restart forgets them all
// (they last a minute; clients start again). Several processes (Weft's scale-out) must route every
// rendezvous request to one of them — as Synapse serves them on its main process only — or move these
// rows to PostgreSQL, or delegate the whole service with experimental_features.msc4108_delegation_endpoint.
import { randomBytes } from "node:crypto";
import type { Clock } from "../services.ts";
import { newEntityTag } from "./entity-tags.ts";

/** Synapse's limits (rust/src/rendezvous: ttl, max_content_length, capacity). */
export const RENDEZVOUS_TTL_MS = 60_000;
export const RENDEZVOUS_MAX_PAYLOAD_BYTES = 4096;
export const RENDEZVOUS_CAPACITY = 100;

export interface RendezvousSession {
  readonly id: string;
  data: Buffer;
  contentType: string;
  /** Strong entity tag of the current payload, new at every write (MSC4108 "ETags"). */
  etag: string;
  lastModified: number;
  readonly expiresAt: number;
}

export class RendezvousSessions {
  /** Insertion order is creation order: the oldest (and the first to expire) come first. */
  private readonly sessions = new Map<string, RendezvousSession>();

  constructor(private readonly clock: Clock) {}

  /** Starts a session holding `data`; its id is 128 random bits (the URL is the capability to it). */
  create(data: Buffer, contentType: string): RendezvousSession {
    const now = this.clock.now();
    if (this.sessions.size >= RENDEZVOUS_CAPACITY * 2) this.evict(now);
    const session: RendezvousSession = {
      id: randomBytes(16).toString("base64url"),
      data,
      contentType,
      etag: newEntityTag(randomBytes(16)),
      lastModified: now,
      expiresAt: now + RENDEZVOUS_TTL_MS,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session `id`, or undefined (unknown, ended or expired). */
  get(id: string): RendezvousSession | undefined {
    const session = this.sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= this.clock.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  /** Replaces the payload of a live session (its expiry stays). */
  write(session: RendezvousSession, data: Buffer, contentType: string): void {
    session.data = data;
    session.contentType = contentType;
    session.etag = newEntityTag(randomBytes(16));
    session.lastModified = this.clock.now();
  }

  /** Ends the live session `id`; false when there was none. */
  delete(id: string): boolean {
    return this.get(id) !== undefined && this.sessions.delete(id);
  }

  /** Drops the expired sessions, then the oldest until at most the capacity are left. */
  private evict(now: number): void {
    for (const [id, session] of this.sessions) {
      if (session.expiresAt > now) break; // one TTL for all: the rest expire later
      this.sessions.delete(id);
    }
    for (const id of this.sessions.keys()) {
      if (this.sessions.size <= RENDEZVOUS_CAPACITY) break;
      this.sessions.delete(id);
    }
  }
}
