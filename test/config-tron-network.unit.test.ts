// PAYGATE_TRON_NETWORK: mainnet (the default) keeps every earlier behaviour;
// nile sets Nile's USDT contract, TronGrid's Nile node and Nile's explorer,
// each still overridable; another network's contract or public node is refused
// at start with a message naming the variable.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { NILE_CHAIN_PARAMETERS, networkChainParameters } from '../src/crypto/simchain/chain-parameters.ts';
import { networkModeOf } from '../src/crypto/tron/tron-networks.ts';

describe('PAYGATE_TRON_NETWORK', () => {
  it('mainnet by default: mainnet USDT, no default nodes, tronscan.org links', () => {
    const config = loadConfig({});
    expect(config.tronNetwork).toBe('mainnet');
    expect(config.tronUsdtContract).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(config.tronNodeUrls).toEqual([]);
    expect(config.tronExplorerTxUrl).toBe('https://tronscan.org/#/transaction/{tx}');
  });

  it("nile: Nile's TetherToken, TronGrid's Nile node and Nile's explorer", () => {
    const config = loadConfig({ PAYGATE_TRON_NETWORK: 'nile' });
    expect(config.tronNetwork).toBe('nile');
    expect(config.tronUsdtContract).toBe('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf');
    expect(config.tronNodeUrls).toEqual(['https://nile.trongrid.io']);
    expect(config.tronNodes).toEqual([{ url: 'https://nile.trongrid.io', apiKey: undefined }]);
    expect(config.tronExplorerTxUrl).toBe('https://nile.tronscan.org/#/transaction/{tx}');
  });

  it('nile: the node settings and the explorer override the defaults', () => {
    const byUrls = loadConfig({
      PAYGATE_TRON_NETWORK: 'nile',
      PAYGATE_TRON_NODE_URLS: 'http://127.0.0.1:9090',
      PAYGATE_TRON_EXPLORER_TX_URL: 'off',
    });
    expect(byUrls.tronNodeUrls).toEqual(['http://127.0.0.1:9090']);
    expect(byUrls.tronExplorerTxUrl).toBeUndefined();
    const byNodes = loadConfig({
      PAYGATE_TRON_NETWORK: 'nile',
      PAYGATE_TRON_NODES: JSON.stringify([{ url: 'https://api.nileex.io', requests_per_second: 5 }]),
    });
    expect(byNodes.tronNodeUrls).toEqual(['https://api.nileex.io']);
  });

  it('refuses an unknown network, naming the values', () => {
    expect(() => loadConfig({ PAYGATE_TRON_NETWORK: 'shasta' })).toThrow(
      new ConfigError('PAYGATE_TRON_NETWORK', 'must be mainnet or nile, got "shasta"'),
    );
  });

  it("refuses another network's USDT contract", () => {
    expect(() =>
      loadConfig({ PAYGATE_TRON_NETWORK: 'nile', PAYGATE_TRON_USDT_CONTRACT: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }),
    ).toThrow(/PAYGATE_TRON_USDT_CONTRACT is the USDT contract of mainnet, but PAYGATE_TRON_NETWORK is nile/);
    expect(() => loadConfig({ PAYGATE_TRON_USDT_CONTRACT: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' })).toThrow(
      /is the USDT contract of nile, but PAYGATE_TRON_NETWORK is mainnet/,
    );
  });

  it("refuses another network's public node", () => {
    expect(() =>
      loadConfig({ PAYGATE_TRON_NETWORK: 'nile', PAYGATE_TRON_NODE_URLS: 'https://api.trongrid.io' }),
    ).toThrow(
      /PAYGATE_TRON_NODE_URLS entry 1 \(api\.trongrid\.io\) serves another TRON network than PAYGATE_TRON_NETWORK=nile/,
    );
    expect(() =>
      loadConfig({
        PAYGATE_TRON_NODES: JSON.stringify([{ url: 'https://a.example' }, { url: 'https://nile.trongrid.io' }]),
      }),
    ).toThrow(/PAYGATE_TRON_NODES entry 2 \(nile\.trongrid\.io\) serves another TRON network/);
  });
});

describe('network mode and the simulated Nile', () => {
  it('only a live shop on mainnet is mainnet', () => {
    expect(networkModeOf('live', 'mainnet')).toBe('mainnet');
    expect(networkModeOf('live', 'nile')).toBe('testnet');
    expect(networkModeOf('sandbox', 'mainnet')).toBe('testnet');
    expect(networkModeOf('sandbox', 'nile')).toBe('testnet');
  });

  it("the simulated Nile runs Nile's contract and prices; mainnet keeps the defaults", () => {
    expect(networkChainParameters('mainnet')).toEqual({});
    expect(networkChainParameters('nile')).toBe(NILE_CHAIN_PARAMETERS);
    expect(NILE_CHAIN_PARAMETERS).toMatchObject({
      usdtContract: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      energyPriceSun: 100n,
      bandwidthPriceSun: 1_000n,
      usdtEnergyFactor: 0,
    });
  });
});
