// `IN (?, ?, ...)` lists for the raw-SQL reads that batch many ids in one query: the placeholders, and
// the split of a long list into chunks small enough for SQLite's limit on bound variables (999 in old
// builds; a few hundred ids a query leaves room for the query's other parameters).
export const marks = (n: number) => Array.from({ length: n }, () => "?").join(",");

export function chunks<T>(items: readonly T[], size = 400): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
