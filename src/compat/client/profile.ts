// REST routes for user profiles: read the whole profile or one field (authentication optional), set and
// delete any field (displayname also by guests). Spec: Client-Server API "Profiles" (v1.16, MSC4133).
// As Synapse: displayname and avatar_url are served under r0 and v3, any other key under v3 alone, and
// under /unstable/uk.tcpip.msc4133 too with experimental_features.msc4133_enabled.
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall, type Call } from "../http.ts";
import { getProfile, getProfileField } from "../../domain/profile/profile.ts";
import { checkProfileChange, deleteProfileKey, setProfileKey } from "../../domain/profile/extended-fields.ts";

/**
 * The new value from a PUT body: the spec's body is an object holding exactly the key of the path
 * (M_MISSING_PARAM without it, M_BAD_JSON with others beside it — Synapse ignores those).
 */
function newValue(body: Record<string, unknown>, key: string): unknown {
  if (!Object.hasOwn(body, key)) throw new MatrixError("M_MISSING_PARAM", `Missing key '${key}'`, 400);
  const others = Object.keys(body).filter((k) => k !== key);
  if (others.length > 0) throw new MatrixError("M_BAD_JSON", `The body must hold '${key}' alone, not ${others.map((k) => `'${k}'`).join(", ")}`, 400);
  return body[key];
}

const keyOf = (c: Call, fixed: string | undefined) => fixed ?? c.params.keyName!;

function fieldRoutes(app: FastifyInstance, s: Services, path: string, versions: string[], fixedKey?: string): void {
  clientRoute(app, s, {
    method: "GET", path, auth: "optional", versions,
    handler: async (c) => {
      const key = keyOf(c, fixedKey);
      const value = await getProfileField(s, c.requester, c.params.userId!, key);
      return value === undefined ? {} : { [key]: value };
    },
  });
  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path, auth: "token", versions,
    handler: async (c) => {
      const key = keyOf(c, fixedKey);
      checkProfileChange(c.requester, c.params.userId!, key); // before the body is read, as Synapse
      await setProfileKey(s, c.requester, c.params.userId!, key, newValue(c.body(), key));
      return {};
    },
  });
  clientRoute<AuthedCall>(app, s, {
    method: "DELETE", path, auth: "token", versions,
    handler: async (c) => {
      await deleteProfileKey(s, c.requester, c.params.userId!, keyOf(c, fixedKey));
      return {};
    },
  });
}

export function profileRoutes(app: FastifyInstance, s: Services): void {
  clientRoute(app, s, {
    method: "GET", path: "/profile/:userId", auth: "optional",
    handler: (c) => getProfile(s, c.requester, c.params.userId!),
  });
  for (const key of ["displayname", "avatar_url"]) fieldRoutes(app, s, `/profile/:userId/${key}`, ["r0", "v3"], key);
  fieldRoutes(app, s, "/profile/:userId/:keyName", ["v3", ...(s.config.experimental_features.msc4133_enabled ? ["unstable/uk.tcpip.msc4133"] : [])]);
}
