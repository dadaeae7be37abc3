import { MatrixError } from "../../domain/errors.js";
import { clientRoute } from "../http.js";
import { getProfile, getProfileField, setAvatarUrl, setDisplayName } from "../../domain/profile/profile.js";
/** The field's new value from a PUT body: present, not null, a string (codes as Synapse). */
function newValue(body, field) {
    if (!(field in body))
        throw new MatrixError("M_MISSING_PARAM", `Missing key '${field}'`, 400);
    const v = body[field];
    if (typeof v !== "string")
        throw new MatrixError("M_INVALID_PARAM", `'${field}' must be a string`, 400);
    return v;
}
export function profileRoutes(app, s) {
    clientRoute(app, s, {
        method: "GET", path: "/profile/:userId", auth: "optional",
        handler: (c) => getProfile(s, c.requester, c.params.userId),
    });
    for (const field of ["displayname", "avatar_url"]) {
        clientRoute(app, s, {
            method: "GET", path: `/profile/:userId/${field}`, auth: "optional",
            handler: async (c) => ({ [field]: await getProfileField(s, c.requester, c.params.userId, field) }),
        });
    }
    clientRoute(app, s, {
        method: "PUT", path: "/profile/:userId/displayname", auth: "token",
        handler: async (c) => {
            await setDisplayName(s, c.requester, c.params.userId, newValue(c.body(), "displayname"));
            return {};
        },
    });
    clientRoute(app, s, {
        method: "PUT", path: "/profile/:userId/avatar_url", auth: "token", op: "setAvatarUrl",
        handler: async (c) => {
            await setAvatarUrl(s, c.requester, c.params.userId, newValue(c.body(), "avatar_url"));
            return {};
        },
    });
}
