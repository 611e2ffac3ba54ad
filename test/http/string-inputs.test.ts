// A NUL character or an unpaired surrogate in any string a request carries is
// 400 invalid_request naming the field, on every route, and changes nothing.
// The routes and their string inputs are read from the app itself (its onRoute
// events and schemas), so a route added later is probed without editing this file.
import type { FastifyInstance, RouteOptions } from 'fastify';
import diagnostics from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_SCOPES } from '../../src/http/api-scopes.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';

type Part = 'params' | 'querystring' | 'body' | 'headers';

interface Probe {
  readonly method: string;
  readonly url: string;
  readonly part: Part;
  /** The field's path inside its part, e.g. ['order_id']. */
  readonly path: readonly string[];
  readonly kind: 'nul' | 'surrogate';
}

interface JsonSchema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
}

function acceptsString(schema: JsonSchema): boolean {
  if (schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'))) return true;
  if (typeof schema.const === 'string' || schema.enum?.some((value) => typeof value === 'string')) return true;
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(acceptsString);
}

/** Paths of every string-accepting field of a schema, nested objects and arrays included. */
function stringFields(schema: JsonSchema | undefined, path: string[] = []): string[][] {
  if (!schema) return [];
  const fields: string[][] = path.length > 0 && acceptsString(schema) ? [path] : [];
  for (const [name, property] of Object.entries(schema.properties ?? {}))
    fields.push(...stringFields(property, [...path, name]));
  if (schema.items) fields.push(...stringFields(schema.items, [...path, '0']));
  for (const member of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    if (member.properties || member.items)
      fields.push(...stringFields(member, path).filter((field) => field.length > path.length));
  }
  const seen = new Set<string>();
  return fields.filter((field) => !seen.has(field.join('.')) && seen.add(field.join('.')));
}

const pathParameters = (url: string): string[] =>
  [...url.matchAll(/:([A-Za-z0-9_]+)|\*/g)].map((match) => match[1] ?? '*');

/** Every string input of one route: its schema's fields, or a stand-in field where a part has no schema. */
function probesOf(route: RouteOptions): Probe[] {
  const schema = (route.schema ?? {}) as Partial<Record<Part, JsonSchema>>;
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((method) => method !== 'HEAD');
  const fields: { part: Part; path: string[]; surrogate: boolean }[] = [];
  for (const name of pathParameters(route.url)) fields.push({ part: 'params', path: [name], surrogate: false });
  const queryFields = schema.querystring ? stringFields(schema.querystring) : [['probe']];
  for (const path of queryFields) fields.push({ part: 'querystring', path, surrogate: false });
  for (const path of stringFields(schema.headers)) fields.push({ part: 'headers', path, surrogate: false });
  return methods.flatMap((method) => {
    const bodyFields = method === 'GET' ? [] : schema.body ? stringFields(schema.body) : [['probe']];
    const all = [...fields, ...bodyFields.map((path) => ({ part: 'body' as const, path, surrogate: true }))];
    return all.flatMap(({ part, path, surrogate }) => {
      const probes: Probe[] = [{ method, url: route.url, part, path, kind: 'nul' }];
      // Percent-decoding and header parsing cannot produce a lone surrogate; JSON can.
      if (surrogate) probes.push({ method, url: route.url, part, path, kind: 'surrogate' });
      return probes;
    });
  });
}

/** Collects the routes of every Fastify app built while `build` runs. */
async function withRoutes<T>(build: () => Promise<T>): Promise<{ built: T; routes: RouteOptions[] }> {
  const routes: RouteOptions[] = [];
  const onCreated = (message: unknown) => {
    (message as { fastify: FastifyInstance }).fastify.addHook('onRoute', (route) => {
      routes.push(route);
    });
  };
  diagnostics.subscribe('fastify.initialization', onCreated);
  try {
    return { built: await build(), routes };
  } finally {
    diagnostics.unsubscribe('fastify.initialization', onCreated);
  }
}

function nested(path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  return /^\d+$/.test(head!) ? [nested(rest, value)] : { [head!]: nested(rest, value) };
}

describe.each(backends)('string inputs on %s', (backend) => {
  let testApp: TestApp;
  let routes: RouteOptions[];
  let apiKey: string;
  beforeAll(async () => {
    ({ built: testApp, routes } = await withRoutes(() =>
      createTestApp(backend, { config: { rateLimitPerMinute: 100_000 } }),
    ));
    const merchant = await testApp.createMerchant();
    apiKey = await testApp.createKey(merchant.shop_id, API_KEY_SCOPES);
  });
  afterAll(() => testApp.close());

  function send(probe: Probe) {
    const bad = probe.kind === 'nul' ? 'a\u0000b' : 'a\ud800b';
    let url = probe.url;
    for (const name of pathParameters(probe.url)) {
      const value = probe.part === 'params' && probe.path[0] === name ? 'a%00b' : 'x';
      url = url.replace(name === '*' ? '*' : `:${name}`, value);
    }
    if (probe.part === 'querystring') url += `?${encodeURIComponent(probe.path[0]!)}=a%00b`;
    const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
    if (probe.part === 'headers') headers[probe.path[0]!] = bad;
    let payload: string | undefined;
    if (probe.part === 'body' && /^\/pay(\/|$)/.test(probe.url)) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = `${probe.path[0]}=a%00b`;
    } else if (probe.part === 'body') {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(nested(probe.path, bad));
    }
    return testApp.app.inject({ method: probe.method as 'GET', url, headers, payload });
  }

  it('every route refuses a NUL or an unpaired surrogate in every string input with 400 naming the field', async () => {
    // An acquirer's notification body is its bytes, proven by its signature and the acquirer's API
    // (docs/connectors.md); an unknown connection answers 404 before anything reads it.
    const probes = routes
      .flatMap(probesOf)
      .filter((probe) => !(probe.url.startsWith('/acquirers/') && probe.part === 'body'));
    const described = probes.map((probe) => `${probe.method} ${probe.url} ${probe.part}.${probe.path.join('.')}`);
    // The enumeration itself reaches the inputs that answered 500 before.
    expect(described).toEqual(
      expect.arrayContaining([
        'POST /v1/payments body.order_id',
        'POST /v1/payments body.callback_url',
        'POST /v1/payments headers.idempotency-key',
        'GET /v1/payments querystring.cursor',
        'GET /v1/payments querystring.order_id',
        'GET /v1/payments/:payment_id params.payment_id',
        'GET /v1/webhooks/events querystring.type',
        'PUT /v1/webhooks/endpoint body.url',
        'POST /v1/crypto/balance/transfers body.external_id',
        'GET /v1/crypto/balance/operations querystring.account_id',
        'POST /pay/:order_code/card body.probe',
      ]),
    );
    const wrong: string[] = [];
    for (const [index, probe] of probes.entries()) {
      const response = await send(probe);
      const where = `${described[index]} (${probe.kind})`;
      if (response.statusCode !== 400) {
        wrong.push(`${where}: ${response.statusCode} ${response.body.slice(0, 120)}`);
      } else if (
        /^\/(pay|cabinet)(\/|$)/.test(probe.url) &&
        !probe.url.endsWith('/status') &&
        !probe.url.startsWith('/cabinet/assets/')
      ) {
        // The payer's page and the cabinet answer with a page, not API JSON (the payment page's
        // status poll, /status, and the cabinet's stylesheet and script answer as the API does).
        if (!String(response.headers['content-type']).startsWith('text/html')) wrong.push(`${where}: not an HTML page`);
      } else {
        const body = response.json();
        const field = `${probe.part} field "${probe.path.join('.')}"`;
        if (body.error !== 'invalid_request' || !String(body.message).startsWith(field))
          wrong.push(`${where}: ${response.body}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(probes.length).toBeGreaterThan(60);
  });

  it('a crafted cursor or time filter on every list is 400 invalid_request, never a database error', async () => {
    const lists = routes.filter((route) =>
      stringFields((route.schema as { querystring?: JsonSchema } | undefined)?.querystring).some(
        (path) => path[0] === 'cursor',
      ),
    );
    expect(lists.map((route) => route.url)).toEqual(
      expect.arrayContaining(['/v1/payments', '/v1/webhooks/events', '/v1/crypto/balance/operations']),
    );
    const uuid = '0b0c8d2e-8a42-4c55-b7a5-4a2b8d7b5c11';
    const crafted = [
      'op:9999999999999999999', // 19 digits, beyond int8
      'op:-1',
      JSON.stringify(['2026-11-01T10:00:00.000Z', 'evt_a\u0000b']),
      JSON.stringify(['-271821-04-20T00:00:00.000Z', 'evt_a']),
      JSON.stringify(['0000-01-01T00:00:00.000Z', 'evt_a']),
      `-271821-04-20T00:00:00.000Z|${uuid}`,
      `+275760-09-13T00:00:00.000Z|${uuid}`,
      `0000-01-01T00:00:00.000Z|${uuid}`,
      'not a cursor',
    ].map((text) => Buffer.from(text).toString('base64url'));
    const wrong: string[] = [];
    for (const route of lists) {
      const url = route.url.replace(/:([A-Za-z0-9_]+)/g, 'evt_0000000000000000000000000x');
      for (const cursor of crafted) {
        const response = await testApp.app.inject({
          method: 'GET',
          url: `${url}?cursor=${cursor}`,
          headers: { authorization: `Bearer ${apiKey}` },
        });
        // A list under a resource may answer 404 for the stand-in id first; a 500 is never right.
        if (
          ![400, 404].includes(response.statusCode) ||
          (response.statusCode === 400 && response.json().error !== 'invalid_request')
        ) {
          wrong.push(
            `${route.url} ${Buffer.from(cursor, 'base64url').toString()}: ${response.statusCode} ${response.body}`,
          );
        }
      }
    }
    for (const from of ['0000-01-01T00:00:00Z', '-271821-04-20T00:00:00Z']) {
      const response = await testApp.app.inject({
        method: 'GET',
        url: `/v1/crypto/balance/operations?from=${encodeURIComponent(from)}`,
        headers: { authorization: `Bearer ${apiKey}` },
      });
      if (response.statusCode !== 400) wrong.push(`operations from=${from}: ${response.statusCode} ${response.body}`);
    }
    expect(wrong).toEqual([]);
  });

  it('none of the refused requests changed anything', async () => {
    const headers = { authorization: `Bearer ${apiKey}` };
    const payments = await testApp.app.inject({ method: 'GET', url: '/v1/payments', headers });
    expect(payments.json().data).toEqual([]);
    const endpoint = await testApp.app.inject({ method: 'GET', url: '/v1/webhooks/endpoint', headers });
    expect(endpoint.json()).toEqual({ url: null });
    const operations = await testApp.app.inject({ method: 'GET', url: '/v1/crypto/balance/operations', headers });
    expect(operations.json().data).toEqual([]);
  });

  it('text that is valid Unicode, astral characters included, is stored and answered exactly as sent', async () => {
    const orderId = 'заказ 😀 №1 — 𝄞';
    const headers = { authorization: `Bearer ${apiKey}` };
    const created = await testApp.app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers,
      payload: { amount: 10, currency: 'RUB', order_id: orderId },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().order_id).toBe(orderId);
    const read = await testApp.app.inject({ method: 'GET', url: `/v1/payments/${created.json().payment_id}`, headers });
    expect(read.json().order_id).toBe(orderId);
  });
});
