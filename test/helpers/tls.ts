// A self-signed TLS certificate for loopback test servers (Weft and Synapse alike): made once per test
// process with Debian's openssl, valid for 127.0.0.1 and ::1 (an RSA key: every TLS stack takes it).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface TestCertificate {
  certPath: string;
  keyPath: string;
  cert: Buffer;
  key: Buffer;
}

let made: TestCertificate | undefined;

export function testCertificate(): TestCertificate {
  if (made) return made;
  const dir = mkdtempSync(path.join(tmpdir(), "weft-tls-"));
  const certPath = path.join(dir, "tls.crt");
  const keyPath = path.join(dir, "tls.key");
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyPath, "-out", certPath, "-days", "3",
    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,IP:::1",
  ], { stdio: "ignore" });
  made = { certPath, keyPath, cert: readFileSync(certPath), key: readFileSync(keyPath) };
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return made;
}
