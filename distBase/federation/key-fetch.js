export const KEY_FETCH_TIMEOUT_MS = 10_000;
export const KEY_RESPONSE_MAX_BYTES = 1024 * 1024;
export class FederationKeyTransport {
    client;
    constructor(client) {
        this.client = client;
    }
    fetchServerKeys(serverName) {
        return this.client.getJson(serverName, "/_matrix/key/v2/server", undefined, { timeoutMs: KEY_FETCH_TIMEOUT_MS, maxBytes: KEY_RESPONSE_MAX_BYTES });
    }
    queryNotary(notary, body) {
        return this.client.postJson(notary, "/_matrix/key/v2/query", body, { timeoutMs: 3 * KEY_FETCH_TIMEOUT_MS, maxBytes: 10 * KEY_RESPONSE_MAX_BYTES });
    }
}
