import { describe, expect, it } from 'vitest';
import { loadConfig, withPort } from '../src/config.ts';

describe('configuration', () => {
  it('has working defaults for the embedded setup', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: undefined,
      publicUrl: 'http://localhost:8080',
      rateLimitPerMinute: 120,
      allowHttpWebhooks: true,
      webhookAllowPrivate: false,
    });
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it('a default public URL follows the port chosen at start; a configured one stays as set', () => {
    expect(withPort(loadConfig({}), 9123)).toMatchObject({ port: 9123, publicUrl: 'http://localhost:9123' });
    expect(withPort(loadConfig({ PORT: '7000' }), 9123).publicUrl).toBe('http://localhost:9123');
    const configured = withPort(loadConfig({ PAYGATE_PUBLIC_URL: 'https://pay.example.com' }), 9123);
    expect(configured).toMatchObject({ port: 9123, publicUrl: 'https://pay.example.com' });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/paygate',
      PAYGATE_DATA_DIR: '/var/lib/paygate',
      PAYGATE_PUBLIC_URL: 'https://pay.example.com/',
      REDIS_URL: 'redis://cache:6379',
      PAYGATE_RATE_LIMIT_PER_MINUTE: '1000',
      LOG_LEVEL: 'debug',
      PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
      PAYGATE_DB_POOL_SIZE: '50',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@db:5432/paygate',
      dataDir: '/var/lib/paygate',
      publicUrl: 'https://pay.example.com',
      redisUrl: 'redis://cache:6379',
      rateLimitPerMinute: 1000,
      logLevel: 'debug',
      webhookAllowPrivate: true,
      databasePoolSize: 50,
      // With a real server, plain-http webhooks are off unless asked for.
      allowHttpWebhooks: false,
    });
  });

  it('takes https TRON node URLs, and plain http only for loopback nodes or with PAYGATE_TRON_ALLOW_HTTP=1', () => {
    const urls =
      'https://api.trongrid.io,http://127.0.0.1:8090,http://localhost:8090/jsonrpc,http://[::1]:8090,http://127.8.9.10:1';
    expect(loadConfig({ PAYGATE_TRON_NODE_URLS: urls }).tronNodeUrls).toHaveLength(5);
    for (const remote of [
      'http://api.trongrid.io',
      'http://10.0.0.5:8090',
      'http://[2001:db8::1]:8090',
      'http://localhost.example.com',
      'http://128.0.0.1',
    ]) {
      expect(() => loadConfig({ PAYGATE_TRON_NODE_URLS: `https://api.trongrid.io,${remote}` })).toThrow(
        /PAYGATE_TRON_NODE_URLS.*entry 2 .* must use https: http is for loopback nodes only/,
      );
      expect(loadConfig({ PAYGATE_TRON_NODE_URLS: remote, PAYGATE_TRON_ALLOW_HTTP: '1' }).tronNodeUrls).toEqual([
        remote,
      ]);
    }
    expect(() => loadConfig({ PAYGATE_TRON_NODE_URLS: 'http://10.0.0.5', PAYGATE_TRON_ALLOW_HTTP: '0' })).toThrow(
      /must use https/,
    );
    expect(() => loadConfig({ PAYGATE_TRON_ALLOW_HTTP: 'maybe' })).toThrow(/PAYGATE_TRON_ALLOW_HTTP/);
  });

  it('reads the per-receiver webhook cap: 8 by default, refused outside 1..1000', () => {
    expect(loadConfig({}).webhookOriginConcurrency).toBe(8);
    expect(loadConfig({ PAYGATE_WEBHOOK_ORIGIN_CONCURRENCY: '16' }).webhookOriginConcurrency).toBe(16);
    expect(() => loadConfig({ PAYGATE_WEBHOOK_ORIGIN_CONCURRENCY: '0' })).toThrow(/PAYGATE_WEBHOOK_ORIGIN_CONCURRENCY/);
  });

  it('reads the flow bounds: the hourly outflow cap, the hot-wallet ceiling and the cold address (which needs the ceiling)', () => {
    const unset = loadConfig({});
    expect([unset.tronHourlyOutflowCapMicro, unset.tronHotWalletCeilingMicro, unset.tronColdAddress]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    const set = loadConfig({
      PAYGATE_TRON_HOURLY_OUTFLOW_CAP_USDT: '25000.5',
      PAYGATE_TRON_HOT_WALLET_CEILING_USDT: '10000',
      PAYGATE_TRON_COLD_ADDRESS: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH',
    });
    expect(set).toMatchObject({
      tronHourlyOutflowCapMicro: 25_000_500_000n,
      tronHotWalletCeilingMicro: 10_000_000_000n,
      tronColdAddress: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH',
    });
    expect(() => loadConfig({ PAYGATE_TRON_HOURLY_OUTFLOW_CAP_USDT: '0' })).toThrow(
      /PAYGATE_TRON_HOURLY_OUTFLOW_CAP_USDT must be above 0/,
    );
    expect(() => loadConfig({ PAYGATE_TRON_HOT_WALLET_CEILING_USDT: '1.0000001' })).toThrow(
      /PAYGATE_TRON_HOT_WALLET_CEILING_USDT/,
    );
    expect(() => loadConfig({ PAYGATE_TRON_COLD_ADDRESS: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' })).toThrow(
      /PAYGATE_TRON_COLD_ADDRESS needs PAYGATE_TRON_HOT_WALLET_CEILING_USDT/,
    );
    expect(() => loadConfig({ PAYGATE_TRON_HOT_WALLET_CEILING_USDT: '1', PAYGATE_TRON_COLD_ADDRESS: '0xabc' })).toThrow(
      /PAYGATE_TRON_COLD_ADDRESS must be a TRON Base58 address/,
    );
  });

  it('reads the energy settings: the burn cap in TRX, the energy sources (stake,burn by default), and the rental provider that `rent` needs', () => {
    const unset = loadConfig({});
    expect(unset.tronMaxBurnSun).toBeUndefined();
    expect([...unset.tronEnergySources]).toEqual(['stake', 'burn']);
    expect(unset.tronEnergyRental).toBeUndefined();
    const rental = {
      PAYGATE_TRON_ENERGY_RENTAL_URL: 'https://itrx.io',
      PAYGATE_TRON_ENERGY_RENTAL_API_KEY: 'key',
      PAYGATE_TRON_ENERGY_RENTAL_API_SECRET: 'secret',
    };
    const set = loadConfig({
      PAYGATE_TRON_MAX_BURN_TRX: '14.5',
      PAYGATE_TRON_ENERGY_SOURCES: 'stake, rent,burn',
      ...rental,
    });
    expect(set.tronMaxBurnSun).toBe(14_500_000n);
    expect([...set.tronEnergySources]).toEqual(['stake', 'rent', 'burn']);
    expect(set.tronEnergyRental).toEqual({ url: 'https://itrx.io', apiKey: 'key', apiSecret: 'secret' });
    expect(() => loadConfig({ PAYGATE_TRON_MAX_BURN_TRX: '0' })).toThrow(/PAYGATE_TRON_MAX_BURN_TRX must be above 0/);
    expect(() => loadConfig({ PAYGATE_TRON_ENERGY_SOURCES: 'stake,borrow' })).toThrow(
      /PAYGATE_TRON_ENERGY_SOURCES lists borrow/,
    );
    expect(() => loadConfig({ PAYGATE_TRON_ENERGY_SOURCES: 'rent,burn' })).toThrow(
      /PAYGATE_TRON_ENERGY_SOURCES lists rent: set PAYGATE_TRON_ENERGY_RENTAL_URL/,
    );
  });

  it('reads the edge settings: trusted proxies as a hop count or a list, the failed-authentication limit, the metrics token', () => {
    expect(loadConfig({})).toMatchObject({ trustProxy: false, authFailuresPerMinute: 60, metricsToken: undefined });
    expect(loadConfig({ PAYGATE_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ PAYGATE_TRUST_PROXY: '10.0.0.0/8, 2001:db8::/32,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '2001:db8::/32',
      'loopback',
    ]);
    expect(loadConfig({ PAYGATE_TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ PAYGATE_AUTH_FAILURES_PER_MINUTE: '10' }).authFailuresPerMinute).toBe(10);
    expect(loadConfig({ PAYGATE_METRICS_TOKEN: 'a-long-enough-token' }).metricsToken).toBe('a-long-enough-token');
  });

  it("reads each acquirer's notification sources by provider; a provider not named keeps its published list", () => {
    expect(loadConfig({}).acquirerNotificationSources).toEqual({});
    expect(
      loadConfig({
        PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK: '91.194.226.0/23, 127.0.0.1',
        PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_YOOKASSA: '2a02:5180::/32',
        PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_SANDBOX: '',
      }).acquirerNotificationSources,
    ).toEqual({ tbank: ['91.194.226.0/23', '127.0.0.1'], yookassa: ['2a02:5180::/32'] });
  });

  it.each([
    [{ PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK: '10.0.0.0/33' }, 'got "10.0.0.0/33"'],
    [{ PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK: 'loopback' }, 'got "loopback"'],
    [{ PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK: ' , ' }, 'must be a comma-separated list'],
    [{ 'PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_T-BANK': '10.0.0.1' }, 'must end with a provider name'],
    [
      {
        PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK: Array.from({ length: 101 }, (_, i) => `10.0.${i}.0/24`).join(','),
      },
      'lists 101 networks; at most 100',
    ],
  ])('notification sources %j are refused with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(`PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_`);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be a whole number'],
    [{ PORT: '70000' }, 'PORT must be between 0 and 65535'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must use postgres: or postgresql:'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL must be a URL'],
    [{ PAYGATE_PUBLIC_URL: 'ftp://x' }, 'PAYGATE_PUBLIC_URL must use http: or https:'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL must use redis: or rediss:'],
    [{ PAYGATE_RATE_LIMIT_PER_MINUTE: '0' }, 'PAYGATE_RATE_LIMIT_PER_MINUTE must be between'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ PAYGATE_ALLOW_HTTP_WEBHOOKS: 'maybe' }, 'PAYGATE_ALLOW_HTTP_WEBHOOKS must be 1/true/yes or 0/false/no'],
    [{ PAYGATE_TRUST_PROXY: 'true' }, 'PAYGATE_TRUST_PROXY must be a hop count (1-10) or a comma-separated list'],
    [{ PAYGATE_TRUST_PROXY: '11' }, 'PAYGATE_TRUST_PROXY must be between 1 and 10'],
    [{ PAYGATE_TRUST_PROXY: '10.0.0.0/33' }, 'got "10.0.0.0/33"'],
    [{ PAYGATE_TRUST_PROXY: '10.0.0.1, proxy.internal' }, 'got "proxy.internal"'],
    [{ PAYGATE_AUTH_FAILURES_PER_MINUTE: '0' }, 'PAYGATE_AUTH_FAILURES_PER_MINUTE must be between'],
    [{ PAYGATE_METRICS_TOKEN: 'short' }, 'PAYGATE_METRICS_TOKEN must be 16 to 200 printable characters'],
  ])('%j is refused with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
