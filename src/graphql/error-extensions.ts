// The extensions a MatrixError carries in a GraphQL error: `errcode` plus the spec's extra fields of the
// REST body. Apart from errors.ts so the light part of the face (server.ts) shapes errors without graphql-js.
import type { MatrixError } from "../domain/errors.ts";

export function matrixErrorExtensions(err: MatrixError): Record<string, unknown> {
  const { error: _message, errcode, ...extra } = err.toJSON();
  return { ...extra, errcode: typeof errcode === "string" ? errcode : err.errcode };
}
