// Writes an application-service registration file for a test server (app_service_config_files).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export function writeAppServiceFile(o: { id: string; asToken: string; hsToken: string; senderLocalpart: string; userRegex: string; aliasRegex?: string }): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "weft-as-")), `${o.id}.yaml`);
  writeFileSync(
    file,
    [
      `id: ${o.id}`,
      "url: null",
      `as_token: ${o.asToken}`,
      `hs_token: ${o.hsToken}`,
      `sender_localpart: ${o.senderLocalpart}`,
      "namespaces:",
      "  users:",
      "    - exclusive: true",
      `      regex: '${o.userRegex}'`,
      ...(o.aliasRegex ? ["  aliases:", "    - exclusive: true", `      regex: '${o.aliasRegex}'`] : []),
    ].join("\n"),
  );
  return file;
}
