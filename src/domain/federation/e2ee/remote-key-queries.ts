// A local client's /keys/query and /keys/claim for users of other servers: one signed request per server
// (POST /_matrix/federation/v1/user/keys/query or /user/keys/claim, all that server's users at once), all
// servers at the same time, each bounded by the request's `timeout`. A server that fails or does not
// answer in time is reported in `failures` ({status, message}, as Synapse); what a server answers is
// checked and only its own users' valid keys — those asked for — are kept.
// Spec: Client-Server API "POST /keys/query", "POST /keys/claim"; Server-Server API "End-to-End Encryption".
import type { Services } from "../../services.ts";
import { FederationError } from "../../../federation/errors.ts";
import { isPlainObject, type Json } from "../../e2ee/json.ts";
import { isUserOf, remoteCrossSigning, remoteDeviceKeys } from "./remote-key-shapes.ts";

/** A request's `timeout` in ms, bounded: at most 60 s; the spec's default 10 s when absent or not a non-negative number. */
export function requestTimeout(t: unknown): number {
  return typeof t === "number" && Number.isFinite(t) && t >= 0 ? Math.min(t, 60_000) : 10_000;
}

/** The `failures` entry of a server that could not be asked (Synapse's shape). */
export function failureOf(err: unknown): Json {
  if (err instanceof FederationError && err.kind === "remote" && err.remoteStatus !== undefined) return { status: err.remoteStatus, message: err.message };
  if (err instanceof FederationError && err.kind === "timeout") return { status: 504, message: "Timed out" };
  return { status: 503, message: err instanceof Error ? err.message : "Unreachable" };
}

/**
 * Runs `ask` for every server at once, each limited to `timeoutMs` whatever stage the request is in
 * (a connection that hangs in its handshake too: the request is aborted then); failures by server.
 */
async function perServer<T>(s: Services, servers: Iterable<string>, timeoutMs: number, ask: (server: string, opts: { timeoutMs: number; signal: AbortSignal }) => Promise<T>): Promise<{ answers: Map<string, T>; failures: Record<string, Json> }> {
  const answers = new Map<string, T>();
  const failures: Record<string, Json> = {};
  await Promise.all(
    [...servers].map(async (server) => {
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          abort.abort();
          reject(new FederationError("timeout", server, `no answer within ${timeoutMs} ms`));
        }, timeoutMs);
      });
      try {
        answers.set(server, await Promise.race([ask(server, { timeoutMs: Math.max(timeoutMs, 1), signal: abort.signal }), deadline]));
      } catch (err) {
        s.log.info({ server, err: err instanceof Error ? err.message : String(err) }, "E2EE key request to another server failed");
        failures[server] = failureOf(err);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { answers, failures };
}

export interface RemoteKeys {
  device_keys: Record<string, Record<string, Json>>;
  master_keys: Record<string, Json>;
  self_signing_keys: Record<string, Json>;
}

/** Keys of remote users, asked of their servers: `byServer` maps each server to its users and their wanted devices ([] = all). */
export async function queryRemoteKeys(s: Services, byServer: ReadonlyMap<string, Map<string, string[]>>, timeoutMs: number): Promise<RemoteKeys & { failures: Record<string, Json> }> {
  const out: RemoteKeys = { device_keys: {}, master_keys: {}, self_signing_keys: {} };
  const { answers, failures } = await perServer(s, byServer.keys(), timeoutMs, (server, opts) =>
    s.federation.postJson(server, "/_matrix/federation/v1/user/keys/query", { device_keys: Object.fromEntries(byServer.get(server)!) }, opts),
  );
  for (const [server, answer] of answers) {
    const asked = byServer.get(server)!;
    if (!isPlainObject(answer)) {
      failures[server] = { status: 502, message: "Invalid response" };
      continue;
    }
    const dk = isPlainObject(answer.device_keys) ? answer.device_keys : {};
    const mk = isPlainObject(answer.master_keys) ? answer.master_keys : {};
    const ssk = isPlainObject(answer.self_signing_keys) ? answer.self_signing_keys : {};
    for (const [userId, wanted] of asked) {
      if (!isUserOf(userId, server)) continue;
      const devices: Record<string, Json> = {};
      const given = dk[userId];
      if (isPlainObject(given))
        for (const [deviceId, given_] of Object.entries(given)) {
          const keys = wanted.length === 0 || wanted.includes(deviceId) ? remoteDeviceKeys(given_, userId, deviceId) : undefined;
          if (keys) devices[deviceId] = keys;
        }
      out.device_keys[userId] = devices;
      const cs = remoteCrossSigning(userId, mk[userId], ssk[userId]);
      if (cs.master) out.master_keys[userId] = cs.master;
      if (cs.selfSigning) out.self_signing_keys[userId] = cs.selfSigning;
    }
  }
  return { ...out, failures };
}

