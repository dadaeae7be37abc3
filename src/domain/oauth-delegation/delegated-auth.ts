// Delegated authentication's machinery on Services (MSC3861, MSC2965): the authorization server's
// metadata (OpenID Connect Discovery / RFC 8414, fetched once and kept; a failure is retried on the next
// call), token introspection (RFC 7662) with client authentication, and the introspection cache: keyed
// by the token's hash (never the token), bounded, each answer kept for introspection_cache_ttl and never
// past the token's `exp`. Concurrent lookups of one token share one request.
import type { Config } from "../../config/config.ts";
import type { OAuthDelegationConfig } from "../../config/oauth-delegation.ts";
import type { CacheRegistry, LruCache } from "../cache/lru.ts";
import type { Clock } from "../services.ts";
import { isIP } from "node:net";
import { hashToken } from "../accounts/tokens.ts";
import { OutboundIpPolicy } from "../net/ip-ranges.ts";
import { AuthServerHttp, AuthServerUnreachable, isObject } from "./http.ts";
import { ClientAuthenticator, sameSecret } from "./client-auth.ts";

/** An RFC 7662 answer, with when it was fetched. */
export interface Introspection {
  active: boolean;
  claims: Record<string, unknown>;
  retrievedAtMs: number;
}

/** Who a token turned out to be (kept beside its introspection answer, so a cache hit reads no storage). */
export interface TokenOwner {
  userId: string;
  deviceId: string | null;
  isAdmin: boolean;
  locked: boolean;
  suspended: boolean;
}

interface CachedIntrospection {
  result: Introspection;
  /** When the entry stops being used (ms). */
  until: number;
  owner?: TokenOwner;
}

export class DelegatedAuth {
  private readonly http: AuthServerHttp;
  private readonly clientAuth: ClientAuthenticator;
  private metadata: Promise<Record<string, unknown>> | undefined;
  private readonly cache: LruCache<string, CachedIntrospection>;
  private readonly inFlight = new Map<string, Promise<Introspection>>();
  /** Introspection requests by outcome (the HTTP status, or "ERR": no answer) and their summed seconds (metrics). */
  readonly introspectionStats = new Map<string, { count: number; seconds: number }>();

  constructor(readonly config: OAuthDelegationConfig, private readonly serverConfig: Config, caches: CacheRegistry, private readonly clock: Clock) {
    this.http = new AuthServerHttp(serverConfig);
    this.clientAuth = new ClientAuthenticator(config.client);
    this.cache = caches.get<string, CachedIntrospection>("token_introspection", config.introspection_cache_size);
  }

  /**
   * The configured addresses of the authorization server that ip_range_blacklist refuses (IP literals and
   * localhost; names are resolved only when connecting): logged at start, since every token would fail.
   */
  blockedAddresses(): string[] {
    const policy = new OutboundIpPolicy({ blacklist: this.serverConfig.ip_range_blacklist, whitelist: this.serverConfig.ip_range_whitelist });
    const urls = [...this.config.metadata_urls, ...(this.config.introspection_endpoint ? [this.config.introspection_endpoint] : [])];
    const hosts = new Set(urls.map((u) => new URL(u).hostname.replace(/^\[|\]$/g, "")));
    return [...hosts].filter((h) => (h === "localhost" ? !policy.allows("127.0.0.1") : isIP(h) !== 0 && !policy.allows(h)));
  }

  /** The issuer's metadata (cached after the first success). AuthServerUnreachable when none could be had. */
  issuerMetadata(): Promise<Record<string, unknown>> {
    if (this.config.issuer_metadata) return Promise.resolve(this.config.issuer_metadata);
    this.metadata ??= this.loadMetadata().catch((err: unknown) => {
      this.metadata = undefined;
      throw err;
    });
    return this.metadata;
  }

