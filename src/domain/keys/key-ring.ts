// The key ring: the verify keys of servers (this one's own, and remote servers' keys fetched directly or
// through a notary and cached until their valid_until_ts). Everything that checks a server's signature
// (events, federation requests, keys) asks here.
// Spec: Server-Server API "Retrieving server keys", "Validating hashes and signatures on received events".
import type { KeyObject } from "node:crypto";
import type { Logger } from "pino";
import type { SigningKey } from "../signing-key.ts";
import { publicKeyFromBase64 } from "../signing.ts";
import { LruCache } from "../cache/lru.ts";
import type { ServerKeyStore, StoredServerKey } from "../store/server-keys.ts";
import type { TrustedKeyServer } from "../../config/federation.ts";
import { keysFromDirectResponse, keysFromNotaryResponse } from "./remote-keys.ts";

export interface KeyRing {
  /**
   * The public key `keyId` of `serverName`, if known and valid at `atTs` (ms; for requests, now; for
   * events of room versions 5+, their origin_server_ts; 0 for versions 1–4, which ignore validity).
   * Resolves undefined when the key cannot be found or is not valid then.
   */
  verifyKey(serverName: string, keyId: string, atTs: number): Promise<KeyObject | undefined>;
  /**
   * Fetches `serverName`'s keys from the server itself (never through a notary) unless they are known
   * valid until `minimumValidUntilTs` (the notary endpoint serves what this leaves in storage).
   */
  refreshDirect(serverName: string, minimumValidUntilTs: number): Promise<void>;
}

/** Knows only this server's own keys (tests and tools; the homeserver uses FederatedKeyRing). */
export class LocalKeyRing implements KeyRing {
  constructor(private readonly serverName: string, private readonly keys: readonly SigningKey[]) {}

  async verifyKey(serverName: string, keyId: string): Promise<KeyObject | undefined> {
    if (serverName !== this.serverName) return undefined;
    return this.keys.find((k) => k.keyId === keyId)?.publicKeyObject;
  }

  async refreshDirect(): Promise<void> {}
}

/** How the key ring reaches other servers; src/federation implements it with signed requests. */
export interface KeyTransport {
  /** GET /_matrix/key/v2/server on `serverName`: the parsed body; rejects on any failure. */
  fetchServerKeys(serverName: string): Promise<unknown>;
  /** POST /_matrix/key/v2/query on `notary` with `body`: the parsed answer; rejects on any failure. */
  queryNotary(notary: string, body: unknown): Promise<unknown>;
}

export interface FederatedKeyRingOptions {
  serverName: string;
  ownKeys: readonly SigningKey[];
  store: Pick<ServerKeyStore, "get" | "store">;
  transport: KeyTransport;
  trustedKeyServers: readonly TrustedKeyServer[];
  now: () => number;
  log: Logger;
  cache?: LruCache<string, CachedKey>;
}

export interface CachedKey {
  verifyKey: string;
  validUntilTs: number;
}

/** After a fetch that found keys, the same server is not asked again sooner than this. */
export const MIN_REFETCH_MS = 5_000;
/** After a fetch that found nothing, back off from this, doubling, up to BACKOFF_MAX_MS. */
export const BACKOFF_START_MS = 30_000;
export const BACKOFF_MAX_MS = 30 * 60_000;

interface FetchState {
  inflight?: Promise<void>;
  nextAllowedTs: number;
  failures: number;
}

/**
 * Own keys, then memory, then the database, then the network: each trusted notary, then the server
 * itself (Synapse's order: a trusted notary's answer is taken first). One fetch per server at a time (callers share it), a short floor between fetches of a server
 * that answered, and an exponential backoff for one that did not.
 */
export class FederatedKeyRing implements KeyRing {
  private readonly cache: LruCache<string, CachedKey>;
  private readonly fetches = new Map<string, FetchState>();

  constructor(private readonly o: FederatedKeyRingOptions) {
    this.cache = o.cache ?? new LruCache<string, CachedKey>("server_keys", 10_000);
  }

  async verifyKey(serverName: string, keyId: string, atTs: number): Promise<KeyObject | undefined> {
    if (serverName === this.o.serverName) return this.o.ownKeys.find((k) => k.keyId === keyId)?.publicKeyObject;
    const known = await this.known(serverName, keyId);
    if (known && known.validUntilTs >= atTs) return publicKeyFromBase64(known.verifyKey);
    await this.fetch(serverName, [keyId], atTs);
    const after = await this.known(serverName, keyId);
    return after && after.validUntilTs >= atTs ? publicKeyFromBase64(after.verifyKey) : undefined;
  }

  /**
   * Asks the server itself for fresh keys (joining a fetch already under way). The notary face uses
   * this: never our own notaries, so two notaries trusting each other cannot loop.
   */
  async refreshDirect(serverName: string, minimumValidUntilTs: number): Promise<void> {
    if (serverName === this.o.serverName) return;
    await this.fetch(serverName, [], minimumValidUntilTs, { notaries: false });
  }

