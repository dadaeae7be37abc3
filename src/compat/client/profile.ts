// REST routes for user profiles: read the whole profile or one field (authentication optional), set
// displayname (guests too) and avatar_url. Spec: Client-Server API "Profiles".
import type { FastifyInstance } from "fastify";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { clientRoute, type AuthedCall } from "../http.ts";
import { getProfile, getProfileField, setAvatarUrl, setDisplayName, type ProfileField } from "../../domain/profile/profile.ts";

/** The field's new value from a PUT body: present, not null, a string (codes as Synapse). */
function newValue(body: Record<string, unknown>, field: ProfileField): string {
  if (!(field in body)) throw new MatrixError("M_MISSING_PARAM", `Missing key '${field}'`, 400);
  const v = body[field];
  if (typeof v !== "string") throw new MatrixError("M_INVALID_PARAM", `'${field}' must be a string`, 400);
  return v;
}

export function profileRoutes(app: FastifyInstance, s: Services): void {
  clientRoute(app, s, {
    method: "GET", path: "/profile/:userId", auth: "optional",
    handler: (c) => getProfile(s, c.requester, c.params.userId!),
  });

  for (const field of ["displayname", "avatar_url"] as const) {
    clientRoute(app, s, {
      method: "GET", path: `/profile/:userId/${field}`, auth: "optional",
      handler: async (c) => ({ [field]: await getProfileField(s, c.requester, c.params.userId!, field) }),
    });
  }

  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/profile/:userId/displayname", auth: "token",
    handler: async (c) => {
      await setDisplayName(s, c.requester, c.params.userId!, newValue(c.body(), "displayname"));
      return {};
    },
  });

  clientRoute<AuthedCall>(app, s, {
    method: "PUT", path: "/profile/:userId/avatar_url", auth: "token", op: "setAvatarUrl",
    handler: async (c) => {
      await setAvatarUrl(s, c.requester, c.params.userId!, newValue(c.body(), "avatar_url"));
      return {};
    },
  });
}
