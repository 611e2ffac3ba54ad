// `paygate acquirer simulate tbank|yookassa`: a provider's simulator as a
// process of its own; the production provider accepts the credentials it prints
// and is refused with others, and SIGTERM stops it with exit code 0.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { AcquirerCredentialsError, type AcquirerConnection } from '../../src/payments/connectors/acquirer-provider.ts';
import { tbankProvider } from '../../src/payments/connectors/tbank/tbank-provider.ts';
import { yookassaProvider } from '../../src/payments/connectors/yookassa/yookassa-provider.ts';
import { listeningUrl, PAYGATE_BIN, spawnUntilReady } from '../support/cli.ts';

describe('paygate acquirer simulate', () => {
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  /** Starts `paygate acquirer simulate PROVIDER` and waits until it has printed its address and what `printed` reads. */
  function startSimulator<T>(provider: string, printed: (output: string, url: string) => T | undefined) {
    return spawnUntilReady(
      [PAYGATE_BIN, 'acquirer', 'simulate', provider, '--port', '0'],
      (text) => {
        const url = listeningUrl(text);
        return url === undefined ? undefined : printed(text, url);
      },
      { onSpawn: (spawned) => (stop = () => spawned.kill('SIGKILL')) },
    );
  }

  it('serves the T-Bank API with the credentials it prints and stops cleanly on SIGTERM', async () => {
    const {
      child,
      ready: printed,
      output,
    } = await startSimulator('tbank', (text, url) => {
      const credentials = /terminal_key=(\S+) password=(\S+)/.exec(text);
      return credentials ? { url, terminalKey: credentials[1]!, password: credentials[2]! } : undefined;
    });
    const connection = (password: string): AcquirerConnection => ({
      id: 'acqc_cli',
      shopId: 'shop_cli',
      provider: 'tbank',
      apiUrl: printed.url,
      credentials: { terminal_key: printed.terminalKey, password },
      methods: ['card'],
      notificationUrl: 'http://127.0.0.1:9/notifications',
    });
    const deps = { clock: systemClock, logger: pino({ level: 'silent' }) };
    await expect(tbankProvider.verifyCredentials(connection(printed.password), deps)).resolves.toBeUndefined();
    await expect(tbankProvider.verifyCredentials(connection('wrong-password'), deps)).rejects.toBeInstanceOf(
      AcquirerCredentialsError,
    );
    child.kill('SIGTERM');
    const [code] = await once(child, 'close');
    stop = undefined;
    expect(code).toBe(0);
    expect(output()).toContain('tbank simulator stopped');
    expect(output()).toContain('PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK=127.0.0.1/32');
  });

  it('serves the YooKassa API with the shop id and secret key it prints and stops cleanly on SIGTERM', async () => {
    const {
      child,
      ready: printed,
      output,
    } = await startSimulator('yookassa', (text, url) => {
      const credentials = /shop_id=(\S+) secret_key=(\S+)/.exec(text);
      return credentials && text.includes('notifications:')
        ? { url, shopId: credentials[1]!, secretKey: credentials[2]! }
        : undefined;
    });
    expect(printed.url).toMatch(/\/v3$/);
    expect(output()).toContain(`${printed.url.replace(/\/v3$/, '')}/sim/notification-url`);
    const connection = (secretKey: string): AcquirerConnection => ({
      id: 'acqc_cli',
      shopId: 'shop_cli',
      provider: 'yookassa',
      apiUrl: printed.url,
      credentials: { shop_id: printed.shopId, secret_key: secretKey },
      methods: ['card'],
      notificationUrl: 'http://127.0.0.1:9/notifications',
    });
    const deps = { clock: systemClock, logger: pino({ level: 'silent' }) };
    await expect(yookassaProvider.verifyCredentials(connection(printed.secretKey), deps)).resolves.toBeUndefined();
    await expect(yookassaProvider.verifyCredentials(connection('test_wrong'), deps)).rejects.toBeInstanceOf(
      AcquirerCredentialsError,
    );
    child.kill('SIGTERM');
    const [code] = await once(child, 'close');
    stop = undefined;
    expect(code).toBe(0);
    expect(output()).toContain('yookassa simulator stopped');
  });

  it('names the providers it can simulate when given another', async () => {
    const child = spawn(process.execPath, [PAYGATE_BIN, 'acquirer', 'simulate', 'nobank'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stop = () => child.kill('SIGKILL');
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = await once(child, 'close');
    stop = undefined;
    expect(code).not.toBe(0);
    expect(output).toContain('name one provider: tbank, yookassa');
  });
});