  private async known(serverName: string, keyId: string): Promise<CachedKey | undefined> {
    const id = `${serverName}\n${keyId}`;
    const hit = this.cache.get(id);
    if (hit) return hit;
    const row = await this.o.store.get(serverName, keyId);
    if (!row) return undefined;
    const entry = { verifyKey: row.verifyKey, validUntilTs: row.validUntilTs };
    this.cache.set(id, entry);
    return entry;
  }

  private async fetch(serverName: string, keyIds: string[], minValidUntil: number, opts: { notaries?: boolean } = {}): Promise<void> {
    // Direct-only fetches (the notary face) keep their own state: never waiting on a fetch that is itself
    // waiting on a notary.
    const useNotaries = opts.notaries ?? true;
    const stateKey = useNotaries ? serverName : `direct:${serverName}`;
    let state = this.fetches.get(stateKey);
    if (state?.inflight) return state.inflight;
    // The floor and the backoff hold for keys wanted to check a signature. The notary face asks the
    // server itself each time a query's minimum_valid_until_ts is not met by what we hold, however soon
    // after the last fetch and whatever it answered then (as Synapse, whose key fetches for its notary
    // ignore backoff): one fetch per server at a time still bounds it.
    if (state && useNotaries && this.o.now() < state.nextAllowedTs) return;
    state ??= { nextAllowedTs: 0, failures: 0 };
    this.fetches.set(stateKey, state);
    const s = state;
    s.inflight = (async () => {
      let found = false;
      try {
        found = await this.fetchFromNetwork(serverName, keyIds, minValidUntil, useNotaries);
      } catch (err) {
        this.o.log.warn({ err, serverName }, "fetching server keys failed");
      } finally {
        const now = this.o.now();
        if (found) {
          s.failures = 0;
          s.nextAllowedTs = now + MIN_REFETCH_MS;
        } else {
          s.failures++;
          s.nextAllowedTs = now + Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** (s.failures - 1));
        }
        s.inflight = undefined;
      }
    })();
    return s.inflight;
  }

  /**
   * True when some keys of the server were found and stored. Synapse's order: the trusted notaries first
   * (each until the wanted keys are had, valid long enough), then the server itself for what is still
   * missing — a trusted notary's word is taken over the origin's, as Synapse takes it.
   */
  private async fetchFromNetwork(serverName: string, keyIds: string[], minValidUntil: number, useNotaries: boolean): Promise<boolean> {
    const stored: StoredServerKey[] = [];
    const satisfied = () => (keyIds.length === 0 ? stored.length > 0 : keyIds.every((id) => stored.some((k) => k.keyId === id && k.validUntilTs >= minValidUntil)));
    if (useNotaries) {
      for (const notary of this.o.trustedKeyServers) {
        if (satisfied()) break;
        if (notary.server_name === this.o.serverName || notary.server_name === serverName) continue;
        const criteria = Object.fromEntries(keyIds.map((id) => [id, { minimum_valid_until_ts: minValidUntil }]));
        try {
          const body = await this.o.transport.queryNotary(notary.server_name, { server_keys: { [serverName]: criteria } });
          const result = keysFromNotaryResponse(body, notary, new Set([serverName]), this.o.now());
          if (!result.ok) {
            this.o.log.warn({ notary: notary.server_name, reason: result.reason }, "rejected a notary's key response");
            continue;
          }
          if (result.skipped?.length) this.o.log.warn({ notary: notary.server_name, skipped: result.skipped }, "skipped entries of a notary's key response");
          stored.push(...result.keys);
        } catch (err) {
          this.o.log.info({ notary: notary.server_name, err: (err as Error).message }, "could not query a notary");
        }
      }
    }
    if (!satisfied()) {
      try {
        const result = keysFromDirectResponse(await this.o.transport.fetchServerKeys(serverName), serverName, this.o.now());
        if (result.ok) {
          // A key a notary already gave, valid long enough, is kept as the notary gave it (Synapse).
          const had = new Set(stored.filter((k) => k.validUntilTs >= minValidUntil).map((k) => k.keyId));
          stored.push(...result.keys.filter((k) => !had.has(k.keyId)));
        } else this.o.log.warn({ serverName, reason: result.reason }, "rejected a server's key response");
      } catch (err) {
        this.o.log.info({ serverName, err: (err as Error).message }, "could not fetch keys from the server itself");
      }
    }
    if (stored.length === 0) return false;
    await this.o.store.store(stored);
    // Memory follows what the store kept (a longer-valid stored row wins over a shorter new one).
    for (const k of stored) this.cache.delete(`${k.serverName}\n${k.keyId}`);
    return true;
  }
}
