// Opaque secrets handed to clients (access, refresh, login tokens) and the hashes we store instead.
// High-entropy random tokens need no slow hash: SHA-256 is enough and keeps the lookup fast.
import { hash, randomBytes } from "node:crypto";

export type TokenKind = "access" | "refresh" | "login";
const PREFIX: Record<TokenKind, string> = { access: "wft_", refresh: "wfr_", login: "wfl_" };

export function newToken(kind: TokenKind): string {
  return PREFIX[kind] + randomBytes(24).toString("base64url");
}

export function hashToken(token: string): string {
  // One-shot: no Hash object per request (every authenticated request hashes its token).
  return hash("sha256", token, "hex");
}

export function newId(): string {
  return randomBytes(12).toString("base64url");
}
