// What an internal request (one that carried worker_replication_secret on /_weft/replication/) brought
// with it, kept on the raw request by the URL rewrite in compat/cluster.ts: the instance that forwarded
// it and the client's address as that instance saw it. Read by the route helper (no second forward, the
// client's IP) and by the listener check (an internal request is served on whichever listener it reached).
import type { IncomingMessage } from "node:http";

const INTERNAL = Symbol("weft.internal");
interface InternalMark {
  /** The instance that sent it ("" when it did not say). */
  from: string;
  /** For a forwarded request: the client's address. */
  clientIp?: string;
  /** Whether it is a client or federation request forwarded as it came. */
  forwarded: boolean;
}
type Marked = IncomingMessage & { [INTERNAL]?: InternalMark };

export function markInternal(raw: IncomingMessage, mark: InternalMark): void {
  (raw as Marked)[INTERNAL] = mark;
}

/** The mark of a request that carried the secret, undefined for every other request. */
export function internalMark(raw: IncomingMessage): InternalMark | undefined {
  return (raw as Marked)[INTERNAL];
}
