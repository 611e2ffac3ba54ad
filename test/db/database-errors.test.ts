// The one list of failures that mean "the database is unreachable" (answered 503).
// The outage test (test/http/database-outage.test.ts) produces some of them for
// real; this covers every entry, including the ones a test cannot easily cause.
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/database-errors.ts';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    ['an unresolvable host', withCode('ENOTFOUND')],
    ['admin_shutdown (a server restart)', withCode('57P01', 'terminating connection due to administrator command')],
    ['crash_shutdown', withCode('57P02')],
    ['cannot_connect_now (the server is starting)', withCode('57P03', 'the database system is starting up')],
    ['too_many_connections', withCode('53300')],
    ['a connection exception of class 08', withCode('08006', 'connection failure')],
    ["pg's lost connection", new Error('Connection terminated unexpectedly')],
    ["the pool's connect timeout", new Error('timeout exceeded when trying to connect')],
    ['a closed Kysely handle', new Error('driver has already been destroyed')],
    ['a closed PGlite', new Error('PGlite is closed')],
    [
      'a refused connect to every address of a host',
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], ''),
    ],
    ['a wrapped cause', new Error('query failed', { cause: withCode('57P01') })],
    ['a wait past our statement bound', withCode('57014', 'canceling statement due to statement timeout')],
    ['a wait past our lock bound', withCode('55P03')],
  ])('%s is unavailable', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a serialization failure', withCode('40001')],
    ['a check violation', withCode('23514')],
    ['a syntax error', withCode('42601')],
    ['a raised exception', withCode('P0001', 'secret internal detail')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error at all', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s is not', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
