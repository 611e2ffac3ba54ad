// Configuration comes from environment variables only, validated once at start.
// A bad value stops the process with a message that names the variable.
import { ENERGY_SOURCES, type EnergySourceSetting } from './crypto/energy/energy-sources.ts';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import type { SessionTimeouts } from './db/database.ts';
import { TRON_NETWORK_PRESETS, TRON_NETWORKS, type TronNetwork } from './crypto/tron/tron-networks.ts';
import { parseMinor } from './money/decimal.ts';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** Where rows past retention are archived before they are removed (docs/operations.md, "Retention and archive"). */
  readonly archiveDir: string;
  /** How long append-only tables keep their rows; undefined: forever. */
  readonly retention: {
    readonly auditMonths: number | undefined;
    readonly webhookDays: number | undefined;
  };
  readonly databasePoolSize: number;
  /** PostgreSQL: statement, lock-wait and idle-in-transaction bounds of every pooled session. */
  readonly databaseTimeouts: SessionTimeouts;
  readonly publicUrl: string;
  /** PAYGATE_PUBLIC_URL was set; otherwise publicUrl is http://localhost:<port> and follows `serve --port`. */
  readonly publicUrlConfigured: boolean;
  readonly redisUrl: string | undefined;
  /** Development start (PAYGATE_DEMO=1, `serve --demo`, `npm start`): an empty database gets a demo sandbox merchant. */
  readonly demo: boolean;
  /** How long one Redis command may take before it fails (and the rate limiter lets the request through). */
  readonly redisCommandTimeoutMs: number;
  readonly rateLimitPerMinute: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly allowHttpWebhooks: boolean;
  readonly webhookAllowPrivate: boolean;
  readonly webhookConcurrency: number;
  /** Attempts in flight at most per receiver origin (scheme, host, port), so one slow receiver cannot take every slot. */
  readonly webhookOriginConcurrency: number;
  /** GET /v1/webhooks/stream: a comment line this often keeps idle streams and the proxies between open. */
  readonly eventStreamHeartbeatMs: number;
  /** Event streams open at once per shop, per API process. */
  readonly eventStreamsPerShop: number;
  /** Fastify's trustProxy: false, a hop count, or the proxies' addresses and CIDR ranges. */
  readonly trustProxy: false | number | readonly string[];
  /**
   * Where each production acquirer's notifications may come from, in CIDR form, by provider name
   * (PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_<PROVIDER>); a provider not named keeps its published list.
   */
  readonly acquirerNotificationSources: Readonly<Record<string, readonly string[]>>;
  readonly authFailuresPerMinute: number;
  /** Calls of the crypto test helpers per sandbox shop per minute (PAYGATE_SANDBOX_HELPER_CALLS_PER_MINUTE). */
  readonly sandboxHelperCallsPerMinute: number;
  /** When set, GET /metrics needs "Authorization: Bearer <token>". */
  readonly metricsToken: string | undefined;
  /** SIGTERM: how long in-flight requests and webhook deliveries may take before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  /** The workers a process with workers runs (PAYGATE_WORKERS); unset: every one (docs/scaling.md "Workers in processes of their own"). */
  readonly workers: WorkerSelection | undefined;
  /** The cabinet: a session ends after this long without a request, or this long after sign-in; a step-up holds this long. */
  readonly cabinetSessionIdleMs: number;
  readonly cabinetSessionAbsoluteMs: number;
  readonly cabinetStepUpMs: number;
  /** A cabinet withdrawal address becomes usable this long after it was added (the account-takeover cool-down). */
  readonly withdrawalAddressCooldownMs: number;
  /** smtp:// or smtps:// URL the cabinet sends invitations and password resets through; unset, links are shown to pass on. */
  readonly smtpUrl: string | undefined;
  /** The From address of the cabinet's mail. */
  readonly mailFrom: string;
  /** The cabinet links a live transaction to `{tx}` in this URL (PAYGATE_TRON_EXPLORER_TX_URL); sandbox ones have no link. */
  readonly tronExplorerTxUrl: string | undefined;
  /** Envelope encryption's root key (base64), or the file holding it; with neither, the embedded default generates `<dataDir>/root-key`. */
  readonly rootKey: string | undefined;
  readonly rootKeyFile: string | undefined;
  /** Root keys replaced by a rotation, kept to open what they wrapped until `paygate kms rotate` has re-wrapped it. */
  readonly previousRootKeys: readonly string[];
  /** Live crypto: the public TRON network (PAYGATE_TRON_NETWORK): its USDT contract, default nodes and explorer (docs/crypto.md "Nile testnet"). */
  readonly tronNetwork: TronNetwork;
  /** Live crypto: the file holding the account xpub that live deposit addresses derive from (docs/crypto.md). */
  readonly tronXpubFile: string | undefined;
  /** Live crypto: TRON full-node URLs, in order of preference. */
  readonly tronNodeUrls: readonly string[];
  /** Sent as TRON-PRO-API-KEY to the one URL of PAYGATE_TRON_NODE_URLS (TronGrid); refused with several. */
  readonly tronApiKey: string | undefined;
  /** Live crypto: the nodes in order of preference, each with its own API key and request budget (PAYGATE_TRON_NODES, or the two settings above). */
  readonly tronNodes: readonly TronNodeSetting[];
  /** The TRC20 USDT contract whose transfers count on the live chain (mainnet's by default). */
  readonly tronUsdtContract: string;
  /** Sandbox: the simulated chain every role drives instead of one a worker serves (docs/crypto.md). */
  readonly sandboxChainUrl: string | undefined;
  /** Sandbox: blocks below the solidified one whose transactions the served simulated chain keeps. */
  readonly sandboxChainRetainBlocks: number;
  /** Crypto receiving: ready deposit addresses kept per key, derived ahead by the worker (PAYGATE_ADDRESS_POOL_SIZE; 0: none). */
  readonly addressPoolSize: number;
  /** Sweeping: an address's final USDT not yet swept moves to the hot wallet once it reaches this (micro-USDT; docs/sweeping.md). */
  readonly sweepThresholdMicro: bigint;
  /** Sending: micro-USDT per TRX at which chain costs are booked (PAYGATE_TRX_USDT_RATE, "0.30" by default; docs/payouts.md). */
  readonly trxUsdtRateMicro: bigint;
  /** Sending: the signing key file (mnemonic or xprv, mode 0600) of live sending; unset: live sending refuses to start. */
  readonly tronSignerKeyFile: string | undefined;
  /** Sending: most outgoing transfers signed and not yet final per chain (PAYGATE_OUTGOING_MAX_IN_FLIGHT). */
  readonly outgoingMaxInFlight: number;
  /** Sending: signed attempts per transfer before it fails `expired` (PAYGATE_OUTGOING_MAX_ATTEMPTS). */
  readonly outgoingMaxAttempts: number;
  /** Sending: how long a transfer waits for hot-wallet funds before it fails (PAYGATE_OUTGOING_FUNDS_WAIT_SECONDS). */
  readonly outgoingFundsWaitSeconds: number;
  /** Sending: the most energy one USDT transfer may take; above it nothing is quoted or signed (PAYGATE_TRON_TRANSFER_ENERGY_MAX; docs/payouts.md). */
  readonly tronTransferEnergyMax: bigint;
  /** Custody: a shortfall of USDT on chain beyond this pauses the book's signing (PAYGATE_CUSTODY_TOLERANCE_USDT; docs/custody.md). */
  readonly custodyToleranceMicro: bigint;
  /** Custody: seconds between reconciliation runs of the worker (PAYGATE_CUSTODY_RECONCILE_INTERVAL_SECONDS). */
  readonly custodyReconcileIntervalSeconds: number;
  /** Sending: most micro-USDT signed out of custody per book in any rolling hour (PAYGATE_TRON_HOURLY_OUTFLOW_CAP_USDT); unset: no cap. */
  readonly tronHourlyOutflowCapMicro: bigint | undefined;
  /** Sending: the most TRX (sun) one transfer may burn; above it the transfer waits unsigned and the operator is told (PAYGATE_TRON_MAX_BURN_TRX); unset: no cap. */
  readonly tronMaxBurnSun: bigint | undefined;
  /** Sending: where a USDT transfer's energy may come from (PAYGATE_TRON_ENERGY_SOURCES, "stake,burn" by default; docs/payouts.md "Energy"). */
  readonly tronEnergySources: ReadonlySet<EnergySourceSetting>;
  /** Sending: the energy rental provider (itrx.io's API) of the live chain, used when `rent` is a source (PAYGATE_TRON_ENERGY_RENTAL_*). */
  readonly tronEnergyRental: { readonly url: string; readonly apiKey: string; readonly apiSecret: string } | undefined;
  /** Custody: micro-USDT the live hot wallet keeps; above it the surplus is reported (PAYGATE_TRON_HOT_WALLET_CEILING_USDT); unset: none. */
  readonly tronHotWalletCeilingMicro: bigint | undefined;
  /** Custody: the operator's cold address the surplus above the ceiling is moved to (PAYGATE_TRON_COLD_ADDRESS); unset: reported only. */
  readonly tronColdAddress: string | undefined;
}

