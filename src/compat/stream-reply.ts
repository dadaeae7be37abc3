// Answers whose body streams (media files, multipart media): the body is handed to Fastify through a
// guard, so a source that fails in the middle cuts the connection — the client sees an incomplete answer,
// never a complete-looking one — instead of reaching the error handler after the headers went out (which
// made Fastify answer a second time: FST_ERR_REP_INVALID_PAYLOAD_TYPE, a logged 500). The failure is
// logged once as a warning.
import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";

export function sendStreamed(reply: FastifyReply, body: AsyncIterable<Buffer>, what: string): FastifyReply {
  async function* guarded(): AsyncGenerator<Buffer> {
    try {
      yield* body;
    } catch (err) {
      reply.log.warn({ reqId: reply.request.id, err }, `${what} failed while it was being sent; connection closed`);
      // Cut first: the stream then ends quietly into a connection that is gone.
      reply.raw.destroy();
    }
  }
  return reply.send(Readable.from(guarded(), { objectMode: false }));
}
