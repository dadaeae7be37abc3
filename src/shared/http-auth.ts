// Reading the access token a client sent over HTTP, the same way for both faces (REST and GraphQL, also a
// GraphQL WebSocket's connection_init): `Authorization: Bearer <token>` or the `access_token` query
// parameter. Spec: Client-Server API "Using access tokens".
import type { FastifyRequest } from "fastify";

/** The token of an `Authorization: Bearer <token>` value, if it is one. */
export function parseBearer(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(value);
  return m ? m[1] : undefined;
}

/** Reads the access token: `Authorization: Bearer` or the `access_token` query parameter. */
export function bearerToken(req: FastifyRequest): string | undefined {
  const fromHeader = parseBearer(req.headers.authorization);
  if (fromHeader) return fromHeader;
  const q = (req.query as Record<string, unknown>).access_token;
  return typeof q === "string" && q !== "" ? q : undefined;
}
