// Every error body carries the request's id as `request_id`: the value of the
// X-Request-Id header and of `request_id` on every log line of that request. An
// error's internal cause is logged with the refusal and never sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { InvalidStateError } from '../../src/errors.ts';
import { DependencyHealth } from '../../src/health/dependency-health.ts';
import { buildTestApp, createTestContext } from '../support/app.ts';
import { backends, type TestDatabase } from '../support/databases.ts';
import { capturingLogger, type LogLine } from '../support/log-capture.ts';

describe.each(backends)('request ids in error bodies and logs on %s', (backend) => {
  let app: App;
  let database: TestDatabase;
  let lines: LogLine[];

  beforeAll(async () => {
    const captured = capturingLogger();
    lines = captured.lines;
    const made = await createTestContext(backend);
    database = made.database;
    app = await buildTestApp({
      ...made.context,
      logger: captured.logger,
      health: new DependencyHealth(captured.logger),
    });
    // Outside /v1 and the OpenAPI document: a refusal whose cause names our internals.
    app.get('/test/refusal-with-cause', { schema: { hide: true } }, async () => {
      throw new InvalidStateError('The money reserved for this operation was already voided.', {
        cause: 'reservation "payout:po_1:reserve" was already voided',
      });
    });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await database.close();
  });

  it('a refused request answers its X-Request-Id as request_id, and every log line of it carries the same id', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/v1/account',
      headers: { authorization: 'Bearer sk_test_unknown' },
    });
    expect(response.statusCode).toBe(401);
    const requestId = response.headers['x-request-id'];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.json()).toEqual({ error: 'unauthorized', message: expect.any(String), request_id: requestId });
    const ofRequest = lines.filter((line) => line.request_id === requestId);
    expect(ofRequest.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['incoming request', 'request refused', 'request completed']),
    );
    expect(lines.filter((line) => 'reqId' in line)).toEqual([]);
  });

  it("a caller's own X-Request-Id is the body's request_id", async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/v1/nothing-here',
      headers: { 'x-request-id': 'trace-404' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: 'not_found',
      message: 'No route GET /v1/nothing-here.',
      request_id: 'trace-404',
    });
  });

  it('the public message is sent, the internal cause only logged', async () => {
    const response = await app.inject({ method: 'GET', url: '/test/refusal-with-cause' });
    expect(response.statusCode).toBe(409);
    expect(response.body).not.toContain('payout:po_1');
    expect(response.json()).toEqual({
      error: 'invalid_state',
      message: 'The money reserved for this operation was already voided.',
      request_id: response.headers['x-request-id'],
    });
    const refusal = lines.find(
      (line) => line.request_id === response.headers['x-request-id'] && line.msg === 'request refused',
    );
    expect(refusal).toMatchObject({
      code: 'invalid_state',
      status: 409,
      cause: 'reservation "payout:po_1:reserve" was already voided',
    });
  });
});
