// Query parameters of thumbnail requests, each checked with the spec's errors (width and height required,
// 1 to 10000; method crop or scale, default scale; animated a boolean).
import { MatrixError } from "../../domain/errors.js";
import { MAX_THUMBNAIL_DIMENSION } from "../../domain/media/thumbnails.js";
import { queryBool, queryInt, queryString } from "../http.js";
/** width, height, method and animated of a thumbnail request, each checked. */
export function thumbnailParams(c) {
    const dim = (name) => {
        const v = queryInt(c, name, { min: 1, max: MAX_THUMBNAIL_DIMENSION });
        if (v === undefined)
            throw new MatrixError("M_MISSING_PARAM", `Missing ${name} query parameter`, 400);
        return v;
    };
    const method = queryString(c, "method") ?? "scale";
    if (method !== "crop" && method !== "scale")
        throw new MatrixError("M_INVALID_PARAM", "method must be crop or scale", 400);
    return { width: dim("width"), height: dim("height"), method, animated: queryBool(c, "animated") ?? false };
}
