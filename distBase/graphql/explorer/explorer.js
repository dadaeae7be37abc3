// The GraphQL explorer for browsers: GET /graphql asking for HTML (a browser's Accept) gets GraphiQL, its
// assets served from this server's own node_modules under /graphql/explorer/ (no CDN). Queries go to the
// same /graphql endpoint over HTTP, subscriptions over graphql-ws; the access token goes in the Headers tab.
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
export const EXPLORER_PREFIX = "/graphql/explorer/";
const require = createRequire(import.meta.url);
/** The folder of an installed package (its exports hide the browser builds from require.resolve). */
function packageDir(name) {
    let dir = path.dirname(require.resolve(name));
    for (;;) {
        const manifest = path.join(dir, "package.json");
        if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === name)
            return dir;
        const up = path.dirname(dir);
        if (up === dir)
            throw new Error(`cannot find the folder of the package ${name}`);
        dir = up;
    }
}
/** The explorer's files: name under EXPLORER_PREFIX → where it lives. Resolved once, at start-up. */
function assets() {
    const js = "text/javascript; charset=utf-8";
    return new Map([
        ["react.production.min.js", { file: path.join(packageDir("react"), "umd/react.production.min.js"), type: js }],
        ["react-dom.production.min.js", { file: path.join(packageDir("react-dom"), "umd/react-dom.production.min.js"), type: js }],
        ["graphiql.min.js", { file: path.join(packageDir("graphiql"), "graphiql.min.js"), type: js }],
        ["graphiql.min.css", { file: path.join(packageDir("graphiql"), "graphiql.min.css"), type: "text/css; charset=utf-8" }],
        ["graphql-ws.min.js", { file: path.join(packageDir("graphql-ws"), "umd/graphql-ws.min.js"), type: js }],
        // The browser script lives beside this module's source; compiled, this module runs from dist/, the
        // same depth below the checkout as src/ (and its own output there is named explorer.js too).
        ["explorer.js", { file: fileURLToPath(new URL("../../../src/graphql/explorer/explorer.js", import.meta.url)), type: js }],
    ]);
}
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Weft GraphQL explorer</title>
<link rel="stylesheet" href="${EXPLORER_PREFIX}graphiql.min.css">
<style>html,body,#graphiql{height:100%;margin:0}</style>
</head>
<body>
<div id="graphiql">Loading the GraphQL explorer…</div>
<script src="${EXPLORER_PREFIX}react.production.min.js"></script>
<script src="${EXPLORER_PREFIX}react-dom.production.min.js"></script>
<script src="${EXPLORER_PREFIX}graphql-ws.min.js"></script>
<script src="${EXPLORER_PREFIX}graphiql.min.js"></script>
<script src="${EXPLORER_PREFIX}explorer.js"></script>
</body>
</html>
`;
/**
 * Whether a GET /graphql is a browser opening the page: it prefers HTML and carries no GraphQL request
 * (no `query` parameter) and no WebSocket upgrade.
 */
export function wantsExplorer(req) {
    if (req.method !== "GET" || req.headers.upgrade)
        return false;
    if (req.query.query !== undefined)
        return false;
    return /\btext\/html\b/.test(req.headers.accept ?? "");
}
/** Registers the assets' routes; returns what answers a browser at /graphql (see wantsExplorer). */
export function mountExplorer(app) {
    const files = assets();
    for (const [name, asset] of files) {
        if (!existsSync(asset.file))
            throw new Error(`the GraphQL explorer's ${name} is missing (${asset.file}): run npm ci`);
        app.get(EXPLORER_PREFIX + name, async (_req, reply) => reply.type(asset.type).header("cache-control", "public, max-age=3600").send(createReadStream(asset.file)));
    }
    return (reply) => reply.type("text/html; charset=utf-8").header("cache-control", "no-cache").send(PAGE);
}
