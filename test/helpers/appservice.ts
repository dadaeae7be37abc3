// Application services for tests: registration files (app_service_config_files), and a recording
// service — the Application Service API's endpoints on a free loopback port, each request's hs_token
// checked and each body validated against the spec's schemas, transactions recorded once per txnId (as a
// service deduplicates them). A test sets how it answers (accept, fail with 500, hang, be down) and what
// its queries and third-party lookups return, and waits on what arrived, never on time.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import YAML from "yaml";
import { expectRequestMatchesSpec, findOperation } from "./spec.ts";
import { Waiters } from "./waiters.ts";

/** A registration file with one exclusive user namespace (and optionally an alias namespace), no URL. */
export function writeAppServiceFile(o: { id: string; asToken: string; hsToken: string; senderLocalpart: string; userRegex: string; aliasRegex?: string }): string {
  return writeRegistration({
    id: o.id,
    url: null,
    as_token: o.asToken,
    hs_token: o.hsToken,
    sender_localpart: o.senderLocalpart,
    namespaces: {
      users: [{ exclusive: true, regex: o.userRegex }],
      ...(o.aliasRegex ? { aliases: [{ exclusive: true, regex: o.aliasRegex }] } : {}),
    },
  });
}

/** Writes a registration (any fields, as YAML) to a fresh file and returns its path. */
export function writeRegistration(reg: Record<string, unknown>): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "weft-as-")), `${String(reg.id ?? "as")}.yaml`);
  writeFileSync(file, YAML.stringify(reg));
  return file;
}

export type ServiceMode = "ok" | "fail" | "hang";

export interface Transaction {
  txnId: string;
  body: any;
}

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
}

type Answer = { status: number; body: unknown } | undefined;
type Handler = (req: SeenRequest, body: any) => Answer | Promise<Answer>;

export class RecordingAppService {
  /** Transactions accepted, in order, each txnId once. */
  readonly transactions: Transaction[] = [];
  /** Every request that reached the service (transactions retried included). */
  readonly requests: SeenRequest[] = [];
  /** Bodies the spec's request schema refused, and requests without the right hs_token. */
  readonly invalid: string[] = [];
  mode: ServiceMode = "ok";
  /** Answers to GET users/rooms/thirdparty and POST ping (undefined: 404 M_NOT_FOUND; ping: {}). */
  handler: Handler = () => undefined;
  url = "";
  private server: Server | undefined;
  private readonly waiters = new Waiters();
  private hanging: ServerResponse[] = [];
  private readonly seenTxns = new Set<string>();

  constructor(readonly hsToken: string) {}

  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const u = new URL(req.url!, this.url);
    const seen: SeenRequest = { method: req.method!, path: u.pathname, query: u.searchParams, authorization: req.headers.authorization };
    this.requests.push(seen);
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      this.wake();
    };
    if (!findOperation(seen.method, seen.path)) this.invalid.push(`undocumented request ${seen.method} ${seen.path}`);
    if (seen.authorization !== `Bearer ${this.hsToken}`) {
      this.invalid.push(`${seen.method} ${seen.path}: Authorization ${seen.authorization}`);
      return answer(403, { errcode: "M_FORBIDDEN" });
    }
    if (this.mode === "hang") {
      this.hanging.push(res);
      this.wake();
      return;
    }
    if (this.mode === "fail") return answer(500, { errcode: "M_UNKNOWN", error: "down for maintenance" });
    let body: any;
    const text = Buffer.concat(chunks).toString("utf8");
    if (text !== "") body = JSON.parse(text);
    const txn = /^\/_matrix\/app\/v1\/transactions\/([^/]+)$/.exec(seen.path);
    if (txn && seen.method === "PUT") {
      try {
        expectRequestMatchesSpec(body, "PUT", seen.path);
      } catch (err) {
        this.invalid.push((err as Error).message);
      }
      const txnId = decodeURIComponent(txn[1]!);
      if (!this.seenTxns.has(txnId)) {
        this.seenTxns.add(txnId);
        this.transactions.push({ txnId, body });
      }
      return answer(200, {});
    }
    if (seen.method === "POST" && seen.path === "/_matrix/app/v1/ping") {
      try {
        expectRequestMatchesSpec(body, "POST", seen.path);
      } catch (err) {
        this.invalid.push((err as Error).message);
      }
    }
    const custom = await this.handler(seen, body);
    if (custom) return answer(custom.status, custom.body);
    if (seen.path === "/_matrix/app/v1/ping") return answer(200, {});
    return answer(404, { errcode: "M_NOT_FOUND" });
  }

  private wake(): void {
    this.waiters.check();
  }

  /** Resolves once `pred` holds (checked on every request), or fails after `ms`. */
  until(pred: () => boolean, ms = 20_000, what = "the application service"): Promise<void> {
    return this.waiters.until(pred, ms, what);
  }

  /** Room events received in accepted transactions, in order. */
  events(): any[] {
    return this.transactions.flatMap((t) => t.body.events as any[]);
  }

  /** Ephemeral data received under `field`, in order. */
  ephemeral(field = "ephemeral"): any[] {
    return this.transactions.flatMap((t) => (t.body[field] as any[] | undefined) ?? []);
  }

  /** Message bodies received in a room, in order. */
  bodies(roomId: string): string[] {
    return this.events().filter((e) => e.room_id === roomId && e.type === "m.room.message").map((e) => e.content.body as string);
  }

  /** Stops listening (the service is down: connections are refused); hanging requests are cut. */
  async stop(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.hanging = [];
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** Listens again on the same port (after stop). */
  async restart(): Promise<void> {
    await this.start(this.port);
  }

  /** A registration for this service (url set), merged over the given fields. */
  registration(reg: Record<string, unknown>): Record<string, unknown> {
    return { url: this.url, hs_token: this.hsToken, ...reg };
  }
}
