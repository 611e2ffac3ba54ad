// JSON request bodies, parsed so that every number keeps its source text:
// JSON.parse turns 10.0000000000000001 into the double 10 before validation
// runs, so money is read from the lexeme instead (Node 24's JSON.parse gives a
// reviver the source text of each primitive). The lexemes ride on the parsed
// objects under a symbol, invisible to validation and serialization.
import secureJsonParse from 'secure-json-parse';

const LEXEMES = Symbol('paygate.jsonNumberLexemes');

type Holder = Record<PropertyKey, unknown> & { [LEXEMES]?: Record<string, string> };

/** Parses JSON like Fastify's default parser (refusing __proto__ and constructor.prototype) and keeps number lexemes. */
export function parseJsonKeepingNumberLexemes(text: string): unknown {
  return secureJsonParse.parse(
    text,
    function (this: Holder, key: string, value: unknown, context?: { source?: string }) {
      if (typeof value === 'number' && context?.source !== undefined) {
        (this[LEXEMES] ??= Object.create(null) as Record<string, string>)[key] = context.source;
      }
      return value;
    } as (this: unknown, key: string, value: unknown) => unknown,
    { protoAction: 'error', constructorAction: 'error' },
  );
}

/** The source text of the number at `holder[key]` when the body came through the JSON parser above. */
export function numberLexeme(holder: object, key: string): string | undefined {
  return (holder as Holder)[LEXEMES]?.[key];
}
