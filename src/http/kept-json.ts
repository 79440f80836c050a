import type { FastifyReply } from 'fastify';

/**
 * The JSON text of an answer a cache keeps (db/cache-catalogue.ts), made once per answer. A kept
 * answer is the same object on every hit, and serialising it again was most of what a hit cost:
 * the pipeline's 20 KB answers took 39 % of the service's busy time under the bench. The text is
 * the route's own schema's serialisation (so one of these per route), and it is held by the
 * answer: it goes when the cache lets the answer go, and the cache's size counts it.
 */
export function keptJson(): (reply: FastifyReply, answer: object) => FastifyReply {
  const texts = new WeakMap<object, ReturnType<FastifyReply['serialize']>>();
  return (reply, answer) => {
    let text = texts.get(answer);
    if (text === undefined) {
      text = reply.serialize(answer);
      texts.set(answer, text);
    }
    // A string with a JSON type is sent as it is, not serialised again.
    return reply.type('application/json; charset=utf-8').send(text);
  };
}
