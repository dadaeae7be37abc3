import { MatrixError } from "../errors.js";
/** openid-client, loaded on first use: a server without SSO providers never loads it. */
const openidClient = () => import("openid-client");
/** How long a request to a provider may take. */
const PROVIDER_TIMEOUT_MS = 30_000;
export class OidcProvider {
    config;
    configuration;
    constructor(config) {
        this.config = config;
    }
    clientAuth(oidc) {
        const c = this.config;
        if (c.client_auth_method === "none")
            return oidc.None();
        return c.client_auth_method === "client_secret_post" ? oidc.ClientSecretPost(c.client_secret) : oidc.ClientSecretBasic(c.client_secret);
    }
    options(oidc) {
        const execute = this.config.skip_verification ? [oidc.allowInsecureRequests] : [];
        return { execute, timeout: PROVIDER_TIMEOUT_MS / 1000 };
    }
    /** Discovers (once; retried after a failure) or builds the provider's metadata. */
    async configure() {
        const c = this.config;
        const oidc = await openidClient();
        if (c.discover)
            return oidc.discovery(new URL(c.issuer), c.client_id, undefined, this.clientAuth(oidc), this.options(oidc));
        const metadata = {
            issuer: c.issuer,
            authorization_endpoint: c.authorization_endpoint,
            token_endpoint: c.token_endpoint,
            userinfo_endpoint: c.userinfo_endpoint,
            jwks_uri: c.jwks_uri,
        };
        const conf = new oidc.Configuration(metadata, c.client_id, undefined, this.clientAuth(oidc));
        if (c.skip_verification)
            oidc.allowInsecureRequests(conf);
        return conf;
    }
    async get() {
        this.configuration ??= this.configure().catch((err) => {
            this.configuration = undefined;
            throw new MatrixError("M_UNKNOWN", `The identity provider could not be reached: ${err.message}`, 502);
        });
        const conf = await this.configuration;
        conf.timeout = PROVIDER_TIMEOUT_MS / 1000;
        return conf;
    }
    /** PKCE per pkce_method: "auto" uses it when the provider's metadata says it supports S256. */
    usePkce(conf) {
        const m = this.config.pkce_method;
        return m === "always" || (m === "auto" && conf.serverMetadata().supportsPKCE());
    }
    async authorizationUrl(redirectUri, state) {
        const [conf, oidc] = await Promise.all([this.get(), openidClient()]);
        const nonce = oidc.randomNonce();
        const params = { redirect_uri: redirectUri, scope: this.config.scopes.join(" "), response_type: "code", state, nonce };
        let codeVerifier = null;
        if (this.usePkce(conf)) {
            codeVerifier = oidc.randomPKCECodeVerifier();
            params.code_challenge = await oidc.calculatePKCECodeChallenge(codeVerifier);
            params.code_challenge_method = "S256";
        }
        return { url: oidc.buildAuthorizationUrl(conf, params).href, nonce, codeVerifier };
    }
    /**
     * Exchanges the code of `callbackUrl` for tokens and returns the user's claims. Anything the provider
     * refuses, or any token that fails its checks, is M_FORBIDDEN (the user must start again).
     */
    async exchange(callbackUrl, expected) {
        const [conf, oidc] = await Promise.all([this.get(), openidClient()]);
        const openid = this.config.scopes.includes("openid");
        let claims;
        try {
            const tokens = await oidc.authorizationCodeGrant(conf, callbackUrl, {
                expectedState: expected.state,
                expectedNonce: openid ? expected.nonce : undefined,
                pkceCodeVerifier: expected.codeVerifier ?? undefined,
                idTokenExpected: openid,
            });
            claims = { ...(tokens.claims() ?? {}) };
            if (!openid || this.config.user_profile_method === "userinfo_endpoint") {
                const sub = typeof claims.sub === "string" ? claims.sub : oidc.skipSubjectCheck;
                claims = { ...claims, ...(await oidc.fetchUserInfo(conf, tokens.access_token, sub)) };
            }
        }
        catch (err) {
            throw new MatrixError("M_FORBIDDEN", `The identity provider's answer was refused: ${err.message}`, 403);
        }
        return { claims };
    }
}