/**
 * A claimed key as the spec shapes it — the key itself, or `{ key, signatures, fallback? }` with
 * signatures as user → key id → signature — rebuilt from those fields only (a remote answer is untrusted:
 * nothing else, and no nesting beyond that, reaches our client).
 */
function oneTimeKeyOf(k: unknown): string | Record<string, unknown> | undefined {
  if (typeof k === "string") return k;
  if (!isPlainObject(k) || typeof k.key !== "string") return undefined;
  // The spec's KeyObject: `key` and `signatures` are both required.
  if (!isPlainObject(k.signatures)) return undefined;
  const signatures: Record<string, Record<string, string>> = {};
  for (const [user, sigs] of Object.entries(k.signatures)) {
    if (!isPlainObject(sigs)) return undefined;
    const byKey: Record<string, string> = {};
    for (const [keyId, sig] of Object.entries(sigs)) {
      if (typeof sig !== "string") return undefined;
      byKey[keyId] = sig;
    }
    signatures[user] = byKey;
  }
  const out: Record<string, unknown> = { key: k.key, signatures };
  if (k.fallback === true) out.fallback = true;
  return out;
}

/** One-time keys of remote devices, claimed from their servers: `byServer` maps each server to user → device → algorithm. */
export async function claimRemoteKeys(s: Services, byServer: ReadonlyMap<string, Record<string, Record<string, string>>>, timeoutMs: number): Promise<{ one_time_keys: Record<string, Record<string, Record<string, unknown>>>; failures: Record<string, Json> }> {
  const out: Record<string, Record<string, Record<string, unknown>>> = {};
  const { answers, failures } = await perServer(s, byServer.keys(), timeoutMs, (server, opts) =>
    s.federation.postJson(server, "/_matrix/federation/v1/user/keys/claim", { one_time_keys: byServer.get(server)! }, opts),
  );
  for (const [server, answer] of answers) {
    const asked = byServer.get(server)!;
    const otk = isPlainObject(answer) && isPlainObject(answer.one_time_keys) ? answer.one_time_keys : undefined;
    if (!otk) {
      failures[server] = { status: 502, message: "Invalid response" };
      continue;
    }
    for (const [userId, devices] of Object.entries(asked)) {
      const given = otk[userId];
      if (!isUserOf(userId, server) || !isPlainObject(given)) continue;
      for (const [deviceId, algorithm] of Object.entries(devices)) {
        const keys = given[deviceId];
        if (!isPlainObject(keys)) continue;
        // At most one key per device, of the algorithm asked for, shaped as <algorithm>:<key id>.
        for (const [id, k] of Object.entries(keys)) {
          if (!id.startsWith(`${algorithm}:`) || id.length <= algorithm.length + 1) continue;
          const key = oneTimeKeyOf(k);
          if (key === undefined) continue;
          (out[userId] ??= {})[deviceId] = { [id]: key };
          break;
        }
      }
    }
  }
  return { one_time_keys: out, failures };
}
