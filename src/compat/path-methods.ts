// The 405 answer: which methods each route path is served with, and under which alias prefixes, so that a
// request no route matched — or whose route does not answer under the alias it was sent to — is answered
// 405 when its path is served with other methods under that alias (as Synapse does), 404 otherwise (as
// if every alias were a route of its own: path-aliases.ts). A table of path segments walked only for those
// requests — not a Fastify route per path
// for its missing methods: each Fastify route weighs ~7 KB of heap, 2.7 MB for the ~230 paths of the REST
// face (the idle footprint of issue 17, bench/footprint).
// Matching follows the router's (find-my-way, as Fastify configures it in server.ts): duplicate slashes
// are ignored, segments are compared percent-decoded, a `:param` is one segment (an empty one too: a
// trailing slash ends the path with one), and wildcard routes (`*`) are never entered here. Where two
// patterns match a path (`/registration_tokens/new` and `/registration_tokens/:token`), the router gives
// each method the pattern that serves it, as Synapse does: 405 only when none does.

/** What a path pattern serves: per method, the alias prefixes it answers under (undefined: no alias rule). */
type Served = Map<string, ReadonlySet<string> | undefined>;

/** The methods a served path refuses with 405; any other method gets 404 (OPTIONS is answered on every path). */
const ANSWERED_405 = new Set(["GET", "POST", "PUT", "DELETE", "PATCH"]);

interface Node {
  statics: Map<string, Node>;
  param: Node | undefined;
  /** Set when a pattern ends here. */
  served: Served | undefined;
}

const newNode = (): Node => ({ statics: new Map(), param: undefined, served: undefined });

/** A request target's path segments as the router compares them; undefined for a malformed percent-encoding. */
function segmentsOf(target: string): string[] | undefined {
  let path = target;
  // An absolute-form target (http://host/path) is routed by its path.
  if (!path.startsWith("/")) {
    const scheme = path.indexOf("://");
    const start = scheme === -1 ? -1 : path.indexOf("/", scheme + 3);
    path = start === -1 ? "/" : path.slice(start);
  }
  const end = path.search(/[?#]/);
  if (end !== -1) path = path.slice(0, end);
  const out: string[] = [];
  const parts = path.split("/");
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    // Duplicate slashes are one; a trailing slash (an empty last part) stays significant.
    if (part === "" && i < parts.length - 1) continue;
    try {
      out.push(part.includes("%") ? decodeURIComponent(part) : part);
    } catch {
      return undefined;
    }
  }
  return out;
}

export class PathMethods {
  private readonly root = newNode();

  /** Records that `pattern` (a route URL with `:param` segments) is served with `method` under `prefixes`. */
  add(pattern: string, method: string, prefixes: ReadonlySet<string> | undefined): void {
    // A HEAD route is its GET route's (Fastify adds one beside each GET).
    if (method === "HEAD") return;
    let node = this.root;
    for (const seg of pattern.split("/").slice(1)) {
      if (seg.startsWith(":")) node = node.param ??= newNode();
      else {
        let next = node.statics.get(seg);
        if (!next) node.statics.set(seg, (next = newNode()));
        node = next;
      }
    }
    (node.served ??= new Map()).set(method, prefixes);
  }

  /**
   * For a request no route answers (its canonical target, and the alias prefix it was sent under): "method"
   * when some pattern matching the path serves other methods under that prefix, else "not-found" — also
   * when one serves `method` itself there (the router chose another pattern). HEAD is asked as GET (a path
   * served with GET answers HEAD).
   */
  answer(target: string, method: string, sentPrefix: string | undefined): "method" | "not-found" {
    if (method === "HEAD") method = "GET";
    if (!ANSWERED_405.has(method)) return "not-found";
    const segments = segmentsOf(target);
    if (!segments) return "not-found";
    const found: Served[] = [];
    this.walk(this.root, segments, 0, found);
    const under = (prefixes: ReadonlySet<string> | undefined) => !prefixes || sentPrefix === undefined || prefixes.has(sentPrefix);
    let other = false;
    for (const served of found)
      for (const [m, prefixes] of served) {
        if (!under(prefixes)) continue;
        if (m === method) return "not-found";
        other = true;
      }
    return other ? "method" : "not-found";
  }

  private walk(node: Node, segments: string[], i: number, found: Served[]): void {
    if (i === segments.length) {
      if (node.served) found.push(node.served);
      return;
    }
    const seg = segments[i]!;
    const next = node.statics.get(seg);
    if (next) this.walk(next, segments, i + 1, found);
    if (node.param) this.walk(node.param, segments, i + 1, found);
  }
}
