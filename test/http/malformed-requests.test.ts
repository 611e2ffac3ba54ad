// Requests that fail before any route runs — a path that is not valid
// percent-encoding, a path parameter over the router's limit, bytes that are
// not HTTP at all, headers over Node's limit — and JSON sent under another
// content type all answer the {"error", "message"} body, with the
// request's id (X-Request-Id) as "request_id".
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';

/** Writes raw bytes to the server and returns everything it answers before closing. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(bytes);
  });
}

function parseRawResponse(raw: string): {
  status: number;
  contentType: string | undefined;
  requestId: string | undefined;
  body: unknown;
} {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1];
  const requestId = /\r\nx-request-id: ([^\r]+)/i.exec(head)?.[1];
  return { status, contentType, requestId, body: JSON.parse(body) };
}

describe.each(backends)('malformed requests on %s', (backend) => {
  let testApp: TestApp;
  let apiKey: string;
  let port: number;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    apiKey = (await testApp.createMerchant()).api_key;
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    port = (testApp.app.server.address() as AddressInfo).port;
  });
  afterAll(() => testApp.close());

  const get = (url: string) =>
    testApp.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });

  it('a path that is not valid percent-encoded UTF-8 is 400 invalid_request in the error body, with a request id', async () => {
    for (const url of ['/v1/payments/%E0%A4%A', '/v1/payments/%ED%A0%80', '/pay/%zz']) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json(), url).toEqual({
        error: 'invalid_request',
        message: expect.stringContaining('percent-encoded'),
        request_id: response.headers['x-request-id'],
      });
      expect(response.headers['x-request-id'], url).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('a path parameter over 100 characters is 400 invalid_request in the error body', async () => {
    const response = await get(`/v1/payments/${'a'.repeat(101)}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'invalid_request',
      message: 'A path parameter is longer than 100 characters.',
      request_id: expect.any(String),
    });
  });

  it('a JSON body sent as text/plain is 415 unsupported_media_type and creates nothing', async () => {
    const response = await testApp.app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'text/plain' },
      payload: JSON.stringify({ amount: 10, currency: 'RUB' }),
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({
      error: 'unsupported_media_type',
      message: expect.stringContaining('application/json'),
      request_id: expect.any(String),
    });
    expect((await get('/v1/payments')).json().data).toEqual([]);
  });

  it('bytes that are not HTTP get 400 invalid_request as JSON, and the connection is closed', async () => {
    const answer = parseRawResponse(await rawExchange(port, 'HELLO THERE\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body).toEqual({
      error: 'invalid_request',
      message: 'The request is not valid HTTP/1.1.',
      request_id: answer.requestId,
    });
  });

  it('a header line that breaks HTTP syntax gets 400 invalid_request as JSON', async () => {
    const answer = parseRawResponse(
      await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'),
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: 'invalid_request',
      message: 'The request is not valid HTTP/1.1.',
      request_id: expect.any(String),
    });
  });

  it('headers over 16 KiB get 431 with invalid_request as JSON', async () => {
    const answer = parseRawResponse(
      await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`),
    );
    expect(answer.status).toBe(431);
    expect(answer.body).toEqual({
      error: 'invalid_request',
      message: 'The request headers are larger than 16 KiB.',
      request_id: expect.any(String),
    });
  });

  it('a well-formed request on the same server still works', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/v1/account`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(response.status).toBe(200);
  });
});
