// A room's topic as plain text, for the places that show it without its event (the room directory,
// /hierarchy, room summaries): spec v1.15's `m.topic` content block (MSC3765) holds representations by
// mimetype, and its first `text/plain` one (a representation without a mimetype is plain text) is the
// topic; otherwise the `topic` field. As Synapse, a content without a string `topic` has no topic (the
// field is required) and an unreadable `m.topic` is ignored. Spec: Client-Server API `m.room.topic`.

/** The plain-text topic of an m.room.topic content, or null. */
export function plainTopic(content: Record<string, unknown> | undefined): string | null {
  if (!content || typeof content.topic !== "string") return null;
  const block = content["m.topic"];
  const reps = typeof block === "object" && block !== null && Array.isArray((block as Record<string, unknown>)["m.text"]) ? ((block as Record<string, unknown>)["m.text"] as unknown[]) : [];
  for (const r of reps) {
    if (typeof r !== "object" || r === null) continue;
    const { body, mimetype } = r as { body?: unknown; mimetype?: unknown };
    if (typeof body !== "string" || (mimetype !== undefined && typeof mimetype !== "string")) continue;
    if (mimetype === undefined || mimetype === "text/plain") return body;
  }
  return content.topic;
}
