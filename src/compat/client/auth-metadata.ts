// REST routes of the authorization server's discovery (spec v1.15 "OAuth 2.0 API": GET /v1/auth_metadata;
// MSC2965's unstable /org.matrix.msc2965/auth_metadata and /auth_issuer). Unauthenticated; cacheable as
// Synapse marks them. The domain says which server (src/domain/server/auth-metadata.ts).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { clientRoute } from "../http.ts";
import { authIssuer, authMetadata, unrecognized } from "../../domain/server/auth-metadata.ts";

const CACHE_CONTROL = "public, max-age=600, s-maxage=3600, stale-while-revalidate=600";

export function authMetadataRoutes(app: FastifyInstance, s: Services): void {
  for (const [path, versions] of [["/auth_metadata", ["v1"]], ["/org.matrix.msc2965/auth_metadata", ["unstable"]]] as const) {
    clientRoute(app, s, {
      method: "GET", path, auth: "none", versions: [...versions],
      handler: async (c) => {
        const metadata = await authMetadata(s);
        if (!metadata) throw unrecognized();
        c.reply.header("cache-control", CACHE_CONTROL);
        return metadata;
      },
    });
  }
  clientRoute(app, s, {
    method: "GET", path: "/org.matrix.msc2965/auth_issuer", auth: "none", versions: ["unstable"],
    handler: async (c) => {
      const issuer = await authIssuer(s);
      if (!issuer) throw unrecognized();
      c.reply.header("cache-control", CACHE_CONTROL);
      return { issuer };
    },
  });
}
