// The public TRON networks a live gateway can run on (PAYGATE_TRON_NETWORK) and
// what differs between them for us: the USDT contract, the public nodes, the
// explorer, and whether its money is real. Sources are in docs/tron.md §1.10.

export const TRON_NETWORKS = ['mainnet', 'nile'] as const;
export type TronNetwork = (typeof TRON_NETWORKS)[number];

/** What the API says of a crypto object's chain: `mainnet` only when real USDT moves (docs/api-decisions.md). */
export type NetworkMode = 'mainnet' | 'testnet';

export interface TronNetworkPreset {
  readonly network: TronNetwork;
  /** The TRC20 USDT contract counted on this network, Base58. */
  readonly usdtContract: string;
  /** Full nodes used when neither PAYGATE_TRON_NODE_URLS nor PAYGATE_TRON_NODES is set; none: they must be set. */
  readonly defaultNodeUrls: readonly string[];
  /** Hosts that serve another network: pointing this one at them is refused at start. */
  readonly foreignNodeHosts: readonly string[];
  readonly explorerTxUrl: string;
  readonly networkMode: NetworkMode;
  /** How pages name the network next to a testnet marker. */
  readonly label: string;
}

const MAINNET_TRONGRID_HOST = 'api.trongrid.io';
const NILE_NODE_HOSTS = ['nile.trongrid.io', 'api.nileex.io'];

export const TRON_NETWORK_PRESETS: Readonly<Record<TronNetwork, TronNetworkPreset>> = {
  mainnet: {
    network: 'mainnet',
    usdtContract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    // Mainnet keeps its nodes a deliberate choice of the operator (an API key, a budget).
    defaultNodeUrls: [],
    foreignNodeHosts: NILE_NODE_HOSTS,
    explorerTxUrl: 'https://tronscan.org/#/transaction/{tx}',
    networkMode: 'mainnet',
    label: 'TRON mainnet',
  },
  nile: {
    network: 'nile',
    // "TetherToken" on Nile, the contract of the official API docs' examples (docs/tron.md §1.10).
    usdtContract: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
    // TronGrid's Nile endpoint serves /wallet and /walletsolidity without an API key.
    defaultNodeUrls: ['https://nile.trongrid.io'],
    foreignNodeHosts: [MAINNET_TRONGRID_HOST],
    explorerTxUrl: 'https://nile.tronscan.org/#/transaction/{tx}',
    networkMode: 'testnet',
    label: 'Testnet (Nile)',
  },
};

/** The network mode of a shop's chain: sandbox shops run on the simulated chain, whose money is never real. */
export function networkModeOf(shopMode: 'sandbox' | 'live', network: TronNetwork): NetworkMode {
  return shopMode === 'sandbox' ? 'testnet' : TRON_NETWORK_PRESETS[network].networkMode;
}
