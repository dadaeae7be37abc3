// How the key ring reaches other servers: GET /_matrix/key/v2/server on the server itself and POST
// /_matrix/key/v2/query on a notary, through the signed federation client with tight time and size limits
// (a key document is small; a notary serving several servers answers quickly or not at all).
// Spec: Server-Server API "Retrieving server keys".
import type { KeyTransport } from "../domain/keys/key-ring.ts";
import type { FederationClient } from "./client.ts";

export const KEY_FETCH_TIMEOUT_MS = 10_000;
export const KEY_RESPONSE_MAX_BYTES = 1024 * 1024;

export class FederationKeyTransport implements KeyTransport {
  constructor(private readonly client: FederationClient) {}

  fetchServerKeys(serverName: string): Promise<unknown> {
    return this.client.getJson(serverName, "/_matrix/key/v2/server", undefined, { timeoutMs: KEY_FETCH_TIMEOUT_MS, maxBytes: KEY_RESPONSE_MAX_BYTES });
  }

  queryNotary(notary: string, body: unknown): Promise<unknown> {
    return this.client.postJson(notary, "/_matrix/key/v2/query", body, { timeoutMs: 3 * KEY_FETCH_TIMEOUT_MS, maxBytes: 10 * KEY_RESPONSE_MAX_BYTES });
  }
}
