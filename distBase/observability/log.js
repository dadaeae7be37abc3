import { currentRequest } from "./request-context.js";
/** `log` with the current request's id added to each line (outside a request, lines are unchanged). */
export function withRequestIds(log) {
    return log.child({}, {
        formatters: {
            log(object) {
                const ctx = currentRequest();
                return ctx && object.reqId === undefined ? { reqId: ctx.id, ...object } : object;
            },
        },
    });
}