/** One TRON node URL and what belongs to it alone. */
interface TronNodeSetting {
  readonly url: string;
  /** Sent as TRON-PRO-API-KEY to this URL only. */
  readonly apiKey?: string | undefined;
  /** Requests per second this URL is sent at most; unset: no budget. */
  readonly requestsPerSecond?: number | undefined;
  /** Requests that may go at once after a quiet spell (default: requestsPerSecond rounded up). */
  readonly burst?: number | undefined;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A retention period: a whole number of units, or `0`/`off` to keep rows forever. */
function readRetention(env: Env, name: string, fallback: number, max: number): number | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === 'off') return undefined;
  const value = readInteger(env, name, fallback, 0, max);
  return value === 0 ? undefined : value;
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be 1/true/yes or 0/false/no, got "${raw}"`);
}

function readUrl(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw;
}

// proxy-addr's names for the loopback, link-local and private ranges.
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isAddressOrRange(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

// Trusting every forwarder ("true") would let any client choose its own address, so it is refused.
function readTrustProxy(env: Env): Config['trustProxy'] {
  const name = 'PAYGATE_TRUST_PROXY';
  const raw = (env[name] ?? '').trim();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (/^\d+$/.test(raw)) return readInteger(env, name, 0, 1, 10);
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = entries.find((entry) => !isAddressOrRange(entry));
  if (bad !== undefined || entries.length === 0) {
    throw new ConfigError(
      name,
      `must be a hop count (1-10) or a comma-separated list of proxy addresses or CIDR ranges, got "${bad ?? raw}"`,
    );
  }
  return entries;
}

const NOTIFICATION_SOURCES_PREFIX = 'PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_';
const NOTIFICATION_SOURCES_MAX = 100;

function isNetwork(entry: string): boolean {
  return !PROXY_RANGE_NAMES.includes(entry) && isAddressOrRange(entry);
}

/**
 * PAYGATE_ACQUIRER_NOTIFICATION_SOURCES_TBANK=91.194.226.0/23,127.0.0.1/32 and so on: the list replaces
 * the provider's published networks (behind a proxy, the addresses PAYGATE_TRUST_PROXY resolves to).
 */
function readNotificationSources(env: Env): Config['acquirerNotificationSources'] {
  const sources: Record<string, readonly string[]> = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(NOTIFICATION_SOURCES_PREFIX) || raw === undefined || raw.trim() === '') continue;
    const provider = name.slice(NOTIFICATION_SOURCES_PREFIX.length);
    if (!/^[A-Z0-9_]{1,40}$/.test(provider)) throw new ConfigError(name, 'must end with a provider name, e.g. _TBANK');
    const entries = raw
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    const bad = entries.find((entry) => !isNetwork(entry));
    if (bad !== undefined || entries.length === 0)
      throw new ConfigError(name, `must be a comma-separated list of addresses or CIDR ranges, got "${bad ?? raw}"`);
    if (entries.length > NOTIFICATION_SOURCES_MAX)
      throw new ConfigError(name, `lists ${entries.length} networks; at most ${NOTIFICATION_SOURCES_MAX}`);
    sources[provider.toLowerCase()] = entries;
  }
  return sources;
}

function readMetricsToken(env: Env): string | undefined {
  const raw = env.PAYGATE_METRICS_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,200}$/.test(raw))
    throw new ConfigError('PAYGATE_METRICS_TOKEN', 'must be 16 to 200 printable characters without spaces');
  return raw;
}

const ROOT_KEY_PATTERN = /^[A-Za-z0-9+/]{43}=$/;

function readRootKeys(env: Env): Pick<Config, 'rootKey' | 'rootKeyFile' | 'previousRootKeys'> {
  const rootKey = env.PAYGATE_ROOT_KEY?.trim() || undefined;
  const rootKeyFile = env.PAYGATE_ROOT_KEY_FILE?.trim() || undefined;
  if (rootKey !== undefined && rootKeyFile !== undefined)
    throw new ConfigError('PAYGATE_ROOT_KEY', 'and PAYGATE_ROOT_KEY_FILE are both set; set one');
  if (rootKey !== undefined && !ROOT_KEY_PATTERN.test(rootKey)) {
    throw new ConfigError(
      'PAYGATE_ROOT_KEY',
      'must be 32 random bytes in base64 (44 characters; `paygate kms generate-key` prints one)',
    );
  }
  const previousRootKeys = (env.PAYGATE_ROOT_KEYS_PREVIOUS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = previousRootKeys.findIndex((entry) => !ROOT_KEY_PATTERN.test(entry));
  if (bad >= 0)
    throw new ConfigError(
      'PAYGATE_ROOT_KEYS_PREVIOUS',
      `entry ${bad + 1} must be 32 random bytes in base64 (44 characters)`,
    );
  return { rootKey, rootKeyFile: rootKeyFile === undefined ? undefined : resolve(rootKeyFile), previousRootKeys };
}

// Another public network's USDT on this one would count tokens that are worth nothing (or treat real ones as test money).
function checkContractOfNetwork(contract: string, network: TronNetwork): void {
  const owner = Object.values(TRON_NETWORK_PRESETS).find((preset) => preset.usdtContract === contract);
  if (owner !== undefined && owner.network !== network)
    throw new ConfigError(
      'PAYGATE_TRON_USDT_CONTRACT',
      `is the USDT contract of ${owner.network}, but PAYGATE_TRON_NETWORK is ${network}; unset it to use ${network}'s`,
    );
}

