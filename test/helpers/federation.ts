// Weft servers that federate on loopback: each listens over TLS (a self-signed certificate) on a port
// chosen before its config is written, because its server name is the IP literal `127.0.0.1:PORT`. The
// options that make loopback federation possible are test-only: certificates not checked, loopback
// whitelisted, no trusted key servers (nothing here may reach matrix.org). Both storage backends work.
// Also: requests to a server's federation API signed (or forged) by hand.
import { fetch as undiciFetch } from "undici";
import { signRequest } from "../../src/domain/federation/request-auth.ts";
import type { JsonSigner } from "../../src/domain/signing.ts";
import { freePort, insecureAgent, readJsonResponse, startTestServer, type JsonResponse, type TestServer, type TestServerOptions } from "./server.ts";
import { testCertificate } from "./tls.ts";

export interface FederatedServer extends TestServer {
  serverName: string;
  port: number;
}

/** The homeserver.yaml options every federating test server gets. */
export function federationTestConfig(port: number): Record<string, unknown> {
  const cert = testCertificate();
  return {
    listeners: [{ port, tls: true, bind_addresses: ["127.0.0.1"], type: "http", resources: [{ names: ["client", "federation"] }] }],
    tls_certificate_path: cert.certPath,
    tls_private_key_path: cert.keyPath,
    public_baseurl: `https://127.0.0.1:${port}/`,
    // Self-signed certificates for 127.0.0.1: nothing to verify them against.
    federation_verify_certificates: false,
    // The peers are on loopback, which the default ip_range_blacklist refuses.
    ip_range_whitelist: ["127.0.0.0/8", "::1/128"],
    // No notary by default (the default, matrix.org, is not reachable and must never be asked).
    trusted_key_servers: [],
  };
}

/**
 * Starts a Weft server named `127.0.0.1:PORT`, listening over TLS. `config` is merged over the federation
 * defaults. `name: "localhost"` names it `localhost:PORT` instead (still on 127.0.0.1; test DNS resolves
 * localhost): a server an ACL on IP literals or on 127.0.0.1 does not shut out.
 */
export async function startFederatedServer(opts: Omit<TestServerOptions, "serverName" | "port"> & { name?: "localhost" } = {}): Promise<FederatedServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const serverName = `${opts.name ?? "127.0.0.1"}:${port}`;
    try {
      const t = await startTestServer({ ...opts, serverName, port, config: { ...federationTestConfig(port), ...(opts.config ?? {}) } });
      return Object.assign(t, { serverName, port });
    } catch (err) {
      // Someone took the port between our check and the listen: pick another.
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt >= 5) throw err;
    }
  }
}

export interface FederationRequest {
  method: "GET" | "PUT" | "POST" | "DELETE";
  /** Path and query as sent, e.g. /_matrix/federation/v1/query/profile?user_id=%40a%3Ab */
  path: string;
  /** A JSON body (serialized as is) or a raw string. */
  body?: unknown;
  raw?: string;
  /** Authorization header(s) to send as they are. */
  authorization?: string | string[];
}

/** Sends a request to `baseUrl` (a federating test server) as given: nothing signed unless the caller did. */
export async function federationCall(baseUrl: string, r: FederationRequest): Promise<JsonResponse> {
  const headers: [string, string][] = [];
  for (const a of [r.authorization ?? []].flat()) headers.push(["authorization", a]);
  let body = r.raw;
  if (r.body !== undefined) {
    body = JSON.stringify(r.body);
    headers.push(["content-type", "application/json"]);
  }
  return readJsonResponse(await undiciFetch(baseUrl + r.path, { method: r.method, headers, body, dispatcher: insecureAgent }));
}

/** The X-Matrix header `origin` (signing with `key`) would send for this request to `destination`. */
export function signedBy(origin: string, key: JsonSigner, destination: string, r: Pick<FederationRequest, "method" | "path" | "body">): string {
  return signRequest({ method: r.method, uri: r.path, origin, destination, content: r.body }, key);
}
