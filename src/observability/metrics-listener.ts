// Synapse's `type: metrics` listener: a plain HTTP server of its own that answers GET /metrics (and
// /_synapse/metrics, the path Synapse's documentation scrapes) with the Prometheus text, nothing else.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Listener } from "../config/config.ts";
import type { Metrics } from "./metrics.ts";

export const METRICS_PATHS = ["/metrics", "/_synapse/metrics"];

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsListener(listener: Listener, metrics: Metrics, log: Logger): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if ((req.method !== "GET" && req.method !== "HEAD") || !METRICS_PATHS.includes(path)) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found: metrics are at /metrics\n");
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { "content-type": metrics.contentType }).end(req.method === "HEAD" ? undefined : text),
      (err: unknown) => {
        log.error({ err }, "collecting metrics failed");
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("collecting metrics failed\n");
      },
    );
  });
  const host = listener.bind_addresses[0] ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listener.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return {
    url,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