  private async loadMetadata(): Promise<Record<string, unknown>> {
    const problems: string[] = [];
    for (const url of this.config.metadata_urls) {
      const res = await this.http.request(url, { method: "GET" });
      if (res.status === 200 && isObject(res.json) && typeof res.json.issuer === "string") return res.json;
      problems.push(`${url}: ${res.status === 200 ? "no metadata document" : `status ${res.status}`}`);
    }
    throw new AuthServerUnreachable(`no authorization server metadata: ${problems.join("; ")}`);
  }

  /** The issuer, as the metadata names it (else as configured). */
  async issuer(): Promise<string> {
    const m = await this.issuerMetadata();
    return typeof m.issuer === "string" ? m.issuer : this.config.issuer;
  }

  /** The account management page (MSC2965): the configured one, else the metadata's; undefined if none. */
  async accountManagementUrl(): Promise<string | undefined> {
    if (this.config.account_management_url) return this.config.account_management_url;
    try {
      const m = await this.issuerMetadata();
      return typeof m.account_management_uri === "string" ? m.account_management_uri : undefined;
    } catch {
      return undefined;
    }
  }

  private async introspectionEndpoint(): Promise<string> {
    if (this.config.introspection_endpoint) return this.config.introspection_endpoint;
    const m = await this.issuerMetadata();
    if (typeof m.introspection_endpoint !== "string") throw new AuthServerUnreachable("the authorization server's metadata has no introspection_endpoint");
    return m.introspection_endpoint;
  }

  /** Whether `token` is the configured admin token (compared in constant time, over digests). */
  isAdminToken(token: string): boolean {
    const admin = this.config.admin_token;
    return admin !== undefined && sameSecret(token, admin);
  }

  /** The introspection answer for `token`, from the cache when it is still fresh. */
  async introspect(token: string): Promise<Introspection> {
    const key = hashToken(token);
    const now = this.clock.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.result;
    if (hit) this.cache.delete(key);
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetchIntrospection(token).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    const result = await pending;
    let until = result.retrievedAtMs + this.config.introspection_cache_ttl;
    const exp = result.claims.exp;
    if (typeof exp === "number") until = Math.min(until, exp * 1000);
    if (until > this.clock.now()) this.cache.set(key, { result, until });
    return result;
  }

  /** The owner remembered for `token` while its answer is cached. */
  ownerOf(token: string): TokenOwner | undefined {
    const hit = this.cache.get(hashToken(token));
    return hit && hit.until > this.clock.now() ? hit.owner : undefined;
  }

  /** Remembers who `token` is while its answer stays cached. */
  rememberOwner(token: string, owner: TokenOwner): void {
    const hit = this.cache.get(hashToken(token));
    if (hit) hit.owner = owner;
  }

  /** Forgets every cached answer of the user's tokens (devices deleted, account locked or deactivated). */
  forgetUser(userId: string): void {
    this.cache.deleteWhere((e) => e.owner?.userId === userId);
  }

  private async fetchIntrospection(token: string): Promise<Introspection> {
    const endpoint = await this.introspectionEndpoint();
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      // MAS 0.15+ then gives compatibility sessions' device as `device_id` (as Synapse asks).
      "x-mas-supports-device-id": "1",
    };
    const form = new URLSearchParams({ token, token_type_hint: "access_token" });
    this.clientAuth.apply(endpoint, headers, form, this.clock.now());
    const started = performance.now();
    let outcome = "ERR";
    let res: Awaited<ReturnType<AuthServerHttp["request"]>>;
    try {
      res = await this.http.request(endpoint, { method: "POST", headers, body: form.toString() });
      outcome = String(res.status);
    } finally {
      const stat = this.introspectionStats.get(outcome) ?? { count: 0, seconds: 0 };
      stat.count++;
      stat.seconds += (performance.now() - started) / 1000;
      this.introspectionStats.set(outcome, stat);
    }
    if (res.status !== 200) throw new AuthServerUnreachable(`the introspection endpoint answered status ${res.status}`);
    if (!isObject(res.json)) throw new AuthServerUnreachable("the introspection endpoint's answer is not a JSON object");
    return { active: res.json.active === true, claims: res.json, retrievedAtMs: this.clock.now() };
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}
