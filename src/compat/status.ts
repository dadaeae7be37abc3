// Pages for people and probes rather than Matrix clients: `/health` ("OK", as Synapse), the "it works" page
// at /_matrix/static/ (and `/` redirecting to it, as Synapse does), and the Prometheus metrics at
// /_synapse/metrics on an http listener that names the `metrics` resource (with enable_metrics).
import type { FastifyInstance } from "fastify";
import type { Services } from "../domain/services.ts";
import type { Metrics } from "../observability/metrics.ts";
import { httpListeners } from "../config/config.ts";

const escapeHtml = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function itWorksPage(s: Services): string {
  const name = escapeHtml(s.config.server_name);
  const base = escapeHtml(s.config.public_baseurl);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Weft is running</title>
<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;line-height:1.5;color:#222}code{background:#f2f2f2;padding:0 .2em}</style>
</head>
<body>
<h1>It works! Weft is running</h1>
<p>This is <strong>${name}</strong>, a Matrix homeserver. It is listening on this port and ready for clients and other servers.</p>
<p>To chat, use a Matrix client (Element, FluffyChat, Hydrogen, matrix-nio ...) with the homeserver URL <code>${base}</code>.</p>
<p>Web frontends can use the GraphQL API: open <a href="/graphql">/graphql</a> in a browser to explore it.</p>
</body>
</html>
`;
}

export function statusRoutes(app: FastifyInstance, s: Services, metrics: Metrics | undefined): void {
  app.get("/health", async (_req, reply) => reply.type("text/plain; charset=utf-8").send("OK"));

  const page = itWorksPage(s);
  app.get("/", async (_req, reply) => reply.redirect("/_matrix/static/", 302));
  for (const url of ["/_matrix/static", "/_matrix/static/"])
    app.get(url, async (_req, reply) =>
      reply.type("text/html; charset=utf-8").header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'").send(page),
    );

  if (metrics && httpListeners(s.config).some((l) => l.resources.includes("metrics"))) {
    app.get("/_synapse/metrics", async (_req, reply) => reply.type(metrics.contentType).send(await metrics.text()));
  }
}
