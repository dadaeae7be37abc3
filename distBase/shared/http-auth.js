/** The token of an `Authorization: Bearer <token>` value, if it is one. */
export function parseBearer(value) {
    if (typeof value !== "string")
        return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(value);
    return m ? m[1] : undefined;
}
/** Reads the access token: `Authorization: Bearer` or the `access_token` query parameter. */
export function bearerToken(req) {
    const fromHeader = parseBearer(req.headers.authorization);
    if (fromHeader)
        return fromHeader;
    const q = req.query.access_token;
    return typeof q === "string" && q !== "" ? q : undefined;
}
