// Requests from this process to the others of its deployment (`instance_map`): a forwarded client or
// federation request, or an internal call such as the PDUs of one room for its writer. Every request
// carries `worker_replication_secret` as a bearer on the internal prefix `/_weft/replication/`. These
// addresses are the operator's (instance_map), so private and loopback addresses are dialled here — and
// only here: everything users or remote servers name goes through the outbound policy (net/outbound-agent.ts).
// An instance that cannot be reached (refused, reset, timed out) is Synapse's answer for a replication
// target that is down (synapse/replication/http/_base.py): 502 M_UNKNOWN "Failed to talk to X process",
// here with a Retry-After, so clients retry.
// Spec: none (process architecture).
import type { Pool } from "undici";
import { MatrixError, type ErrCode } from "../errors.ts";
import { undici } from "../net/undici.ts";
import type { ClusterTopology } from "./topology.ts";

/** Every internal route lives under this prefix. */
export const INTERNAL_PREFIX = "/_weft/replication";
/** A client or federation request forwarded as it came: `${FORWARD_PREFIX}${the url as sent}`. */
export const FORWARD_PREFIX = `${INTERNAL_PREFIX}/forward`;
/** The request's own Authorization, carried beside the internal one. */
export const FORWARDED_AUTHORIZATION = "x-weft-authorization";
/** The instance that forwarded a request (a second hop is refused: no loops). */
export const FORWARDED_BY = "x-weft-forwarded-by";
/** The client's address as the forwarding process saw it. */
export const FORWARDED_CLIENT_IP = "x-weft-client-ip";
/** Seconds a client is told to wait when the owner is unreachable. */
export const UNREACHABLE_RETRY_AFTER_S = 1;

export interface InternalResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** An owner that could not be reached: Synapse's 502 M_UNKNOWN, retryable. */
export function unreachable(instance: string, cause: unknown): MatrixError {
  return Object.assign(new MatrixError("M_UNKNOWN", `Failed to talk to ${instance} process`, 502), { cause });
}

export class InternalClient {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly topology: ClusterTopology) {}

  private pool(instance: string): Pool {
    let pool = this.pools.get(instance);
    if (pool) return pool;
    const loc = this.topology.locationOf(instance);
    if (!loc) throw new MatrixError("M_UNKNOWN", `Instance ${instance} is not in instance_map`, 500);
    const host = loc.host.includes(":") ? `[${loc.host}]` : loc.host;
    pool = new (undici().Pool)(`${loc.tls ? "https" : "http"}://${host}:${loc.port}`, {
      connections: 32,
      connectTimeout: 5_000,
      // A forwarded remote join may take its time (the other server's answer and the state it sends).
      headersTimeout: 300_000,
      bodyTimeout: 300_000,
      keepAliveTimeout: 30_000,
    });
    this.pools.set(instance, pool);
    return pool;
  }

  /** Sends one request to `instance`; its answer as it came, whatever the status. */
  async request(instance: string, req: { method: string; path: string; headers: Record<string, string | string[]>; body?: Buffer | string }): Promise<InternalResponse> {
    const secret = this.topology.replicationSecret;
    if (!secret) throw new MatrixError("M_UNKNOWN", "worker_replication_secret is not configured", 500);
    try {
      const res = await this.pool(instance).request({
        method: req.method as "GET",
        path: req.path,
        headers: { ...req.headers, authorization: `Bearer ${secret}`, [FORWARDED_BY]: this.topology.instanceName },
        body: req.body,
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      return { status: res.statusCode, headers: res.headers, body };
    } catch (err) {
      if (err instanceof MatrixError) throw err;
      throw unreachable(instance, err);
    }
  }

  /** An internal JSON call (POST) to `instance`: its JSON answer, or the MatrixError it answered. */
  async call(instance: string, route: string, body: unknown): Promise<Record<string, unknown>> {
    const res = await this.request(instance, { method: "POST", path: `${INTERNAL_PREFIX}${route}`, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(res.body.toString("utf8")) as Record<string, unknown>;
    } catch {
      throw unreachable(instance, new Error(`answered ${res.status} with no JSON`));
    }
    if (res.status !== 200) throw new MatrixError((typeof json.errcode === "string" ? json.errcode : "M_UNKNOWN") as ErrCode, typeof json.error === "string" ? json.error : `${instance} answered ${res.status}`, res.status);
    return json;
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())));
  }
}