/** A node URL of another public network (TronGrid's mainnet endpoint on Nile, or Nile's on mainnet) is refused. */
function checkNodeOfNetwork(url: string, network: TronNetwork, variable: string, where: string): void {
  const host = new URL(url).hostname.toLowerCase();
  if (TRON_NETWORK_PRESETS[network].foreignNodeHosts.includes(host))
    throw new ConfigError(
      variable,
      `${where} (${host}) serves another TRON network than PAYGATE_TRON_NETWORK=${network}`,
    );
}

function readTronNetwork(env: Env): TronNetwork {
  const raw = env.PAYGATE_TRON_NETWORK?.trim() || 'mainnet';
  const network = TRON_NETWORKS.find((name) => name === raw);
  if (network === undefined)
    throw new ConfigError('PAYGATE_TRON_NETWORK', `must be ${TRON_NETWORKS.join(' or ')}, got "${raw.slice(0, 40)}"`);
  return network;
}

/** An https URL template holding `{tx}`; `off` (or empty) for no links. The network's explorer by default. */
function readExplorerTxUrl(env: Env, network: TronNetwork): string | undefined {
  const value = env.PAYGATE_TRON_EXPLORER_TX_URL?.trim() ?? TRON_NETWORK_PRESETS[network].explorerTxUrl;
  if (value === '' || value === 'off') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value.replace('{tx}', 'tx'));
  } catch {
    throw new ConfigError('PAYGATE_TRON_EXPLORER_TX_URL', 'is not a URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new ConfigError('PAYGATE_TRON_EXPLORER_TX_URL', 'must use https or http');
  if (!value.includes('{tx}'))
    throw new ConfigError('PAYGATE_TRON_EXPLORER_TX_URL', 'must hold {tx} where the hash goes');
  return value;
}

function readTronSettings(
  env: Env,
  network: TronNetwork,
): Pick<Config, 'tronXpubFile' | 'tronNodeUrls' | 'tronApiKey' | 'tronUsdtContract'> {
  const xpubFile = env.PAYGATE_TRON_XPUB_FILE?.trim() || undefined;
  const urls = (env.PAYGATE_TRON_NODE_URLS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (urls.length > 10) throw new ConfigError('PAYGATE_TRON_NODE_URLS', `lists ${urls.length} URLs; at most 10`);
  const allowHttp = readBoolean(env, 'PAYGATE_TRON_ALLOW_HTTP', false);
  for (const [index, url] of urls.entries()) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError('PAYGATE_TRON_NODE_URLS', `entry ${index + 1} is not a URL`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
      throw new ConfigError('PAYGATE_TRON_NODE_URLS', `entry ${index + 1} must use https or http`);
    // Anyone on a plain-http path could rewrite what the node says about deposits and payouts.
    if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname) && !allowHttp) {
      throw new ConfigError(
        'PAYGATE_TRON_NODE_URLS',
        `entry ${index + 1} (${parsed.host}) must use https: http is for loopback nodes only, unless PAYGATE_TRON_ALLOW_HTTP=1`,
      );
    }
  }
  const contract = env.PAYGATE_TRON_USDT_CONTRACT?.trim() || TRON_NETWORK_PRESETS[network].usdtContract;
  if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(contract))
    throw new ConfigError(
      'PAYGATE_TRON_USDT_CONTRACT',
      'must be a TRON Base58 address (34 characters starting with T)',
    );
  checkContractOfNetwork(contract, network);
  return {
    tronXpubFile: xpubFile === undefined ? undefined : resolve(xpubFile),
    tronNodeUrls: urls,
    tronApiKey: env.PAYGATE_TRON_API_KEY?.trim() || undefined,
    tronUsdtContract: contract,
  };
}

