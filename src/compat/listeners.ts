// The HTTP listeners (homeserver.yaml `listeners` of type http, Synapse's option): every one is served, on
// each of its bind addresses, by the one Fastify app — plain HTTP or HTTPS per listener, each answering only
// the resources it names (Synapse's resource names and the paths each covers), so a client listener on 8008
// and a TLS federation listener on 8448 work as they do in Synapse.
import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Listener } from "../config/config.ts";
import { httpListeners } from "../config/config.ts";
import { readTlsFiles } from "../config/federation.ts";
import type { Services } from "../domain/services.ts";
import { internalMark } from "./internal-request.ts";

/** The listener a request arrived on, kept on the raw request (and on upgrade requests). */
const LISTENER = Symbol("weft.listener");
type Tagged = http.IncomingMessage & { [LISTENER]?: Listener };
type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Fastify's own defaults, which it sets only on servers it creates itself. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** Headers a reverse proxy sets: trusted only on a listener with `x_forwarded: true`. */
const FORWARDED_HEADERS = ["x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-forwarded-port"];

/**
 * The resources that serve a path (after path-aliases.ts rewrote it to its canonical form), by Synapse's
 * names; `undefined` for /health, which every listener serves. Paths of no resource below are the client's
 * (the GraphQL face, the admin API, SSO pages, .well-known, unknown paths: 404 on every listener alike).
 */
export function resourcesOf(url: string): readonly string[] | undefined {
  const path = url.split("?", 1)[0]!;
  if (path === "/health") return undefined;
  // Internal requests (compat/cluster.ts) are served on every listener to whoever carries the secret.
  if (path.startsWith("/_weft/replication/")) return undefined;
  if (path.startsWith("/_matrix/client/v1/media/")) return ["client", "media"];
  if (path.startsWith("/_matrix/federation/")) {
    if (path.startsWith("/_matrix/federation/v1/openid/userinfo")) return ["federation", "openid"];
    if (path.startsWith("/_matrix/federation/v1/media/")) return ["federation", "media"];
    return ["federation"];
  }
  if (path.startsWith("/_matrix/key/")) return ["keys", "federation"];
  if (path.startsWith("/_matrix/media/")) return ["media", "federation", "client"];
  if (path === "/_matrix/static" || path.startsWith("/_matrix/static/")) return ["static", "client"];
  if (path === "/_synapse/metrics") return ["metrics"];
  return ["client"];
}

/** The listener `req` arrived on (a server of ours tags every request it hands on). */
export function listenerOf(req: FastifyRequest): Listener | undefined {
  return (req.raw as Tagged)[LISTENER];
}

/** Whether the listener a request arrived on serves its path. */
export function listenerServes(req: FastifyRequest): boolean {
  const listener = listenerOf(req);
  // A request another instance forwarded reached the listener instance_map names for it.
  if (internalMark(req.raw)) return true;
  const needed = resourcesOf(req.url);
  return !listener || !needed || needed.some((name) => listener.resources.includes(name));
}

/** The node server for one listener: its requests tagged with it, its forwarded headers kept only if trusted. */
function createListenerServer(s: Services, listener: Listener, handler: Handler): http.Server {
  const trustsProxies = s.config.listeners.some((l) => l.x_forwarded);
  const tag = (req: Tagged) => {
    req[LISTENER] = listener;
    // trustProxy is one setting of the app: a listener that does not sit behind a proxy drops what a
    // client wrote in these headers, so req.ip is the peer's address there.
    if (trustsProxies && !listener.x_forwarded) for (const h of FORWARDED_HEADERS) delete req.headers[h];
  };
  const onRequest: Handler = (req, res) => {
    tag(req);
    handler(req, res);
  };
  const tls = listener.tls ? readTlsFiles(s.config) : undefined;
  const server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, onRequest) : http.createServer(onRequest);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.requestTimeout = 0;
  // WebSocket upgrades (GraphQL subscriptions) are tagged too; the main server's are handled by Fastify.
  server.prependListener("upgrade", (req: Tagged) => tag(req));
  return server;
}

/**
 * Fastify's `serverFactory`: the main server is the first http listener's, created like every other
 * listener's so that its requests carry their listener too.
 */
export function mainServerFactory(s: Services): (handler: Handler) => http.Server {
  return (handler) => createListenerServer(s, httpListeners(s.config)[0]!, handler);
}

export interface Serving {
  /** Base URLs, one per listener and bind address, the main one first (e.g. http://127.0.0.1:8008). */
  urls: string[];
  /** Stops the other servers accepting and lets their requests finish (the main one closes with the app). */
  close(): Promise<void>;
  /** Ends every connection still open on the other servers (a shutdown's grace period is over). */
  closeAll(): void;
}

function baseUrl(listener: Listener, server: http.Server): string {
  const address = server.address();
  if (!address || typeof address === "string") return String(address);
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `${listener.tls ? "https" : "http"}://${host}:${address.port}`;
}

function listenOn(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    server.listen({ port, host }, () => {
      server.removeListener("error", onError);
      resolve();
    });
  });
}

/**
 * Serves every http listener on every bind address: the first through `app.listen` (port overridable, 0
 * for a free one), the others by servers of their own handing requests to the same app. As in Synapse,
 * 0.0.0.0 already covered by a dual-stack `::` on the same port is reported and skipped.
 */
export async function serveListeners(app: FastifyInstance, s: Services, portOverride: number | undefined): Promise<Serving> {
  const [first, ...rest] = httpListeners(s.config);
  const firstPort = portOverride ?? first!.port;
  await app.listen({ port: firstPort, host: first!.bind_addresses[0] });
  const urls = [baseUrl(first!, app.server)];
  const extra: http.Server[] = [];
  const boundPort = (app.server.address() as { port: number }).port;
  const bindings = [
    ...first!.bind_addresses.slice(1).map((host) => ({ listener: first!, host, port: boundPort })),
    ...rest.flatMap((listener) => listener.bind_addresses.map((host) => ({ listener, host, port: listener.port }))),
  ];
  try {
    for (const { listener, host, port } of bindings) {
      const server = createListenerServer(s, listener, app.routing as Handler);
      server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => app.server.emit("clientError", err, socket));
      // Upgrades go to the WebSocket handling the app installed on its own server.
      server.on("upgrade", (req, socket, head) => app.server.emit("upgrade", req, socket, head));
      try {
        await listenOn(server, port, host);
      } catch (err) {
        const dualStack = host === "0.0.0.0" && (err as NodeJS.ErrnoException).code === "EADDRINUSE" && listener.bind_addresses.includes("::");
        if (!dualStack) throw err;
        s.log.warn({ port }, "listening on [::] covers 0.0.0.0 on this system: not binding it again");
        continue;
      }
      extra.push(server);
      urls.push(baseUrl(listener, server));
    }
  } catch (err) {
    await Promise.all(extra.map((server) => new Promise((r) => server.close(r))));
    throw err;
  }
  return {
    urls,
    async close() {
      await Promise.all(
        extra.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeIdleConnections();
            }),
        ),
      );
    },
    closeAll() {
      for (const server of extra) server.closeAllConnections();
    },
  };
}
