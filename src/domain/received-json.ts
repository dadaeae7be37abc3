// JSON as it was received, for checking a signature its sender made over values canonical JSON cannot
// carry (a float, an integer past 2^53, 1.0): each number keeps its source text, everything else is encoded
// as canonical JSON encodes it (keys by code point, no whitespace). A sender signs its own encoding of such
// a value — the text it sent — so a request whose body holds one is still authenticated, and the value is
// then refused where the room version forbids it (an event's M_BAD_JSON), not as a forged request.
// Spec: Appendices "Canonical JSON", "Signing JSON"; Server-Server API "Request Authentication".
import { compareCodePoints } from "./canonical-json.ts";

/** A number of a received document, as its text. */
class NumberText {
  constructor(readonly text: string) {}
}

/** Parses JSON text, each number kept as its source text (JSON.parse's source access). */
export function parseKeepingNumbers(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && typeof context?.source === "string" ? new NumberText(context.source) : value,
  );
}

/**
 * The canonical encoding of a value from parseKeepingNumbers, its numbers as received. Recursive: what it
 * encodes is a request body, whose nesting the route bounded before it was parsed.
 */
export function canonicalJsonAsReceived(value: unknown): string {
  if (value instanceof NumberText) return value.text;
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJsonAsReceived).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort(compareCodePoints);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJsonAsReceived(obj[k])}`).join(",")}}`;
}
