// Server identity over HTTP: GET /_matrix/key/v2/server (our signed verify keys, valid_until_ts in ms),
// the notary's GET/POST /_matrix/key/v2/query, and the .well-known discovery documents. Spec:
// Server-Server API "Publishing Keys", "Querying Keys Through Another Server", Client-Server API "Server
// Discovery" and Server-Server API "Resolving server names".
import { supportInfo } from "../domain/server/support.ts";
import { clientWellKnown } from "../domain/server/client-discovery.ts";
import type { FastifyInstance } from "fastify";
import type { Services } from "../domain/services.ts";
import { buildServerKeysResponse } from "../domain/keys/server-keys.ts";
import { MatrixError } from "../domain/errors.ts";
import { canonicalJson } from "../domain/canonical-json.ts";
import { parseKeyQuery, queryServerKeys } from "../domain/keys/notary.ts";
import { brandedRoute, queryInt, route, type Call } from "./http.ts";

export function keyRoutes(app: FastifyInstance, s: Services): void {
  // Sent as canonical JSON, as Synapse does: a checker may verify the signatures over the bytes as served
  // with `signatures` cut out (Complement does), which only works when the rest is already canonical.
  const ownKeys = (c: Call) => {
    const doc = buildServerKeysResponse({ serverName: s.config.server_name, keys: s.signingKeys, validityMs: s.config.key_refresh_interval, now: s.clock.now() });
    return c.reply.code(200).type("application/json").send(canonicalJson(doc));
  };
  brandedRoute(app, s, "key/v2", { method: "GET", path: "/server", auth: "none", handler: ownKeys });
  // Deprecated form with a key id; the spec says servers should ignore it and return all keys.
  brandedRoute(app, s, "key/v2", { method: "GET", path: "/server/:keyId", auth: "none", handler: ownKeys });

  // The notary. The deprecated form with a key id asks for that key only.
  const queryOne = (c: Call) => {
    const min = queryInt(c, "minimum_valid_until_ts", { min: 0 });
    const criteria = min === undefined ? {} : { minimum_valid_until_ts: min };
    return queryServerKeys(s, { [c.params.serverName!]: c.params.keyId ? { [c.params.keyId]: criteria } : {} });
  };
  brandedRoute(app, s, "key/v2", { method: "GET", path: "/query/:serverName", auth: "none", handler: queryOne });
  brandedRoute(app, s, "key/v2", { method: "GET", path: "/query/:serverName/:keyId", auth: "none", handler: queryOne });
  brandedRoute(app, s, "key/v2", { method: "POST", path: "/query", auth: "none", handler: (c) => queryServerKeys(s, parseKeyQuery(c.body())) });
}

export function wellKnownRoutes(app: FastifyInstance, s: Services): void {
  route(app, s, ["/.well-known/matrix/client"], {
    method: "GET", path: "", auth: "none",
    handler: () => clientWellKnown(s),
  });
  route(app, s, ["/.well-known/matrix/support"], { method: "GET", path: "", auth: "none", handler: () => supportInfo(s) });
  route(app, s, ["/.well-known/matrix/server"], {
    method: "GET", path: "", auth: "none",
    handler: () => {
      if (!s.config.serve_server_wellknown) throw new MatrixError("M_NOT_FOUND", "No .well-known/matrix/server here", 404);
      const base = new URL(s.config.public_baseurl);
      const port = base.port || (base.protocol === "https:" ? "443" : "80");
      return { "m.server": `${base.hostname}:${port}` };
    },
  });
}
