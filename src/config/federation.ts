// The federation options of homeserver.yaml, with Synapse's names and defaults: the TLS certificate of
// `tls: true` listeners, outbound certificate checks, the IP ranges outbound requests may reach, the
// trusted key servers (notaries), profile and device-name lookups over federation, and the `federation`
// section's backoff of unreachable destinations (the outbound send queues, src/federation/sender).
import { readFileSync } from "node:fs";
import path from "node:path";
import { ConfigError } from "./errors.ts";
import { DEFAULT_IP_RANGE_BLACKLIST, parseCidr, type Cidr } from "../domain/net/ip-ranges.ts";
import { decodeBase64Strict, ED25519, keyAlgorithm } from "../domain/signing.ts";

export interface TrustedKeyServer {
  server_name: string;
  /** Key id → unpadded base64 public key; the notary's responses must carry a signature by one of them. */
  verify_keys?: Record<string, string>;
  accept_keys_insecurely: boolean;
}

export interface FederationConfig {
  /** PEM files of `tls: true` listeners (Synapse's tls_certificate_path / tls_private_key_path). */
  tls_certificate_path?: string;
  tls_private_key_path?: string;
  /** Check remote servers' certificates (default true; false only for test setups). */
  federation_verify_certificates: boolean;
  /** Server names (globs such as `*.example.com`) whose certificates are not checked. */
  federation_certificate_verification_whitelist: string[];
  /** Addresses outbound requests refuse (Synapse's defaults: loopback, private, link-local ...). */
  ip_range_blacklist: Cidr[];
  /** Addresses let through although blacklisted. */
  ip_range_whitelist: Cidr[];
  /** Notaries asked for a server's keys when the server itself does not answer (default matrix.org). */
  trusted_key_servers: TrustedKeyServer[];
  suppress_key_server_warning: boolean;
  /** Answer GET /_matrix/federation/v1/query/profile (Synapse's option; default true). */
  allow_profile_lookup_over_federation: boolean;
  /** Let other servers read our published room directory (Synapse's option; default false). */
  allow_public_rooms_over_federation: boolean;
  /**
   * Tell other servers our users' device display names (in /user/keys/query, /user/devices and
   * m.device_list_update EDUs; Synapse's option, default false: the names stay private).
   */
  allow_device_name_lookup_over_federation: boolean;
  /** Synapse's `federation` section (the parts Weft has). */
  federation: FederationSection;
  /**
   * Send events and EDUs to other servers (Synapse's `send_federation`, default true; Synapse's
   * `federation_sender_instances: []` says the same). Off, this server still answers federation requests
   * and makes joins, invites and queries itself, but queues nothing for other servers.
   */
  send_federation: boolean;
}

/**
 * Backoff of a destination that does not answer (Synapse's option names). A transaction that fails while
 * the destination is up is first tried again `max_long_retries` times, after 4, 16, 64 ... seconds (at
 * most `max_long_retry_delay`, jittered ×0.8–1.4), as Synapse's federation client retries a transaction
 * (so a server back after a restart gets what waited within seconds); then the destination is down: the
 * first retry after `destination_min_retry_interval`, each next one `destination_retry_multiplier` times
 * later (jittered), never more than `destination_max_retry_interval` apart. Weft's minimum defaults to 1
 * minute (Synapse: 10 minutes).
 */
export interface FederationSection {
  destination_min_retry_interval: number;
  destination_retry_multiplier: number;
  destination_max_retry_interval: number;
  max_long_retries: number;
  max_long_retry_delay: number;
}

/** What federation.ts needs of config.ts's option reader. */
export interface OptionReader {
  has(key: string): boolean;
  bool(key: string, def: boolean): boolean;
  optString(key: string): string | undefined;
  list(key: string): unknown[];
  section(key: string): SectionReader;
}

/** What the `federation` section needs of a nested reader. */
export interface SectionReader {
  number(key: string, def: number, opts?: { min?: number; max?: number; integer?: boolean }): number;
  duration(key: string, def?: number): number | undefined;
}

function federationSection(r: OptionReader): FederationSection {
  const f = r.section("federation");
  const min = f.duration("destination_min_retry_interval", 60_000)!;
  const max = f.duration("destination_max_retry_interval", 86_400_000)!;
  if (min <= 0) throw new ConfigError("federation.destination_min_retry_interval", "must be more than 0");
  if (max < min) throw new ConfigError("federation.destination_max_retry_interval", "must not be less than destination_min_retry_interval");
  return {
    destination_min_retry_interval: min,
    destination_retry_multiplier: f.number("destination_retry_multiplier", 2, { min: 1 }),
    destination_max_retry_interval: max,
    max_long_retries: f.number("max_long_retries", 10, { min: 0, integer: true }),
    max_long_retry_delay: f.duration("max_long_retry_delay", 60_000)!,
  };
}

