// Synapse's `type: metrics` listener: a plain HTTP server of its own that answers GET /metrics (and
// /_synapse/metrics, the path Synapse's documentation scrapes) with the Prometheus text, nothing else.
import { createServer } from "node:http";
export const METRICS_PATHS = ["/metrics", "/_synapse/metrics"];
export async function startMetricsListener(listener, metrics, log) {
    const server = createServer((req, res) => {
        const path = (req.url ?? "/").split("?")[0];
        if ((req.method !== "GET" && req.method !== "HEAD") || !METRICS_PATHS.includes(path)) {
            res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Not found: metrics are at /metrics\n");
            return;
        }
        metrics.text().then((text) => res.writeHead(200, { "content-type": metrics.contentType }).end(req.method === "HEAD" ? undefined : text), (err) => {
            log.error({ err }, "collecting metrics failed");
            res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("collecting metrics failed\n");
        });
    });
    const host = listener.bind_addresses[0] ?? "127.0.0.1";
    await new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(listener.port, host, () => resolve());
    });
    const { port } = server.address();
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    return {
        url,
        close: () => new Promise((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
        }),
    };
}
