// How the OAuth server's HTML pages answer a failed request: a Matrix error becomes the error page with
// its status (and Retry-After for a rate limit); anything else is left to the server's error handler.
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import type { Call } from "../http.ts";
import { errorPage } from "./page.ts";
import { oauthTheme } from "./theme.ts";

/** Runs a page's handler, answering its MatrixError as the error page. */
export function asPage(s: Services, c: Call, run: () => Promise<unknown>): Promise<unknown> {
  return run().catch((err: unknown) => {
    if (!(err instanceof MatrixError)) throw err;
    if (err.extra?.retry_after_ms !== undefined) c.reply.header("retry-after", String(Math.ceil(Number(err.extra.retry_after_ms) / 1000)));
    return errorPage(oauthTheme(s), c.reply, err.httpStatus, err.errcode, err.message);
  });
}
