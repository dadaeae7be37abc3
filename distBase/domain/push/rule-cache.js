import { CompiledRuleset } from "./evaluator.js";
import { buildRuleset } from "./ruleset.js";
export class RuleCache {
    store;
    cache;
    sharedDefault;
    /** Bumped per user on each change: a load that raced a change is not cached. */
    versions = new Map();
    constructor(store, cache) {
        this.store = store;
        this.cache = cache;
    }
    make(userId, stored, overrides) {
        const json = buildRuleset(userId, stored, overrides);
        const plain = stored.length === 0 && overrides.length === 0;
        const compiled = plain ? (this.sharedDefault ??= new CompiledRuleset(json)) : new CompiledRuleset(json);
        return { json, compiled };
    }
    async of(userId) {
        return (await this.ofMany([userId])).get(userId);
    }
    /** The rules of every user given: cached ones from memory, the others in two queries. */
    async ofMany(userIds) {
        const out = new Map();
        const missing = [];
        for (const u of userIds) {
            const hit = this.cache.get(u);
            if (hit)
                out.set(u, hit);
            else
                missing.push(u);
        }
        if (missing.length === 0)
            return out;
        const before = missing.map((u) => this.versions.get(u) ?? 0);
        const { rules, overrides } = await this.store.rulesOfUsers(missing);
        missing.forEach((u, i) => {
            const r = this.make(u, rules.get(u) ?? [], overrides.get(u) ?? []);
            out.set(u, r);
            if ((this.versions.get(u) ?? 0) === before[i])
                this.cache.set(u, r);
        });
        return out;
    }
    drop(userId) {
        this.versions.set(userId, (this.versions.get(userId) ?? 0) + 1);
        this.cache.delete(userId);
    }
}
