// Query parameters of thumbnail requests, each checked with the spec's errors (width and height required,
// 1 to 10000; method crop or scale, default scale; animated a boolean), and an upload request's input.
import { Readable } from "node:stream";
import { MatrixError } from "../../domain/errors.ts";
import type { UploadInput } from "../../domain/media/upload.ts";
import { MAX_THUMBNAIL_DIMENSION } from "../../domain/media/thumbnails.ts";
import { queryBool, queryInt, queryString, type Call } from "../http.ts";

/** width, height, method and animated of a thumbnail request, each checked. */
export function thumbnailParams(c: Call) {
  const dim = (name: string) => {
    const v = queryInt(c, name, { min: 1, max: MAX_THUMBNAIL_DIMENSION });
    if (v === undefined) throw new MatrixError("M_MISSING_PARAM", `Missing ${name} query parameter`, 400);
    return v;
  };
  const method = queryString(c, "method") ?? "scale";
  if (method !== "crop" && method !== "scale") throw new MatrixError("M_INVALID_PARAM", "method must be crop or scale", 400);
  return { width: dim("width"), height: dim("height"), method, animated: queryBool(c, "animated") ?? false } as const;
}


/** An upload's body (the media scope hands it over as an unread stream), size, type and ?filename=. */
export function uploadInput(c: Call): UploadInput {
  const body = c.req.body as UploadInput["body"] | undefined;
  return {
    body: body ?? Readable.from([]),
    contentLength: c.req.headers["content-length"],
    contentType: c.req.headers["content-type"],
    filename: queryString(c, "filename"),
  };
}
