// REST routes of MSC4108's rendezvous sessions (QR-code login's transport), with
// experimental_features.msc4108_enabled, where Synapse 1.163 serves them: POST
// /_matrix/client/unstable/org.matrix.msc4108/rendezvous, and GET/PUT/DELETE on the session URL it
// answers, /_synapse/client/rendezvous/{id}. With msc4108_delegation_endpoint the POST is a 307 there
// instead. No access token is read. Browsers may send If-Match and If-None-Match (server.ts's CORS).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute, route, type Call } from "../http.ts";
import {
  SESSION_PATH, createRendezvous, delegatedRendezvous, endRendezvous, readRendezvous, replaceRendezvous,
  type PayloadRequest, type RendezvousAnswer,
} from "../../domain/rendezvous/rendezvous.ts";

const header = (c: Call, name: string): string | undefined => {
  const v = c.req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
};

const payload = (c: Call): PayloadRequest => ({
  contentLength: header(c, "content-length"),
  contentType: header(c, "content-type"),
  body: Buffer.isBuffer(c.req.body) ? c.req.body : Buffer.alloc(0),
});

const answer = (c: Call, a: RendezvousAnswer) => c.reply.code(a.status).headers(a.headers).send(a.body);

export function rendezvousRoutes(app: FastifyInstance, s: Services): void {
  const delegation = s.config.experimental_features.msc4108_delegation_endpoint;
  if (delegation !== undefined) {
    clientRoute(app, s, { method: "POST", path: "/org.matrix.msc4108/rendezvous", auth: "none", versions: ["unstable"], handler: (c) => answer(c, delegatedRendezvous(delegation)) });
    return;
  }
  if (!s.config.experimental_features.msc4108_enabled) return;
  clientRoute(app, s, { method: "POST", path: "/org.matrix.msc4108/rendezvous", auth: "none", versions: ["unstable"], handler: (c) => answer(c, createRendezvous(s, payload(c))) });
  const session = [`/${SESSION_PATH}/:sessionId`];
  route(app, s, session, { method: "GET", path: "", auth: "none", handler: (c) => answer(c, readRendezvous(s, c.params.sessionId!, header(c, "if-none-match"))) });
  route(app, s, session, {
    method: "PUT", path: "", auth: "none",
    handler: (c) => answer(c, replaceRendezvous(s, c.params.sessionId!, { ...payload(c), ifMatch: header(c, "if-match") })),
  });
  route(app, s, session, { method: "DELETE", path: "", auth: "none", handler: (c) => answer(c, endRendezvous(s, c.params.sessionId!)) });
}
