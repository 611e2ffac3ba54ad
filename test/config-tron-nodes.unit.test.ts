// The TRON node list of the configuration: PAYGATE_TRON_NODES gives each URL
// its own API key and request budget; the older PAYGATE_TRON_NODE_URLS and
// PAYGATE_TRON_API_KEY keep working, but one key for several URLs is refused
// (it would reach providers it does not belong to). Errors never echo a key
// or a URL path (it may hold a token).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';

const nodes = (value: unknown) => ({ PAYGATE_TRON_NODES: JSON.stringify(value) });

describe('TRON node configuration', () => {
  it('reads each node with its own key and budget, in order', () => {
    const config = loadConfig(
      nodes([
        { url: 'https://api.trongrid.io', api_key: 'trial-key-1', requests_per_second: 15 },
        { url: 'https://node.example:8090/token-abc', requests_per_second: 0.5, burst: 2 },
        { url: 'https://other.example' },
      ]),
    );
    expect(config.tronNodes).toEqual([
      { url: 'https://api.trongrid.io', apiKey: 'trial-key-1', requestsPerSecond: 15, burst: undefined },
      { url: 'https://node.example:8090/token-abc', apiKey: undefined, requestsPerSecond: 0.5, burst: 2 },
      { url: 'https://other.example', apiKey: undefined, requestsPerSecond: undefined, burst: undefined },
    ]);
    expect(config.tronNodeUrls).toEqual([
      'https://api.trongrid.io',
      'https://node.example:8090/token-abc',
      'https://other.example',
    ]);
  });

  it('keeps the older variables working: a key with one URL goes to that URL', () => {
    expect(
      loadConfig({ PAYGATE_TRON_NODE_URLS: 'https://api.trongrid.io', PAYGATE_TRON_API_KEY: 'k' }).tronNodes,
    ).toEqual([{ url: 'https://api.trongrid.io', apiKey: 'k' }]);
    expect(loadConfig({ PAYGATE_TRON_NODE_URLS: 'https://a.example, https://b.example' }).tronNodes).toEqual([
      { url: 'https://a.example', apiKey: undefined },
      { url: 'https://b.example', apiKey: undefined },
    ]);
    expect(loadConfig({}).tronNodes).toEqual([]);
  });

  it('refuses one API key for several URLs, naming the setting to use instead', () => {
    expect(() =>
      loadConfig({ PAYGATE_TRON_NODE_URLS: 'https://a.example,https://b.example', PAYGATE_TRON_API_KEY: 'k' }),
    ).toThrow(
      'PAYGATE_TRON_API_KEY would be sent to all 2 URLs of PAYGATE_TRON_NODE_URLS; give the key to the URL it belongs to in PAYGATE_TRON_NODES instead',
    );
  });

  it.each([
    [{ PAYGATE_TRON_NODES: 'not json' }, 'must be a JSON array'],
    [nodes({ url: 'https://a.example' }), 'must be a JSON array of 1 to 10 node objects'],
    [nodes([]), 'must be a JSON array of 1 to 10 node objects'],
    [
      nodes(Array.from({ length: 11 }, (_, index) => ({ url: `https://n${index}.example` }))),
      'must be a JSON array of 1 to 10',
    ],
    [nodes(['https://a.example']), 'entry 1 must be an object'],
    [nodes([{ url: 'https://a.example', apiKey: 'x' }]), 'entry 1 has the unknown field "apiKey"'],
    [nodes([{}]), 'entry 1 needs "url"'],
    [nodes([{ url: 'node.example' }]), 'entry 1: "url" is not a URL'],
    [nodes([{ url: 'ftp://node.example' }]), '"url" must use https or http'],
    [nodes([{ url: 'https://user:pass@node.example' }]), 'must not carry credentials'],
    [nodes([{ url: 'https://node.example?key=1' }]), 'must not carry credentials, a query or a fragment'],
    [nodes([{ url: 'https://a.example' }, { url: 'https://a.example' }]), 'lists https://a.example twice'],
    [
      nodes([{ url: 'https://a.example', api_key: '' }]),
      'entry 1 (https://a.example): "api_key" must be 1 to 200 printable characters',
    ],
    [nodes([{ url: 'https://a.example', api_key: 'has space' }]), '"api_key" must be 1 to 200 printable characters'],
    [
      nodes([{ url: 'https://a.example', requests_per_second: 0 }]),
      '"requests_per_second" must be a number from 0.1 to 100000',
    ],
    [nodes([{ url: 'https://a.example', requests_per_second: '15' }]), '"requests_per_second" must be a number'],
    [nodes([{ url: 'https://a.example', requests_per_second: 1e9 }]), '"requests_per_second" must be a number'],
    [nodes([{ url: 'https://a.example', burst: 5 }]), '"burst" needs "requests_per_second"'],
    [
      nodes([{ url: 'https://a.example', requests_per_second: 5, burst: 1.5 }]),
      '"burst" must be a whole number from 1 to 100000',
    ],
    [nodes([{ url: 'https://a.example', requests_per_second: 5, burst: 0 }]), '"burst" must be a whole number'],
    [{ ...nodes([{ url: 'https://a.example' }]), PAYGATE_TRON_NODE_URLS: 'https://b.example' }, 'set one or the other'],
    [{ ...nodes([{ url: 'https://a.example' }]), PAYGATE_TRON_API_KEY: 'k' }, 'set one or the other'],
  ])('%j is refused with a message naming PAYGATE_TRON_NODES', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never repeats a key or a URL path in its messages', () => {
    const secretPath = nodes([
      { url: 'https://a.example/secret-token', api_key: 'secret key', requests_per_second: 5 },
    ]);
    expect(() => loadConfig(secretPath)).toThrow(/api_key/);
    const message = (() => {
      try {
        loadConfig(secretPath);
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).not.toContain('secret');
  });
});