const TRON_NODES = 'PAYGATE_TRON_NODES';
const TRON_NODE_KEYS = ['url', 'api_key', 'requests_per_second', 'burst'];
const MAX_TRON_NODES = 10;
const MAX_NODE_REQUESTS_PER_SECOND = 100_000;

/**
 * The node list: PAYGATE_TRON_NODES (a JSON array of {url, api_key?,
 * requests_per_second?, burst?}), or PAYGATE_TRON_NODE_URLS with
 * PAYGATE_TRON_API_KEY, which may then name one URL only: a key sent to every
 * URL reaches providers it does not belong to.
 */
function readTronNodeSettings(
  env: Env,
): Pick<Config, 'tronNetwork' | 'tronXpubFile' | 'tronNodeUrls' | 'tronApiKey' | 'tronUsdtContract' | 'tronNodes'> {
  const network = readTronNetwork(env);
  const nodes = readTronNodeList(env, network);
  for (const [index, node] of nodes.tronNodes.entries())
    checkNodeOfNetwork(
      node.url,
      network,
      env[TRON_NODES]?.trim() ? TRON_NODES : 'PAYGATE_TRON_NODE_URLS',
      `entry ${index + 1}`,
    );
  return { tronNetwork: network, ...nodes };
}

function readTronNodeList(
  env: Env,
  network: TronNetwork,
): Pick<Config, 'tronXpubFile' | 'tronNodeUrls' | 'tronApiKey' | 'tronUsdtContract' | 'tronNodes'> {
  const configured = readTronSettings(env, network);
  const json = env[TRON_NODES]?.trim();
  // A network with public nodes (Nile) uses them unless nodes are configured.
  const settings =
    json || configured.tronNodeUrls.length > 0
      ? configured
      : { ...configured, tronNodeUrls: TRON_NETWORK_PRESETS[network].defaultNodeUrls };
  if (!json) {
    if (settings.tronApiKey !== undefined && settings.tronNodeUrls.length > 1) {
      throw new ConfigError(
        'PAYGATE_TRON_API_KEY',
        `would be sent to all ${settings.tronNodeUrls.length} URLs of PAYGATE_TRON_NODE_URLS; give the key to the URL it belongs to in ${TRON_NODES} instead`,
      );
    }
    return {
      ...settings,
      tronNodes: settings.tronNodeUrls.map((url, index) => ({
        url,
        apiKey: index === 0 ? settings.tronApiKey : undefined,
      })),
    };
  }
  if (configured.tronNodeUrls.length > 0 || configured.tronApiKey !== undefined) {
    throw new ConfigError(
      TRON_NODES,
      'is set together with PAYGATE_TRON_NODE_URLS or PAYGATE_TRON_API_KEY; set one or the other',
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new ConfigError(
      TRON_NODES,
      'must be a JSON array of {"url", "api_key", "requests_per_second", "burst"} objects',
    );
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > MAX_TRON_NODES) {
    throw new ConfigError(TRON_NODES, `must be a JSON array of 1 to ${MAX_TRON_NODES} node objects`);
  }
  const allowHttp = readBoolean(env, 'PAYGATE_TRON_ALLOW_HTTP', false);
  const nodes = parsed.map((entry: unknown, index) => readTronNode(entry, `entry ${index + 1}`, allowHttp));
  const repeated = nodes.find((node, index) => nodes.findIndex((other) => other.url === node.url) !== index);
  if (repeated) throw new ConfigError(TRON_NODES, `lists ${new URL(repeated.url).origin} twice`);
  return { ...settings, tronNodeUrls: nodes.map((node) => node.url), tronNodes: nodes };
}

function readTronNode(entry: unknown, where: string, allowHttp: boolean): TronNodeSetting {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
    throw new ConfigError(TRON_NODES, `${where} must be an object`);
  const fields = entry as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !TRON_NODE_KEYS.includes(key));
  if (unknown !== undefined)
    throw new ConfigError(
      TRON_NODES,
      `${where} has the unknown field "${unknown.slice(0, 40)}"; the fields are ${TRON_NODE_KEYS.join(', ')}`,
    );
  const { url, api_key: apiKey, requests_per_second: requestsPerSecond, burst } = fields;
  if (typeof url !== 'string' || url.length > 2_000)
    throw new ConfigError(TRON_NODES, `${where} needs "url", the node's base URL`);
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new ConfigError(TRON_NODES, `${where}: "url" is not a URL`);
  }
  if (parsedUrl.protocol !== 'https:' && parsedUrl.protocol !== 'http:')
    throw new ConfigError(TRON_NODES, `${where}: "url" must use https or http`);
  if (parsedUrl.protocol === 'http:' && !isLoopbackHost(parsedUrl.hostname) && !allowHttp) {
    throw new ConfigError(
      TRON_NODES,
      `${where} (${parsedUrl.host}) must use https: http is for loopback nodes only, unless PAYGATE_TRON_ALLOW_HTTP=1`,
    );
  }
  if (parsedUrl.username || parsedUrl.password || parsedUrl.search || parsedUrl.hash) {
    throw new ConfigError(
      TRON_NODES,
      `${where}: "url" must not carry credentials, a query or a fragment (the key goes in "api_key")`,
    );
  }
  // Never echo the key or a path prefix (it may hold a token): the origin names the entry.
  const named = `${where} (${parsedUrl.origin})`;
  if (apiKey !== undefined && (typeof apiKey !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(apiKey))) {
    throw new ConfigError(TRON_NODES, `${named}: "api_key" must be 1 to 200 printable characters without spaces`);
  }
  if (
    requestsPerSecond !== undefined &&
    (typeof requestsPerSecond !== 'number' ||
      !(requestsPerSecond >= 0.1 && requestsPerSecond <= MAX_NODE_REQUESTS_PER_SECOND))
  ) {
    throw new ConfigError(
      TRON_NODES,
      `${named}: "requests_per_second" must be a number from 0.1 to ${MAX_NODE_REQUESTS_PER_SECOND}`,
    );
  }
  if (burst !== undefined) {
    if (requestsPerSecond === undefined)
      throw new ConfigError(TRON_NODES, `${named}: "burst" needs "requests_per_second"`);
    if (
      typeof burst !== 'number' ||
      !Number.isSafeInteger(burst) ||
      burst < 1 ||
      burst > MAX_NODE_REQUESTS_PER_SECOND
    ) {
      throw new ConfigError(
        TRON_NODES,
        `${named}: "burst" must be a whole number from 1 to ${MAX_NODE_REQUESTS_PER_SECOND}`,
      );
    }
  }
  return {
    url,
    apiKey: typeof apiKey === 'string' ? apiKey : undefined,
    requestsPerSecond: typeof requestsPerSecond === 'number' ? requestsPerSecond : undefined,
    burst: typeof burst === 'number' ? burst : undefined,
  };
}

