import { idAllocator } from "./ids.js";
export class PushRuleStore {
    sql;
    streamIds;
    constructor(sql) {
        this.sql = sql;
        this.streamIds = idAllocator(sql, "push_rules_stream", "stream_id", "push_rules_stream_seq");
    }
    currentPosition() {
        return this.streamIds.current();
    }
    async rules(userId) {
        return (await this.rulesOfUsers([userId])).rules.get(userId) ?? [];
    }
    /** The rules and default-rule changes of many users: two queries per 500 users. */
    async rulesOfUsers(userIds) {
        const rules = new Map();
        const overrides = new Map();
        for (let i = 0; i < userIds.length; i += 500) {
            const chunk = userIds.slice(i, i + 500);
            const marks = chunk.map(() => "?").join(",");
            const rows = await this.sql.all(`SELECT user_id, kind, rule_id, position, conditions, pattern, actions, enabled FROM push_rules WHERE user_id IN (${marks})`, chunk);
            for (const r of rows) {
                const list = rules.get(r.user_id) ?? [];
                list.push({ kind: r.kind, ruleId: r.rule_id, position: Number(r.position), conditions: r.conditions, pattern: r.pattern, actions: r.actions, enabled: Boolean(r.enabled) });
                rules.set(r.user_id, list);
            }
            const orows = await this.sql.all(`SELECT user_id, kind, rule_id, enabled, actions FROM push_rule_overrides WHERE user_id IN (${marks})`, chunk);
            for (const r of orows) {
                const list = overrides.get(r.user_id) ?? [];
                list.push({ kind: r.kind, ruleId: r.rule_id, enabled: r.enabled === null ? null : Boolean(r.enabled), actions: r.actions });
                overrides.set(r.user_id, list);
            }
        }
        return { rules, overrides };
    }
    /** Runs `fn` in a transaction that also moves the user's push_rules stream position; returns it. */
    async change(userId, fn) {
        return this.sql.transaction(async (tx) => {
            await fn(tx);
            const id = await this.streamIds.next(tx);
            const n = await tx.run(`UPDATE push_rules_stream SET stream_id = ? WHERE user_id = ?`, [id, userId]);
            if (n === 0)
                await tx.run(`INSERT INTO push_rules_stream (user_id, stream_id) VALUES (?, ?)`, [userId, id]);
            return id;
        });
    }
    async upsertRule(tx, userId, r) {
        const n = await tx.run(`UPDATE push_rules SET position = ?, conditions = ?, pattern = ?, actions = ? WHERE user_id = ? AND kind = ? AND rule_id = ?`, [
            r.position, r.conditions, r.pattern, r.actions, userId, r.kind, r.ruleId,
        ]);
        if (n === 0)
            await tx.run(`INSERT INTO push_rules (user_id, kind, rule_id, position, conditions, pattern, actions, enabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
                userId, r.kind, r.ruleId, r.position, r.conditions, r.pattern, r.actions, r.enabled ?? true,
            ]);
    }
    async setPosition(tx, userId, kind, ruleId, position) {
        await tx.run(`UPDATE push_rules SET position = ? WHERE user_id = ? AND kind = ? AND rule_id = ?`, [position, userId, kind, ruleId]);
    }
    async setRuleAttr(tx, userId, kind, ruleId, attr) {
        if (attr.enabled !== undefined)
            await tx.run(`UPDATE push_rules SET enabled = ? WHERE user_id = ? AND kind = ? AND rule_id = ?`, [attr.enabled, userId, kind, ruleId]);
        if (attr.actions !== undefined)
            await tx.run(`UPDATE push_rules SET actions = ? WHERE user_id = ? AND kind = ? AND rule_id = ?`, [attr.actions, userId, kind, ruleId]);
    }
    async deleteRule(tx, userId, kind, ruleId) {
        return tx.run(`DELETE FROM push_rules WHERE user_id = ? AND kind = ? AND rule_id = ?`, [userId, kind, ruleId]);
    }
    async setOverride(tx, userId, kind, ruleId, attr) {
        const n = await tx.run(`UPDATE push_rule_overrides SET enabled = COALESCE(?, enabled), actions = COALESCE(?, actions) WHERE user_id = ? AND kind = ? AND rule_id = ?`, [attr.enabled ?? null, attr.actions ?? null, userId, kind, ruleId]);
        if (n === 0)
            await tx.run(`INSERT INTO push_rule_overrides (user_id, kind, rule_id, enabled, actions) VALUES (?, ?, ?, ?, ?)`, [userId, kind, ruleId, attr.enabled ?? null, attr.actions ?? null]);
    }
    /** The position of the user's last push rule change, if any. */
    async lastChange(userId) {
        const r = await this.sql.get(`SELECT stream_id FROM push_rules_stream WHERE user_id = ?`, [userId]);
        return r ? Number(r.stream_id) : undefined;
    }
}
