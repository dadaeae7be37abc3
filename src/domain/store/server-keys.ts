// Repository of other servers' signing keys (server_keys): read by the key ring on a memory miss, written
// after each verified fetch, and read whole by the notary (GET/POST /_matrix/key/v2/query). A row is only
// replaced by one valid at least as long, so a stale notary answer never shortens what we know, except by
// the server's own word that the key expired (old_verify_keys' expired_ts), which always holds.
import type { Sql } from "../../storage/sql.ts";

export interface StoredServerKey {
  serverName: string;
  keyId: string;
  /** Unpadded base64 Ed25519 public key. */
  verifyKey: string;
  /** ms: until when the key may be used (the expired_ts of an old key). */
  validUntilTs: number;
  /** Set for keys published under old_verify_keys. */
  expiredTs: number | null;
  /** Who we got it from: the server itself, or a notary. */
  fromServer: string;
  addedTs: number;
  /** The signed key response that carried the key, as received. */
  keyJson: string;
}

interface Row {
  server_name: string;
  key_id: string;
  verify_key: string;
  valid_until_ts: number | bigint;
  expired_ts: number | bigint | null;
  from_server: string;
  added_ts: number | bigint;
  key_json: string;
}

const COLUMNS = "server_name, key_id, verify_key, valid_until_ts, expired_ts, from_server, added_ts, key_json";

function fromRow(r: Row): StoredServerKey {
  return {
    serverName: r.server_name,
    keyId: r.key_id,
    verifyKey: r.verify_key,
    validUntilTs: Number(r.valid_until_ts),
    expiredTs: r.expired_ts === null ? null : Number(r.expired_ts),
    fromServer: r.from_server,
    addedTs: Number(r.added_ts),
    keyJson: r.key_json,
  };
}

export class ServerKeyStore {
  constructor(private readonly sql: Sql) {}

  async get(serverName: string, keyId: string): Promise<StoredServerKey | undefined> {
    const r = await this.sql.get<Row>(`SELECT ${COLUMNS} FROM server_keys WHERE server_name = ? AND key_id = ?`, [serverName, keyId]);
    return r && fromRow(r);
  }

  async forServer(serverName: string): Promise<StoredServerKey[]> {
    return (await this.sql.all<Row>(`SELECT ${COLUMNS} FROM server_keys WHERE server_name = ?`, [serverName])).map(fromRow);
  }

  /**
   * Stores keys in one transaction; an existing row stays when it is valid for longer than the new one,
   * except that a key its server lists under old_verify_keys ends at that expired_ts (the server said it
   * stopped using it: a longer validity learnt before no longer holds), and is never made current again.
   */
  async store(keys: readonly StoredServerKey[]): Promise<void> {
    if (keys.length === 0) return;
    await this.sql.transaction(async (tx) => {
      for (const k of keys) {
        await tx.run(
          `INSERT INTO server_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (server_name, key_id) DO UPDATE SET verify_key = excluded.verify_key,
             valid_until_ts = excluded.valid_until_ts, expired_ts = excluded.expired_ts, from_server = excluded.from_server,
             added_ts = excluded.added_ts, key_json = excluded.key_json
           WHERE excluded.expired_ts IS NOT NULL OR (server_keys.expired_ts IS NULL AND excluded.valid_until_ts >= server_keys.valid_until_ts)`,
          [k.serverName, k.keyId, k.verifyKey, k.validUntilTs, k.expiredTs, k.fromServer, k.addedTs, k.keyJson],
        );
      }
    });
  }
}
