// The node settings as the gateway wires them: PAYGATE_TRON_NODES reaches the
// live node client (each URL with its own key, failing over in order), and the
// node clients of a gateway context count their requests per node origin into
// the context's metrics registry (GET /metrics).
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { signingKeyFromMnemonic } from '../../../src/crypto/keys/hd-keys.ts';
import { createCryptoChain, type CryptoChain } from '../../../src/crypto/chain/crypto-chain.ts';
import { testCryptoDeps } from '../crypto-deps-support.ts';
import { createLogger } from '../../../src/logger.ts';
import { createTestContext } from '../../support/app.ts';
import { backends } from '../../support/databases.ts';
import { blockJson } from '../tron/fixtures/chain-json.ts';
import { startFakeTronNode, type FakeTronNode } from '../tron/fixtures/fake-tron-node.ts';

describe('live nodes from PAYGATE_TRON_NODES', () => {
  let folder: string;
  let first: FakeTronNode;
  let second: FakeTronNode;
  let chain: CryptoChain | undefined;
  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'paygate-nodes-'));
    first = await startFakeTronNode();
    second = await startFakeTronNode();
  });
  afterEach(async () => {
    await chain?.close();
    await first.close();
    await second.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('each URL gets its own key only, in order of preference, and both are counted by origin', async () => {
    const xpubFile = join(folder, 'xpub');
    await writeFile(xpubFile, `${signingKeyFromMnemonic(generateMnemonic(english, 256)).xpub}\n`, { mode: 0o600 });
    first.on('/wallet/getnowblock', { status: 503, text: 'down' });
    second.on('/wallet/getnowblock', { json: blockJson({ number: 200 }) });
    const config = loadConfig({
      PAYGATE_DATA_DIR: 'memory://',
      PAYGATE_TRON_XPUB_FILE: xpubFile,
      PAYGATE_TRON_NODES: JSON.stringify([
        { url: first.url, api_key: 'key-of-first', requests_per_second: 50 },
        { url: second.url, api_key: 'key-of-second' },
      ]),
    });
    const metrics = new Registry();
    chain = createCryptoChain({
      config,
      dataDir: undefined,
      logger: createLogger({ ...config, logLevel: 'silent' }),
      metrics,
    });
    expect(chain.liveConfigured).toBe(true);
    const live = await chain.forMode('live');
    expect((await live.node.getHeadBlock()).number).toBe(200);
    expect(first.requests.map((request) => request.headers['tron-pro-api-key'])).toEqual(['key-of-first']);
    expect(second.requests.map((request) => request.headers['tron-pro-api-key'])).toEqual(['key-of-second']);
    const exposed = await metrics.metrics();
    expect(exposed).toContain(`paygate_tron_node_requests_total{node="${first.url}",outcome="failed"} 1`);
    expect(exposed).toContain(`paygate_tron_node_requests_total{node="${second.url}",outcome="ok"} 1`);
    expect(exposed).not.toContain('key-of');
  });
});

describe.each(backends)('node metrics of a gateway context on %s', (backend) => {
  it("the sandbox node's requests are counted in the context's registry", async () => {
    const { context, database } = await createTestContext(backend);
    const deps = testCryptoDeps(context);
    try {
      const access = await deps.chain.forMode('sandbox');
      await access.node.getHeadBlock();
      expect(await context.metrics.metrics()).toMatch(
        /paygate_tron_node_requests_total\{node="http:\/\/127\.0\.0\.1:\d+",outcome="ok"\} [1-9]/,
      );
    } finally {
      await deps.close();
      await database.close();
    }
  });
});
