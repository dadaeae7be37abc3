// The single sign-on round trip (spec: Client-Server API "Single Sign-On" and "SSO during User-Interactive
// Authentication"): the redirect to a provider, remembered by a hashed one-time `state` that the browser
// also holds in a cookie, then the callback that checks that state, exchanges the code and ends either in
// a short-lived single-use login token for the client or in a completed m.login.sso UIA stage.
import { randomBytes } from "node:crypto";
import { MatrixError } from "../errors.js";
import { hashToken, newToken } from "../accounts/tokens.js";
import { userForClaims } from "./mapping.js";
/** Synapse's login token lifetime for SSO: two minutes. */
export const SSO_LOGIN_TOKEN_LIFETIME_MS = 2 * 60_000;
/** How long the user may take at the provider. */
const ATTEMPT_LIFETIME_MS = 60 * 60_000;
export const CALLBACK_PATH = "_synapse/client/oidc/callback";
/** The `identity_providers` of the m.login.sso login flow. */
export function identityProviders(s) {
    return [...s.sso.providers.values()].map(({ config: p }) => ({
        id: p.idp_id,
        name: p.idp_name,
        ...(p.idp_icon ? { icon: p.idp_icon } : {}),
        ...(p.idp_brand ? { brand: p.idp_brand } : {}),
    }));
}
export function callbackUrl(s) {
    return new URL(CALLBACK_PATH, s.config.public_baseurl).href;
}
function provider(s, idpId) {
    if (!s.sso.enabled)
        throw new MatrixError("M_UNRECOGNIZED", "Single sign-on is not configured", 404);
    if (idpId === undefined) {
        if (s.sso.providers.size > 1)
            throw new MatrixError("M_MISSING_PARAM", "Several identity providers are configured: name one in the path", 400);
        return [...s.sso.providers.values()][0];
    }
    const p = s.sso.providers.get(idpId);
    if (!p)
        throw new MatrixError("M_NOT_FOUND", "Unknown identity provider ID", 404);
    return p;
}
function checkRedirectUrl(url) {
    try {
        const u = new URL(url);
        if (u.protocol === "javascript:" || u.protocol === "data:")
            throw new Error();
    }
    catch {
        throw new MatrixError("M_INVALID_PARAM", "redirectUrl must be an absolute URL", 400);
    }
    return url;
}
/**
 * The URL a client opens to sign in through SSO (the GraphQL face's `ssoRedirectUrl`): this server's
 * /login/sso/redirect[/{idpId}], which sets the state cookie and sends the browser on to the provider.
 * Checked as that endpoint checks: SSO configured, the provider known, redirectUrl absolute.
 */
export function ssoRedirectUrl(s, idpId, redirectUrl) {
    provider(s, idpId);
    checkRedirectUrl(redirectUrl);
    const path = idpId === undefined ? "_matrix/client/v3/login/sso/redirect" : `_matrix/client/v3/login/sso/redirect/${encodeURIComponent(idpId)}`;
    const url = new URL(path, s.config.public_baseurl);
    url.searchParams.set("redirectUrl", redirectUrl);
    return url.href;
}
/** GET /login/sso/redirect[/{idpId}] and the UIA fallback: the provider's authorization URL. */
export async function startSso(s, o) {
    const p = provider(s, o.idpId);
    if (o.uiaSessionId === undefined) {
        if (o.redirectUrl === undefined)
            throw new MatrixError("M_MISSING_PARAM", "Missing redirectUrl", 400);
        checkRedirectUrl(o.redirectUrl);
    }
    const state = randomBytes(24).toString("base64url");
    const start = await p.authorizationUrl(callbackUrl(s), state);
    const now = s.clock.now();
    await s.sso.store.deleteSessionsBefore(now - ATTEMPT_LIFETIME_MS);
    await s.sso.store.createSession({
        stateHash: hashToken(state),
        idpId: p.config.idp_id,
        nonce: start.nonce,
        codeVerifier: start.codeVerifier,
        clientRedirectUrl: o.redirectUrl ?? null,
        uiaSessionId: o.uiaSessionId ?? null,
        createdTs: now,
    });
    return { location: start.url, state };
}
function addQueryParam(url, key, value) {
    const u = new URL(url);
    u.searchParams.append(key, value);
    return u.href;
}
/**
 * GET /_synapse/client/oidc/callback. `query` is the callback's query; `cookieState` the state the browser
 * kept. A missing or foreign state, an error from the provider, a refused code and a deactivated account
 * all end here with an error.
 */
export async function finishSso(s, query, cookieState) {
    if (!s.sso.enabled)
        throw new MatrixError("M_UNRECOGNIZED", "Single sign-on is not configured", 404);
    const state = query.state;
    if (!state)
        throw new MatrixError("M_MISSING_PARAM", "Missing state parameter", 400);
    if (!cookieState)
        throw new MatrixError("M_MISSING_PARAM", "No session cookie found: start again from your client", 400);
    if (cookieState !== state)
        throw new MatrixError("M_FORBIDDEN", "The state parameter does not match this browser's session", 403);
    const attempt = await s.sso.store.takeSession(hashToken(state));
    if (!attempt || s.clock.now() - attempt.createdTs > ATTEMPT_LIFETIME_MS)
        throw new MatrixError("M_FORBIDDEN", "Unknown or expired single sign-on session: start again from your client", 403);
    if (query.error)
        throw new MatrixError("M_FORBIDDEN", `The identity provider refused: ${query.error}${query.error_description ? ` (${query.error_description})` : ""}`, 403);
    if (!query.code)
        throw new MatrixError("M_MISSING_PARAM", "Missing code parameter", 400);
    const p = s.sso.providers.get(attempt.idpId);
    if (!p)
        throw new MatrixError("M_FORBIDDEN", "The identity provider of this session is no longer configured", 403);
    const here = new URL(callbackUrl(s));
    for (const [k, v] of Object.entries(query))
        if (v !== undefined)
            here.searchParams.set(k, v);
    const { claims } = await p.exchange(here, { state, nonce: attempt.nonce, codeVerifier: attempt.codeVerifier });
    const userId = await userForClaims(s, p.config, claims);
    const user = await s.users.get(userId);
    if (!user || user.deactivated)
        throw new MatrixError("M_USER_DEACTIVATED", "This account has been deactivated", 403);
    if (attempt.uiaSessionId !== null) {
        const session = await s.uia.get(attempt.uiaSessionId);
        if (!session)
            throw new MatrixError("M_FORBIDDEN", "The authentication session has expired", 403);
        if (session.serverData.request_user_id !== userId)
            throw new MatrixError("M_FORBIDDEN", "You signed in to the identity provider as another user than the one who asked", 403);
        await s.uia.markStageCompleted(attempt.uiaSessionId, "m.login.sso", userId);
        return { kind: "uia", userId };
    }
    const token = newToken("login");
    await s.sessions.createLoginToken(hashToken(token), userId, s.clock.now() + SSO_LOGIN_TOKEN_LIFETIME_MS);
    const redirect = addQueryParam(attempt.clientRedirectUrl, "loginToken", token);
    const trusted = s.config.sso.client_whitelist.some((prefix) => attempt.clientRedirectUrl.startsWith(prefix));
    return { kind: "login", userId, redirect, trusted };
}
/** The identity provider to use for an SSO UIA stage of `userId`: one they are linked to. */
export async function providerForUser(s, userId) {
    const linked = await s.sso.store.providersOfUser(userId);
    return linked.find((id) => s.sso.providers.has(id));
}
