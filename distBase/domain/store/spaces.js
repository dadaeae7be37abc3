export class SpaceReads {
    sql;
    constructor(sql) {
        this.sql = sql;
    }
    async joinedCounts(roomIds) {
        const out = new Map();
        for (let i = 0; i < roomIds.length; i += 500) {
            const chunk = roomIds.slice(i, i + 500);
            if (chunk.length === 0)
                continue;
            const rows = await this.sql.all(`SELECT room_id, COUNT(*) AS n FROM room_memberships WHERE membership = ? AND room_id IN (${chunk.map(() => "?").join(",")}) GROUP BY room_id`, ["join", ...chunk]);
            for (const r of rows)
                out.set(r.room_id, Number(r.n));
        }
        return out;
    }
}
