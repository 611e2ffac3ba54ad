// The response check that every test runs under (test/support/openapi-conformance.ts)
// catches what it is there to catch: a status the document does not list and a
// body that does not match the schema of its status.
import swagger from '@fastify/swagger';
import Fastify, { type FastifySchema } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ResponseContract, takeViolations, type OpenApiDocument } from '../support/openapi-conformance.ts';

const document: OpenApiDocument = {
  paths: {
    '/v1/things/{thing_id}': {
      get: {
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id'],
                  properties: { id: { type: 'string' } },
                  additionalProperties: false,
                },
              },
            },
          },
        },
      },
    },
  },
};

describe('the OpenAPI response check', () => {
  const contract = new ResponseContract(document);

  it('accepts a listed status whose body matches its schema', () => {
    expect(
      contract.problemWith('GET', '/v1/things/:thing_id', 200, 'application/json; charset=utf-8', '{"id":"t1"}'),
    ).toBeUndefined();
  });

  it('names method, path and status of a status the document does not list', () => {
    expect(contract.problemWith('GET', '/v1/things/:thing_id', 404, 'application/json', '{"error":"not_found"}')).toBe(
      'GET /v1/things/{thing_id} answered 404, which the document does not list (it lists 200)',
    );
  });

  it('reports a body that does not match the schema of its status', () => {
    expect(contract.problemWith('GET', '/v1/things/:thing_id', 200, 'application/json', '{"id":7,"extra":true}')).toBe(
      'GET /v1/things/{thing_id} 200 body does not match the document: (body) must NOT have additional properties; /id must be string; body: {"id":7,"extra":true}',
    );
  });

  it('reports an operation that is not in the document', () => {
    expect(contract.problemWith('POST', '/v1/things/:thing_id', 200, 'application/json', '{}')).toBe(
      'POST /v1/things/{thing_id} answered 200, but the document has no such operation',
    );
  });

  it('checks every response of an app built in a test, through the app’s own document', async () => {
    const app = Fastify();
    await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'check', version: '1' } } });
    const thing = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
    // Widened, so that the handler may answer a status the schema does not list.
    const schema: FastifySchema = { response: { 200: thing } };
    app.get('/v1/things/:thing_id', { schema }, async (request, reply) => {
      const { thing_id: thingId } = request.params as { thing_id: string };
      if (thingId === 'teapot') return reply.code(418).send({ error: 'teapot' });
      return { id: thingId };
    });
    app.get('/v1/undocumented', { schema: { hide: true } }, async () => ({ ok: true }));
    await app.ready();
    try {
      await app.inject({ method: 'GET', url: '/v1/things/t1' });
      expect(takeViolations()).toEqual([]);
      await app.inject({ method: 'GET', url: '/v1/things/teapot' });
      await app.inject({ method: 'GET', url: '/v1/undocumented' });
      expect(takeViolations()).toEqual([
        'GET /v1/things/{thing_id} answered 418, which the document does not list (it lists 200)',
        'GET /v1/undocumented answered 200, but the document has no such operation',
      ]);
    } finally {
      await app.close();
    }
  });
});
