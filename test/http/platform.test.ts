import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

describe.each(backends)('platform routes and error shapes on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp.close());

  it('GET /healthz answers 200 while the process is up', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 with the database backend when the database is reachable', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/readyz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: backend, checks: { database: 'ok' } });
  });

  it('GET /openapi.json is an OpenAPI 3.1 document generated from the route schemas', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    expect(document.paths['/v1/account'].get.responses['200']).toBeDefined();
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('GET /docs serves the reference page without external assets', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).not.toMatch(/src="https?:\/\//);
  });

  it('GET /metrics answers Prometheus text', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
  });

  it('an unknown route is 404 not_found in the error shape', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: 'not_found',
      message: 'No route GET /v1/nothing-here.',
      request_id: expect.any(String),
    });
  });

  it('every response carries the request id, and a caller-given x-request-id is kept', async () => {
    const response = await testApp.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'trace-123' },
    });
    expect(response.headers['x-request-id']).toBe('trace-123');
  });

  // A database outage is 503 (test/http/database-outage.test.ts); a fault of the query itself is a 500.
  it('an unexpected failure is 500 internal_error with nothing internal in the body', async () => {
    const merchant = await testApp.createMerchant();
    const db = testApp.context.db;
    await sql`create function test_fault() returns trigger language plpgsql as $$ begin raise exception 'secret internal detail'; end $$`.execute(
      db,
    );
    await sql`create trigger test_fault before insert on payments for each row execute function test_fault()`.execute(
      db,
    );
    try {
      const response = await testApp.app.inject({
        method: 'POST',
        url: '/v1/payments',
        headers: { authorization: `Bearer ${merchant.api_key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ amount: 100, currency: 'RUB' }),
      });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({
        error: 'internal_error',
        message: 'Something went wrong on our side; nothing was changed. Repeat the request.',
        request_id: response.headers['x-request-id'],
      });
    } finally {
      await sql`drop trigger test_fault on payments`.execute(db);
    }
  });
});
