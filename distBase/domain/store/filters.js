export class FilterStore {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async add(userId, json) {
        return this.sql.transaction(async (tx) => {
            const r = await tx.get(`SELECT MAX(filter_id) AS m FROM user_filters WHERE user_id = ?`, [userId]);
            const id = r?.m === null || r?.m === undefined ? 0 : Number(r.m) + 1;
            await tx.run(`INSERT INTO user_filters (user_id, filter_id, json) VALUES (?, ?, ?)`, [userId, id, json]);
            return id;
        });
    }
    async get(userId, filterId) {
        const r = await this.sql.get(`SELECT json FROM user_filters WHERE user_id = ? AND filter_id = ?`, [userId, filterId]);
        return r?.json;
    }
}
