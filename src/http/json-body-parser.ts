// JSON bodies keep each number's source text (src/money/json-lexemes.ts), so
// money is parsed from what the client sent, not from a double. Errors are the
// ones Fastify's own JSON parser gives, so the error handler maps them as before.
import { errorCodes, type FastifyInstance } from 'fastify';
import { parseJsonKeepingNumberLexemes } from '../money/json-lexemes.ts';

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length === 0) {
      done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      return;
    }
    try {
      done(null, parseJsonKeepingNumberLexemes(text));
    } catch {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    }
  });
}
