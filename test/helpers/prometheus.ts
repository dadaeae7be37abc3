// A small strict parser of the Prometheus text exposition format (0.0.4) for tests: written here, apart
// from prom-client (which produces the text), so a malformed exposition fails the test. Checks each line's
// syntax, that TYPE comes before a family's samples, that sample names belong to their family's type,
// and that no series appears twice.

export interface PromSample {
  /** The sample's own name (with _bucket/_sum/_count/_total where the type has them). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SUFFIXES: Record<PromFamily["type"], string[]> = {
  counter: ["", "_total"],
  gauge: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
  untyped: [""],
};

/** A sample value as Prometheus reads it (Go's ParseFloat: Inf and NaN in any case). */
function parseValue(text: string, line: string): number {
  const lower = text.toLowerCase();
  if (lower === "+inf" || lower === "inf") return Infinity;
  if (lower === "-inf") return -Infinity;
  if (lower === "nan") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq).trim();
    if (!LABEL.test(name) || name in labels) throw new Error(`bad or repeated label "${name}" in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let j = eq + 2;
    let value = "";
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const c = text[++j];
        if (c === "n") value += "\n";
        else if (c === "\\" || c === '"') value += c;
        else throw new Error(`bad escape in: ${line}`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (i < text.length) throw new Error(`expected "," between labels in: ${line}`);
  }
  return labels;
}

export function parsePrometheusText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const seen = new Set<string>();
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!NAME.test(name!)) throw new Error(`bad metric name in: ${line}`);
      const f = families.get(name!) ?? { name: name!, type: "untyped" as const, help: "", samples: [] };
      if (kind === "TYPE") {
        if (!(rest! in SUFFIXES)) throw new Error(`bad type in: ${line}`);
        if (f.samples.length > 0) throw new Error(`TYPE after samples in: ${line}`);
        f.type = rest as PromFamily["type"];
      } else f.help = rest!;
      families.set(name!, f);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const [, name, labelText, valueText] = m;
    const family = [...families.values()].find((f) => SUFFIXES[f.type].some((s) => f.name + s === name));
    if (!family) throw new Error(`sample of no declared family: ${line}`);
    const labels = parseLabels(labelText ?? "", line);
    const key = name + JSON.stringify(Object.entries(labels).sort());
    if (seen.has(key)) throw new Error(`series repeated: ${line}`);
    seen.add(key);
    family.samples.push({ name: name!, labels, value: parseValue(valueText!, line) });
  }
  for (const f of families.values()) {
    if (f.type !== "histogram") continue;
    for (const s of f.samples.filter((x) => x.name.endsWith("_count"))) {
      const { le: _le, ...rest } = s.labels;
      const inf = f.samples.find((x) => x.name === `${f.name}_bucket` && x.labels.le === "+Inf" && sameLabels(x.labels, rest));
      if (!inf || inf.value !== s.value) throw new Error(`histogram ${f.name}: the +Inf bucket differs from _count for ${JSON.stringify(rest)}`);
    }
  }
  return families;
}

function sameLabels(withLe: Record<string, string>, without: Record<string, string>): boolean {
  const { le: _le, ...rest } = withLe;
  return JSON.stringify(Object.entries(rest).sort()) === JSON.stringify(Object.entries(without).sort());
}

/** The value of `name` (a sample name) with labels including `labels` (NaN if none matches). */
export function sampleValue(families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number {
  for (const f of families.values())
    for (const s of f.samples)
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
  return NaN;
}
