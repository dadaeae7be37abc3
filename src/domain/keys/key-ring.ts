// The key ring: the verify keys of servers (this one's own, and — with federation — remote servers'
// keys fetched directly or through a notary and cached until their valid_until_ts). Everything that
// checks a server's signature (events, federation requests, keys) asks here.
// Spec: Server-Server API "Retrieving server keys", "Validating hashes and signatures on received events".
import type { KeyObject } from "node:crypto";
import type { SigningKey } from "../signing-key.ts";

export interface KeyRing {
  /**
   * The public key `keyId` of `serverName`, if known and valid at `atTs` (ms; for events, their
   * origin_server_ts; for requests, now). Resolves undefined when the key cannot be found or has expired.
   */
  verifyKey(serverName: string, keyId: string, atTs: number): Promise<KeyObject | undefined>;
}

/** Knows only this server's own keys (federation extends it with remote servers' keys). */
export class LocalKeyRing implements KeyRing {
  constructor(private readonly serverName: string, private readonly keys: readonly SigningKey[]) {}

  async verifyKey(serverName: string, keyId: string): Promise<KeyObject | undefined> {
    if (serverName !== this.serverName) return undefined;
    return this.keys.find((k) => k.keyId === keyId)?.publicKeyObject;
  }
}
