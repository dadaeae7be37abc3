// Media URLs a browser can load without an Authorization header (an <img src> cannot send one), for the
// GraphQL face: short-lived URLs signed by this server for one viewer. The spec says clients SHOULD NOT put
// access tokens in URLs (authenticated media, v1.11: they get copied into messages), so the URL carries an
// HMAC over (media, size, viewer, expiry) instead, served by /_impl/media/v1/{download,thumbnail}/...
// The same HMAC signs the short-lived upload URLs of signed-upload.ts (use "upload").
// Expiry is rounded up to a 10-minute step so the same URL comes back for a while (browser caches).
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { parseMxc, type MediaRef } from "./ids.ts";
import type { ThumbnailMethod } from "../../config/media.ts";

/** A signed URL is valid for at least this long after it was handed out. */
export const BROWSER_URL_LIFETIME_MS = 3_600_000;
const STEP_MS = 600_000;

export interface BrowserThumbnail {
  width: number;
  height: number;
  method: ThumbnailMethod;
}

/** The HMAC key, derived from the signing key on first use and kept in Services.processState. */
function key(s: Services): Buffer {
  let k = s.processState.browserUrlKey;
  if (!k) {
    const seed = s.signingKeys[0]?.seed ?? Buffer.from(s.config.server_name);
    k = createHash("sha256").update("weft browser media urls\0").update(seed).digest();
    s.processState.browserUrlKey = k;
  }
  return k;
}

/** What a signed URL allows: a download, a thumbnail of one size, or the upload of a reserved mxc URI (signed-upload.ts). */
export type SignedUse = "download" | "upload" | BrowserThumbnail;

function signature(s: Services, ref: MediaRef, userId: string, exp: number, use: SignedUse): string {
  const what = typeof use === "string" ? use : `thumbnail\n${use.width}\n${use.height}\n${use.method}`;
  return createHmac("sha256", key(s)).update(`${ref.origin}\n${ref.mediaId}\n${what}\n${userId}\n${exp}`).digest("base64url");
}

/** The query parameters of a URL signed for `userId` until `exp` (ms since the epoch). */
export function signedParams(s: Services, ref: MediaRef, userId: string, exp: number, use: SignedUse): URLSearchParams {
  const q = new URLSearchParams();
  if (typeof use !== "string") {
    q.set("width", String(use.width));
    q.set("height", String(use.height));
    q.set("method", use.method);
  }
  q.set("user", userId);
  q.set("exp", String(exp));
  q.set("sig", signature(s, ref, userId, exp, use));
  return q;
}

/** A signed http(s) URL of `mxc` (or of a thumbnail of it) for `userId`; null for a missing or bad mxc URI. */
export function browserMediaUrl(s: Services, userId: string, mxc: string | null | undefined, thumb?: BrowserThumbnail): string | null {
  const ref = parseMxc(mxc);
  if (!ref) return null;
  const exp = Math.ceil((s.clock.now() + BROWSER_URL_LIFETIME_MS) / STEP_MS) * STEP_MS;
  const q = signedParams(s, ref, userId, exp, thumb ?? "download");
  const kind = thumb ? "thumbnail" : "download";
  return `${s.config.public_baseurl}_impl/media/v1/${kind}/${encodeURIComponent(ref.origin)}/${ref.mediaId}?${q}`;
}

/**
 * Checks a signed URL's signature, expiry and viewer (still an active account); M_FORBIDDEN otherwise.
 * Returns the viewer's account.
 */
export async function checkBrowserMediaUrl(s: Services, ref: MediaRef, p: { user?: string; exp?: string; sig?: string }, use: SignedUse = "download") {
  const bad = () => new MatrixError("M_FORBIDDEN", "Invalid or expired media URL", 403);
  if (!p.user || !p.exp || !p.sig || !/^\d{1,16}$/.test(p.exp)) throw bad();
  const exp = Number(p.exp);
  const want = Buffer.from(signature(s, ref, p.user, exp, use));
  const got = Buffer.from(p.sig);
  if (want.length !== got.length || !timingSafeEqual(want, got) || exp < s.clock.now()) throw bad();
  const user = await s.users.get(p.user);
  if (!user || user.deactivated) throw bad();
  return user;
}
