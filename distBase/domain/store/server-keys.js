const COLUMNS = "server_name, key_id, verify_key, valid_until_ts, expired_ts, from_server, added_ts, key_json";
function fromRow(r) {
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
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async get(serverName, keyId) {
        const r = await this.sql.get(`SELECT ${COLUMNS} FROM server_keys WHERE server_name = ? AND key_id = ?`, [serverName, keyId]);
        return r && fromRow(r);
    }
    async forServer(serverName) {
        return (await this.sql.all(`SELECT ${COLUMNS} FROM server_keys WHERE server_name = ?`, [serverName])).map(fromRow);
    }
    /**
     * Stores keys in one transaction; an existing row stays when it is valid for longer than the new one,
     * except that a key its server lists under old_verify_keys ends at that expired_ts (the server said it
     * stopped using it: a longer validity learnt before no longer holds), and is never made current again.
     */
    async store(keys) {
        if (keys.length === 0)
            return;
        await this.sql.transaction(async (tx) => {
            for (const k of keys) {
                await tx.run(`INSERT INTO server_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (server_name, key_id) DO UPDATE SET verify_key = excluded.verify_key,
             valid_until_ts = excluded.valid_until_ts, expired_ts = excluded.expired_ts, from_server = excluded.from_server,
             added_ts = excluded.added_ts, key_json = excluded.key_json
           WHERE excluded.expired_ts IS NOT NULL OR (server_keys.expired_ts IS NULL AND excluded.valid_until_ts >= server_keys.valid_until_ts)`, [k.serverName, k.keyId, k.verifyKey, k.validUntilTs, k.expiredTs, k.fromServer, k.addedTs, k.keyJson]);
            }
        });
    }
}