const SERVER_NAME = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]{1,255})(?::\d{1,5})?$/;

function ranges(r: OptionReader, key: string, def: readonly string[]): Cidr[] {
  const list = r.has(key) ? r.list(key) : def;
  return list.map((v, i) => {
    if (typeof v !== "string") throw new ConfigError(`${key}[${i}]`, "must be a string such as \"10.0.0.0/8\"");
    try {
      return parseCidr(v);
    } catch (err) {
      throw new ConfigError(`${key}[${i}]`, (err as Error).message);
    }
  });
}

function trustedKeyServers(r: OptionReader, verifyCertificates: boolean): TrustedKeyServer[] {
  const raw = r.has("trusted_key_servers") ? r.list("trusted_key_servers") : [{ server_name: "matrix.org" }];
  return raw.map((entry, i) => {
    const name = `trusted_key_servers[${i}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new ConfigError(name, "must be a mapping with server_name");
    const e = entry as Record<string, unknown>;
    if (typeof e.server_name !== "string" || !SERVER_NAME.test(e.server_name)) throw new ConfigError(`${name}.server_name`, "must be a server name");
    let verify_keys: Record<string, string> | undefined;
    if (e.verify_keys !== undefined && e.verify_keys !== null) {
      if (typeof e.verify_keys !== "object" || Array.isArray(e.verify_keys)) throw new ConfigError(`${name}.verify_keys`, "must map key ids to base64 keys");
      verify_keys = {};
      for (const [keyId, key] of Object.entries(e.verify_keys)) {
        if (keyAlgorithm(keyId) !== ED25519) throw new ConfigError(`${name}.verify_keys`, `unsupported signing algorithm on key ${keyId}`);
        const raw = typeof key === "string" ? decodeBase64Strict(key) : undefined;
        if (!raw || raw.length !== 32) throw new ConfigError(`${name}.verify_keys.${keyId}`, "must be an unpadded base64 ed25519 public key");
        verify_keys[keyId] = key as string;
      }
    }
    const accept = e.accept_keys_insecurely === true;
    // Synapse's rule: without certificate checks, only a notary's signature vouches for its answers.
    if (!verifyCertificates && !accept && (!verify_keys || Object.keys(verify_keys).length === 0))
      throw new ConfigError(name, "needs verify_keys when federation_verify_certificates is false (or accept_keys_insecurely: true)");
    return { server_name: e.server_name, verify_keys, accept_keys_insecurely: accept };
  });
}

export function readFederationConfig(r: OptionReader, baseDir: string, anyTlsListener: boolean): FederationConfig {
  const cert = r.optString("tls_certificate_path");
  const key = r.optString("tls_private_key_path");
  if (anyTlsListener && (!cert || !key))
    throw new ConfigError(cert ? "tls_private_key_path" : "tls_certificate_path", "is required when a listener has tls: true");
  const verify = r.bool("federation_verify_certificates", true);
  const whitelist = r.list("federation_certificate_verification_whitelist").map((v, i) => {
    if (typeof v !== "string" || v === "") throw new ConfigError(`federation_certificate_verification_whitelist[${i}]`, "must be a server name or glob");
    return v;
  });
  return {
    tls_certificate_path: cert ? path.resolve(baseDir, cert) : undefined,
    tls_private_key_path: key ? path.resolve(baseDir, key) : undefined,
    federation_verify_certificates: verify,
    federation_certificate_verification_whitelist: whitelist,
    ip_range_blacklist: ranges(r, "ip_range_blacklist", DEFAULT_IP_RANGE_BLACKLIST),
    ip_range_whitelist: ranges(r, "ip_range_whitelist", []),
    trusted_key_servers: trustedKeyServers(r, verify),
    suppress_key_server_warning: r.bool("suppress_key_server_warning", false),
    allow_profile_lookup_over_federation: r.bool("allow_profile_lookup_over_federation", true),
    allow_public_rooms_over_federation: r.bool("allow_public_rooms_over_federation", false),
    allow_device_name_lookup_over_federation: r.bool("allow_device_name_lookup_over_federation", false),
    federation: federationSection(r),
    send_federation: r.bool("send_federation", true) && !(r.has("federation_sender_instances") && r.list("federation_sender_instances").length === 0),
  };
}

/** Reads the TLS certificate and key of `tls: true` listeners; a ConfigError names the unreadable file. */
export function readTlsFiles(c: FederationConfig): { cert: Buffer; key: Buffer } {
  const read = (option: string, file: string | undefined) => {
    if (!file) throw new ConfigError(option, "is required when a listener has tls: true");
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError(option, `cannot read ${file}: ${(err as Error).message}`);
    }
  };
  return { cert: read("tls_certificate_path", c.tls_certificate_path), key: read("tls_private_key_path", c.tls_private_key_path) };
}