/** localhost, 127.0.0.0/8 or ::1 (URL hostnames keep IPv6 in brackets). */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** PAYGATE_SWEEP_THRESHOLD_USDT: a decimal string of USDT, 50 by default (docs/sweeping.md). */
function readSweepThreshold(env: Env): bigint {
  const name = 'PAYGATE_SWEEP_THRESHOLD_USDT';
  const raw = env[name]?.trim() || '50';
  const parsed = parseMinor(raw, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new ConfigError(name, `${parsed.problem}, got "${raw}"`);
  const micro = parsed.minor;
  if (micro <= 0n) throw new ConfigError(name, 'must be above 0');
  return micro;
}

/** PAYGATE_TRX_USDT_RATE: USDT per TRX as a decimal string (at most 6 places), "0.30" by default. */
function readTrxUsdtRate(env: Env): bigint {
  const name = 'PAYGATE_TRX_USDT_RATE';
  const raw = env[name]?.trim() || '0.30';
  const parsed = parseMinor(raw, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new ConfigError(name, `${parsed.problem}, got "${raw}"`);
  if (parsed.minor <= 0n) throw new ConfigError(name, 'must be above 0');
  return parsed.minor;
}

/** PAYGATE_CUSTODY_TOLERANCE_USDT: a decimal string of USDT, "0.01" by default, at most 1,000,000. */
function readCustodyTolerance(env: Env): bigint {
  const name = 'PAYGATE_CUSTODY_TOLERANCE_USDT';
  const raw = env[name]?.trim() || '0.01';
  const parsed = parseMinor(raw, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new ConfigError(name, `${parsed.problem}, got "${raw}"`);
  if (parsed.minor < 0n || parsed.minor > 1_000_000_000_000n) throw new ConfigError(name, 'must be from 0 to 1000000');
  return parsed.minor;
}

/** An optional USDT amount above 0 as a decimal string (at most 6 places). */
function readOptionalUsdt(env: Env, name: string): bigint | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const parsed = parseMinor(raw, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new ConfigError(name, `${parsed.problem}, got "${raw}"`);
  if (parsed.minor <= 0n) throw new ConfigError(name, 'must be above 0');
  return parsed.minor;
}

/**
 * PAYGATE_TRON_MAX_BURN_TRX (a decimal string of TRX, unset: no cap), PAYGATE_TRON_ENERGY_SOURCES (a
 * comma list of stake, delegate, rent, burn) and the rental provider's URL, key and secret, all three
 * required with `rent` (docs/payouts.md "Energy").
 */
function readEnergySettings(env: Env): Pick<Config, 'tronMaxBurnSun' | 'tronEnergySources' | 'tronEnergyRental'> {
  // TRX has 6 decimals, as USDT: a TRX amount parses to sun as USDT parses to micro-USDT.
  const maxBurnSun = readOptionalUsdt(env, 'PAYGATE_TRON_MAX_BURN_TRX');
  const name = 'PAYGATE_TRON_ENERGY_SOURCES';
  const listed = (env[name]?.trim() || 'stake,burn').split(',').map((entry) => entry.trim());
  const unknown = listed.filter((entry) => !(ENERGY_SOURCES as readonly string[]).includes(entry));
  if (unknown.length > 0)
    throw new ConfigError(name, `lists ${unknown.join(', ')}: each must be one of ${ENERGY_SOURCES.join(', ')}`);
  const sources = new Set(listed as EnergySourceSetting[]);
  const url = readUrl(env, 'PAYGATE_TRON_ENERGY_RENTAL_URL', ['https:', 'http:']);
  const apiKey = env.PAYGATE_TRON_ENERGY_RENTAL_API_KEY?.trim() || undefined;
  const apiSecret = env.PAYGATE_TRON_ENERGY_RENTAL_API_SECRET?.trim() || undefined;
  const rental = url && apiKey && apiSecret ? { url, apiKey, apiSecret } : undefined;
  if (sources.has('rent') && !rental)
    throw new ConfigError(
      name,
      'lists rent: set PAYGATE_TRON_ENERGY_RENTAL_URL, PAYGATE_TRON_ENERGY_RENTAL_API_KEY and PAYGATE_TRON_ENERGY_RENTAL_API_SECRET',
    );
  return { tronMaxBurnSun: maxBurnSun, tronEnergySources: sources, tronEnergyRental: rental };
}

/** Some of the workers by name: only those listed, or every one except those listed. */
export interface WorkerSelection {
  readonly except: boolean;
  readonly names: readonly string[];
}

/** Whether a process with workers runs the worker `name` under `selection` (none: every worker). */
export function selectsWorker(selection: WorkerSelection | undefined, name: string): boolean {
  return selection === undefined || selection.names.includes(name) !== selection.except;
}

/**
 * PAYGATE_WORKERS: worker names (`webhook-delivery,payment-expiry`: those alone) or names each
 * after a minus (`-webhook-delivery`: every worker but those), not both. The names are checked
 * against the workers themselves when a process makes them (modules.ts createWorkers).
 */
function readWorkerSelection(env: Env): WorkerSelection | undefined {
  const name = 'PAYGATE_WORKERS';
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const entries = raw.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => !/^-?[a-z][a-z0-9-]*$/.test(entry)))
    throw new ConfigError(
      name,
      `must be a comma list of worker names (webhook-delivery), or of names each after a minus for every worker but those (-webhook-delivery), got "${raw}"`,
    );
  const except = entries.filter((entry) => entry.startsWith('-'));
  if (except.length > 0 && except.length < entries.length)
    throw new ConfigError(
      name,
      `mixes names with names after a minus ("${raw}"): list the workers to run, or those not to`,
    );
  return { except: except.length > 0, names: [...new Set(entries.map((entry) => entry.replace(/^-/, '')))] };
}

function readColdStorage(env: Env): Pick<Config, 'tronHotWalletCeilingMicro' | 'tronColdAddress'> {
  const ceiling = readOptionalUsdt(env, 'PAYGATE_TRON_HOT_WALLET_CEILING_USDT');
  const cold = env.PAYGATE_TRON_COLD_ADDRESS?.trim() || undefined;
  if (cold !== undefined && !/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(cold))
    throw new ConfigError('PAYGATE_TRON_COLD_ADDRESS', 'must be a TRON Base58 address (34 characters starting with T)');
  if (cold !== undefined && ceiling === undefined)
    throw new ConfigError(
      'PAYGATE_TRON_COLD_ADDRESS',
      'needs PAYGATE_TRON_HOT_WALLET_CEILING_USDT: only the surplus above the ceiling is moved there',
    );
  return { tronHotWalletCeilingMicro: ceiling, tronColdAddress: cold };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function defaultPublicUrl(port: number): string {
  return `http://localhost:${port}`;
}

/** The configuration listening on another port (`serve --port`); a default public URL follows the port. */
export function withPort(config: Config, port: number): Config {
  return { ...config, port, publicUrl: config.publicUrlConfigured ? config.publicUrl : defaultPublicUrl(port) };
}

export function loadConfig(env: Env = process.env): Config {
  const port = readInteger(env, 'PORT', 8080, 0, 65_535);
  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const logLevel = (env.LOG_LEVEL ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const configuredPublicUrl = readUrl(env, 'PAYGATE_PUBLIC_URL', ['http:', 'https:']);
  const publicUrl = configuredPublicUrl ?? defaultPublicUrl(port);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    dataDir: resolve(env.PAYGATE_DATA_DIR || './data'),
    archiveDir: resolve(env.PAYGATE_ARCHIVE_DIR || join(env.PAYGATE_DATA_DIR || './data', 'archive')),
    retention: {
      auditMonths: readRetention(env, 'PAYGATE_RETENTION_AUDIT_MONTHS', 12, 1_200),
      webhookDays: readRetention(env, 'PAYGATE_RETENTION_WEBHOOK_DAYS', 90, 36_500),
    },
    databasePoolSize: readInteger(env, 'PAYGATE_DB_POOL_SIZE', 20, 1, 1_000),
    databaseTimeouts: {
      statementMs: readInteger(env, 'PAYGATE_DB_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
      lockMs: readInteger(env, 'PAYGATE_DB_LOCK_TIMEOUT_MS', 10_000, 0, 3_600_000),
      idleInTransactionMs: readInteger(env, 'PAYGATE_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000, 0, 3_600_000),
    },
    publicUrl: publicUrl.replace(/\/+$/, ''),
    publicUrlConfigured: configuredPublicUrl !== undefined,
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisCommandTimeoutMs: readInteger(env, 'PAYGATE_REDIS_TIMEOUT_MS', 200, 10, 60_000),
    demo: readBoolean(env, 'PAYGATE_DEMO', false),
    rateLimitPerMinute: readInteger(env, 'PAYGATE_RATE_LIMIT_PER_MINUTE', 120, 1, 10_000_000),
    logLevel,
    // The embedded default is a local sandbox, so plain-http receivers are allowed there.
    allowHttpWebhooks: readBoolean(env, 'PAYGATE_ALLOW_HTTP_WEBHOOKS', databaseUrl === undefined),
    webhookAllowPrivate: readBoolean(env, 'PAYGATE_WEBHOOK_ALLOW_PRIVATE', false),
    webhookConcurrency: readInteger(env, 'PAYGATE_WEBHOOK_CONCURRENCY', 32, 1, 1_000),
    webhookOriginConcurrency: readInteger(env, 'PAYGATE_WEBHOOK_ORIGIN_CONCURRENCY', 8, 1, 1_000),
    eventStreamHeartbeatMs: readInteger(env, 'PAYGATE_EVENT_STREAM_HEARTBEAT_MS', 15_000, 10, 300_000),
    eventStreamsPerShop: readInteger(env, 'PAYGATE_EVENT_STREAMS_PER_SHOP', 5, 1, 1_000),
    trustProxy: readTrustProxy(env),
    acquirerNotificationSources: readNotificationSources(env),
    authFailuresPerMinute: readInteger(env, 'PAYGATE_AUTH_FAILURES_PER_MINUTE', 60, 1, 1_000_000),
    sandboxHelperCallsPerMinute: readInteger(env, 'PAYGATE_SANDBOX_HELPER_CALLS_PER_MINUTE', 120, 1, 1_000_000),
    metricsToken: readMetricsToken(env),
    shutdownTimeoutMs: readInteger(env, 'PAYGATE_SHUTDOWN_TIMEOUT_MS', 25_000, 1_000, 600_000),
    workers: readWorkerSelection(env),
    cabinetSessionIdleMs: readInteger(env, 'PAYGATE_CABINET_SESSION_IDLE_MINUTES', 30, 1, 24 * 60) * 60_000,
    cabinetSessionAbsoluteMs: readInteger(env, 'PAYGATE_CABINET_SESSION_MAX_HOURS', 12, 1, 24 * 30) * 3_600_000,
    cabinetStepUpMs: readInteger(env, 'PAYGATE_CABINET_STEP_UP_MINUTES', 10, 1, 60) * 60_000,
    withdrawalAddressCooldownMs:
      readInteger(env, 'PAYGATE_WITHDRAWAL_ADDRESS_COOLDOWN_HOURS', 24, 0, 24 * 30) * 3_600_000,
    smtpUrl: readUrl(env, 'PAYGATE_SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom: env.PAYGATE_MAIL_FROM?.trim() || 'Paygate <paygate@localhost>',
    tronExplorerTxUrl: readExplorerTxUrl(env, readTronNetwork(env)),
    ...readRootKeys(env),
    ...readTronNodeSettings(env),
    sandboxChainUrl: readUrl(env, 'PAYGATE_SANDBOX_CHAIN_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    sandboxChainRetainBlocks: readInteger(env, 'PAYGATE_SANDBOX_CHAIN_RETAIN_BLOCKS', 86_400, 100, 10_000_000),
    addressPoolSize: readInteger(env, 'PAYGATE_ADDRESS_POOL_SIZE', 1_000, 0, 10_000_000),
    sweepThresholdMicro: readSweepThreshold(env),
    trxUsdtRateMicro: readTrxUsdtRate(env),
    tronSignerKeyFile: env.PAYGATE_TRON_SIGNER_KEY_FILE?.trim()
      ? resolve(env.PAYGATE_TRON_SIGNER_KEY_FILE.trim())
      : undefined,
    outgoingMaxInFlight: readInteger(env, 'PAYGATE_OUTGOING_MAX_IN_FLIGHT', 5_000, 1, 100_000),
    outgoingMaxAttempts: readInteger(env, 'PAYGATE_OUTGOING_MAX_ATTEMPTS', 5, 1, 100),
    outgoingFundsWaitSeconds: readInteger(env, 'PAYGATE_OUTGOING_FUNDS_WAIT_SECONDS', 3_600, 0, 604_800),
    tronTransferEnergyMax: BigInt(readInteger(env, 'PAYGATE_TRON_TRANSFER_ENERGY_MAX', 200_000, 30_000, 10_000_000)),
    custodyToleranceMicro: readCustodyTolerance(env),
    custodyReconcileIntervalSeconds: readInteger(env, 'PAYGATE_CUSTODY_RECONCILE_INTERVAL_SECONDS', 600, 30, 86_400),
    tronHourlyOutflowCapMicro: readOptionalUsdt(env, 'PAYGATE_TRON_HOURLY_OUTFLOW_CAP_USDT'),
    ...readColdStorage(env),
    ...readEnergySettings(env),
  };
}
