// A small recording push gateway for tests (Sygnal, Matrix's own gateway, is not on the package index this
// project can reach): POST /_matrix/push/v1/notify on a free loopback port, every body checked against the
// Push Gateway API's request schema and recorded; a test sets how it answers (accept, fail with 500,
// hang, answer garbage, reject pushkeys) and waits on what arrived, never on time.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { expectRequestMatchesSpec } from "./spec.ts";
import { Waiters } from "./waiters.ts";

export type GatewayMode = "ok" | "fail" | "hang" | "garbage" | { reject: string[] };

export interface Received {
  body: any;
  at: number;
}

export class RecordingGateway {
  readonly received: Received[] = [];
  /** Requests that arrived with a body the spec's schema refused (the error messages). */
  readonly invalid: string[] = [];
  mode: GatewayMode = "ok";
  private server: Server | undefined;
  private readonly waiters = new Waiters();
  private hanging: ServerResponse[] = [];
  attempts = 0;
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const port = (this.server.address() as { port: number }).port;
    this.url = `http://127.0.0.1:${port}/_matrix/push/v1/notify`;
    return this;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    this.attempts++;
    if (req.url !== "/_matrix/push/v1/notify" || req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    const mode = this.mode;
    if (mode === "hang") {
      this.hanging.push(res);
      this.wake();
      return;
    }
    if (mode === "fail") {
      res.writeHead(500, { "content-type": "application/json" }).end("{}");
      this.wake();
      return;
    }
    if (mode === "garbage") {
      res.writeHead(200, { "content-type": "application/json" }).end("<html>not json");
      this.wake();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    try {
      expectRequestMatchesSpec(body, "POST", "/_matrix/push/v1/notify");
    } catch (err) {
      this.invalid.push((err as Error).message);
    }
    this.received.push({ body, at: Date.now() });
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ rejected: typeof mode === "object" ? mode.reject : [] }));
    this.wake();
  }

  private wake(): void {
    this.waiters.check();
  }

  /** Resolves once `pred` holds (checked on every request), or fails after `ms`. */
  until(pred: () => boolean, ms = 15000, what = "the push gateway"): Promise<void> {
    return this.waiters.until(pred, ms, what);
  }

  /** Notifications (with an event_id) received so far. */
  events(): any[] {
    return this.received.map((r) => r.body.notification).filter((n) => n.event_id);
  }

  async stop(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.hanging = [];
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** Listens again on the same port (after stop). */
  async restart(): Promise<void> {
    const port = Number(new URL(this.url).port);
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
  }
}
