// This server's implementation name and version, as GET /_matrix/federation/v1/version reports them
// (read once from package.json). Spec: Server-Server API "Server implementation".
import { readFileSync } from "node:fs";
const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"));
export const SERVER_SOFTWARE = { name: "Weft", version: typeof pkg.version === "string" ? pkg.version : "0.0.0" };
