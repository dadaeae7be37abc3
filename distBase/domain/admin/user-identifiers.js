// The third-party identifiers and single sign-on external ids of an account as the admin API shows and
// replaces them (Synapse admin API "Query User Account" / "Create or modify account": `threepids` and
// `external_ids`). A list given replaces the account's: entries not in it are removed, new ones added;
// one that belongs to another account is 409.
import { MatrixError } from "../errors.js";
import { isPlainObject } from "../events/types.js";
import { canonicalEmail } from "../threepids/email-validation.js";
const MEDIA = new Set(["email", "msisdn"]);
function objects(v, key) {
    if (!Array.isArray(v) || !v.every(isPlainObject))
        throw new MatrixError("M_INVALID_PARAM", `${key} must be an array of objects`, 400);
    return v;
}
function text(o, key, list) {
    const v = o[key];
    if (typeof v !== "string" || v === "" || v.length > 512)
        throw new MatrixError("M_INVALID_PARAM", `Each entry of ${list} needs a string ${key}`, 400);
    return v;
}
/** `threepids` of a PUT body: media email and msisdn, e-mail addresses canonical (as Synapse). */
export function parseThreepids(v) {
    return objects(v, "threepids").map((o) => {
        const medium = text(o, "medium", "threepids");
        if (!MEDIA.has(medium))
            throw new MatrixError("M_INVALID_PARAM", `Unsupported medium ${medium}`, 400);
        const address = text(o, "address", "threepids");
        return { medium, address: medium === "email" ? canonicalEmail(address) : address };
    });
}
export function parseExternalIds(v) {
    return objects(v, "external_ids").map((o) => ({ auth_provider: text(o, "auth_provider", "external_ids"), external_id: text(o, "external_id", "external_ids") }));
}
/** Refuses entries that belong to another account (checked before anything changes). */
export async function checkIdentifiersFree(s, userId, threepids, externalIds) {
    for (const t of threepids ?? []) {
        const owner = await s.threepids.owner(t.medium, t.address);
        if (owner !== null && owner !== userId)
            throw new MatrixError("M_THREEPID_IN_USE", "Threepid is already in use by another user", 409);
    }
    for (const e of externalIds ?? []) {
        const owner = await s.sso.store.userForExternalId(e.auth_provider, e.external_id);
        if (owner !== null && owner !== userId)
            throw new MatrixError("M_UNKNOWN", "External id is already in use", 409);
    }
}
export async function replaceThreepids(s, userId, wanted) {
    const key = (t) => `${t.medium}\u0000${t.address}`;
    const current = await s.threepids.ofUser(userId);
    const keep = new Set(wanted.map(key));
    for (const t of current)
        if (!keep.has(key(t)))
            await s.threepids.remove(userId, t.medium, t.address);
    const have = new Set(current.map(key));
    const now = s.clock.now();
    const added = wanted.filter((t, i) => !have.has(key(t)) && wanted.findIndex((o) => key(o) === key(t)) === i);
    if (added.length > 0)
        await s.db.$transaction(async (tx) => {
            for (const t of added)
                await s.threepids.add(tx, { ...t, userId, validatedAt: now, addedAt: now });
        });
}
export async function replaceExternalIds(s, userId, wanted) {
    const key = (p, id) => `${p}\u0000${id}`;
    const current = await s.sso.store.externalIdsOfUser(userId);
    const keep = new Set(wanted.map((e) => key(e.auth_provider, e.external_id)));
    for (const e of current)
        if (!keep.has(key(e.authProvider, e.externalId)))
            await s.sso.store.unlinkExternalId(e.authProvider, e.externalId, userId);
    const have = new Set(current.map((e) => key(e.authProvider, e.externalId)));
    for (const e of wanted) {
        const k = key(e.auth_provider, e.external_id);
        if (have.has(k))
            continue;
        have.add(k);
        await s.sso.store.linkExternalId(e.auth_provider, e.external_id, userId);
    }
}
/** The account's identifiers as GET /v2/users/{userId} shows them. */
export async function identifiersOf(s, userId) {
    const [threepids, external] = await Promise.all([s.threepids.ofUser(userId), s.sso.store.externalIdsOfUser(userId)]);
    return {
        threepids: threepids.map((t) => ({ medium: t.medium, address: t.address, added_at: t.addedAt, validated_at: t.validatedAt })),
        external_ids: external.map((e) => ({ auth_provider: e.authProvider, external_id: e.externalId })),
    };
}
