// Structured JSON logs (pino): with `log_request_context`, every line written while a request is handled
// carries that request's id (`reqId`), whichever module wrote it — the REST and GraphQL faces, the domain,
// storage (observability/request-context.ts). The request line and the faces' error lines always do.
import type { Logger } from "pino";
import { currentRequest } from "./request-context.ts";

/** `log` with the current request's id added to each line (outside a request, lines are unchanged). */
export function withRequestIds(log: Logger): Logger {
  return log.child(
    {},
    {
      formatters: {
        log(object: object) {
          const ctx = currentRequest();
          return ctx && (object as { reqId?: unknown }).reqId === undefined ? { reqId: ctx.id, ...object } : object;
        },
      },
    },
  );
}
