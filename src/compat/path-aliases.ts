// The REST face's path aliases: /_proto is /_matrix, client r0 is v3, media r0 and v1 are v3, and
// /_synapse/admin is /_impl/admin. Each route is registered once, under its canonical path; a request sent
// under an alias is rewritten before routing (Fastify's rewriteUrl), and a route answers only under the
// aliases it was declared for (404, or 405 when the alias serves other methods there), exactly as if every
// alias were a route of its own. The URL as sent stays in `req.originalUrl` (signatures, UIA, logs).
import type { IncomingMessage } from "node:http";
import type { FastifyRequest } from "fastify";

/** A path split at its alias prefix: `/_proto/client/r0` + `/login`, whose canonical prefix is /_matrix/client/v3. */
export interface PrefixSplit {
  /** The prefix as sent (segments decoded, duplicate slashes dropped), e.g. "/_proto/client/r0". */
  prefix: string;
  /** The prefix it stands for, e.g. "/_matrix/client/v3". */
  canonical: string;
  /** Where the rest of the path starts in the string split (a "/", "?", "#" or its end). */
  restAt: number;
}

const BRANDS = new Set(["_matrix", "_proto"]);
/** The aliased version segments after /{brand}/<area>/, and the version each stands for. */
const VERSION_ALIASES: Record<string, Record<string, string>> = {
  client: { r0: "v3", v3: "v3" },
  media: { r0: "v3", v1: "v3", v3: "v3" },
};
const ADMIN_BRANDS = new Set(["_impl", "_synapse"]);

/** Reads the segment starting after the slashes at `i`: [its text as the router decodes it, its end], or undefined. */
function segmentAt(path: string, i: number, end: number): [string, number] | undefined {
  while (i < end && path.charCodeAt(i) === 47) i++; // the router ignores duplicate slashes
  if (i >= end) return undefined;
  let j = path.indexOf("/", i);
  if (j === -1 || j > end) j = end;
  let seg = path.slice(i, j);
  if (seg.includes("%")) {
    try {
      seg = decodeURIComponent(seg); // the router matches percent-decoded paths
    } catch {
      return undefined; // malformed: left for the router to refuse
    }
  }
  return [seg, j];
}

/** The end of the path part of a request target (before its query or fragment). */
function pathEnd(url: string): number {
  let end = url.length;
  const q = url.indexOf("?");
  if (q !== -1) end = q;
  const h = url.indexOf("#");
  if (h !== -1 && h < end) end = h;
  return end;
}

/** The alias prefix of `path` (a path or request target starting with "/"), or undefined when it has none. */
export function splitPrefix(path: string): PrefixSplit | undefined {
  if (path.charCodeAt(0) !== 47 || path.length < 2) return undefined;
  const end = pathEnd(path);
  const first = segmentAt(path, 0, end);
  if (!first) return undefined;
  const [s0, e0] = first;
  if (BRANDS.has(s0)) {
    const second = segmentAt(path, e0, end);
    const versions = second && VERSION_ALIASES[second[0]];
    const third = versions && segmentAt(path, second[1], end);
    const canonicalVersion = third && versions[third[0]];
    if (second && third && canonicalVersion)
      return { prefix: `/${s0}/${second[0]}/${third[0]}`, canonical: `/_matrix/${second[0]}/${canonicalVersion}`, restAt: third[1] };
    return { prefix: `/${s0}`, canonical: "/_matrix", restAt: e0 };
  }
  if (ADMIN_BRANDS.has(s0)) {
    const second = segmentAt(path, e0, end);
    if (second && second[0] === "admin") return { prefix: `/${s0}/admin`, canonical: "/_impl/admin", restAt: second[1] };
  }
  return undefined;
}

/** A route path's canonical form and the alias prefix it was written with (route registration). */
export function canonicalRoute(fullPath: string): { url: string; prefix: string | undefined } {
  const split = splitPrefix(fullPath);
  return split ? { url: split.canonical + fullPath.slice(split.restAt), prefix: split.prefix } : { url: fullPath, prefix: undefined };
}

/** The alias prefix a request was sent under, kept on the raw request by `rewriteUrl`. */
const SENT_PREFIX = Symbol("weft.sentPrefix");
type Raw = IncomingMessage & { [SENT_PREFIX]?: PrefixSplit };

/** Fastify's `rewriteUrl`: an aliased request target becomes its canonical one; anything else is left as sent. */
export function rewriteUrl(raw: IncomingMessage): string {
  const url = raw.url ?? "/";
  // An absolute-form target (http://host/path) is routed by its path, as the router does.
  let start = 0;
  if (url.charCodeAt(0) !== 47) {
    const scheme = url.indexOf("://");
    if (scheme === -1) return url;
    start = url.indexOf("/", scheme + 3);
    if (start === -1) return url;
  }
  if (url.charCodeAt(start + 1) !== 95 && url.charCodeAt(start + 1) !== 47 && url.charCodeAt(start + 1) !== 37) return url; // "_", "/", "%": the only starts of a prefix
  const path = start === 0 ? url : url.slice(start);
  const split = splitPrefix(path);
  if (!split) return url;
  (raw as Raw)[SENT_PREFIX] = split;
  return split.prefix === split.canonical && start === 0 ? url : split.canonical + path.slice(split.restAt);
}

/** The alias prefix a request was sent under (e.g. "/_proto/client/r0"), or undefined when it had none. */
export function sentPrefixOf(req: FastifyRequest): string | undefined {
  return (req.raw as Raw)[SENT_PREFIX]?.prefix;
}

/** Route config key: the alias prefixes a route answers under. */
export const ALIASES = "weftAliases";
export type AliasConfig = { [ALIASES]?: ReadonlySet<string> };

/** Whether the route the request matched answers under the alias prefix it was sent to. */
export function answersUnderAlias(req: FastifyRequest): boolean {
  const sent = (req.raw as Raw)[SENT_PREFIX];
  const allowed = (req.routeOptions.config as AliasConfig)[ALIASES];
  return !allowed || !sent || allowed.has(sent.prefix);
}

/** The route pattern as the request named it (metrics): the canonical pattern under the prefix sent. */
export function routePattern(req: FastifyRequest): string | undefined {
  const url = req.routeOptions.url;
  const sent = (req.raw as Raw)[SENT_PREFIX];
  if (url === undefined || !sent || !url.startsWith(sent.canonical)) return url;
  return sent.prefix + url.slice(sent.canonical.length);
}
