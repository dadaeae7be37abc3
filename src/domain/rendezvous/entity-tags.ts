// Entity tags and the conditional request headers MSC4108's rendezvous sessions use (RFC 9110 §8.8.3,
// §13.1.1 If-Match, §13.1.2 If-None-Match): a field value is `*` or a comma-separated list of entity tags;
// If-Match compares strongly (a weak tag never matches), If-None-Match weakly. Members that are not entity
// tags are ignored, as Synapse's `headers` crate does (`If-Match: garbage` fails the condition, 412).

/** A strong entity tag for a new revision: 128 random bits, quoted (`"..."`). */
export function newEntityTag(random: Buffer): string {
  return `"${random.toString("base64url")}"`;
}

interface Tag {
  weak: boolean;
  opaque: string;
}

/** An entity tag (`"x"` or `W/"x"`), or undefined when `s` is none. */
function parseTag(s: string): Tag | undefined {
  const weak = s.startsWith("W/");
  const quoted = weak ? s.slice(2) : s;
  if (quoted.length < 2 || !quoted.startsWith('"') || !quoted.endsWith('"')) return undefined;
  const opaque = quoted.slice(1, -1);
  // etagc = %x21 / %x23-7E / obs-text: no space, no DQUOTE, no control characters.
  for (let i = 0; i < opaque.length; i++) {
    const c = opaque.charCodeAt(i);
    if (c < 0x21 || c === 0x22 || c === 0x7f) return undefined;
  }
  return { weak, opaque };
}

/** `*` (any representation), or the entity tags of the field value. */
function parseList(field: string): "any" | Tag[] {
  if (field.trim() === "*") return "any";
  return field.split(",").flatMap((m) => parseTag(m.trim()) ?? []);
}

/** If-Match (RFC 9110 §13.1.1): whether the write may go ahead on the representation tagged `current`. */
export function ifMatchPasses(field: string, current: string): boolean {
  const list = parseList(field);
  if (list === "any") return true;
  const cur = parseTag(current)!;
  return list.some((t) => !t.weak && !cur.weak && t.opaque === cur.opaque);
}

/** If-None-Match (RFC 9110 §13.1.2): false when the client's copy is current (the answer is then 304). */
export function ifNoneMatchPasses(field: string, current: string): boolean {
  const list = parseList(field);
  if (list === "any") return false;
  const cur = parseTag(current)!;
  return !list.some((t) => t.opaque === cur.opaque);
}
