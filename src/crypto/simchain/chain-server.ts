// The simulated chain served over HTTP on loopback, speaking the full-node
// API (node-api.ts) so the production node client runs against it unchanged.
// node:http keeps it light: every path is one synchronous call on the chain.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CONTROL_PATH_PREFIX, createControlApi } from './control-api.ts';
import { createNodeApi, type NodeAnswer } from './node-api.ts';
import { NodeFaults } from './node-faults.ts';
import { queryAsBody, type NodeRequestBody } from './node-request.ts';
import { loadChain, saveChain } from './persistence.ts';
import { SimulatedChain, type RecoveredSignature } from './simulated-chain.ts';
import { createSignaturePool, type SignaturePool } from './signature-pool.ts';
import { broadcastTransactionJson } from './broadcast-json.ts';
import { decodeChainTransaction } from './chain-transaction.ts';
import { TRANSACTION_MAX_BYTES } from '../tron/transaction.ts';
import { hexToBytes } from '@noble/hashes/utils.js';
import type { ChainParameters } from './chain-parameters.ts';

export interface SimulatedChainServerOptions {
  /** 0 picks a free port. */
  readonly port?: number;
  /** Loopback only by default: this is a sandbox, not a network node. */
  readonly host?: string;
  readonly seed: string;
  readonly parameters?: Partial<ChainParameters>;
  /**
   * `manual` (default): the chain moves only when told (tests). `wall`: it
   * follows the wall clock from now on, a block every 3 s (sandbox).
   */
  readonly clock?: 'manual' | 'wall';
  /** A JSON file the chain is loaded from at start and saved to on every block and at close. */
  readonly persistFile?: string;
  /** Serve this chain instead of creating one. */
  readonly chain?: SimulatedChain;
  /** Do not keep the process alive for it (a gateway's in-process sandbox chain must not hold up its exit). */
  readonly unref?: boolean;
  /**
   * Worker threads that recover broadcast signatures off the main thread (signature-pool.ts);
   * 0 (default): intake recovers on the main thread. Every signature is recovered either way.
   */
  readonly signatureWorkers?: number;
}

export interface SimulatedChainServer {
  readonly url: string;
  readonly port: number;
  readonly chain: SimulatedChain;
  readonly faults: NodeFaults;
  /**
   * Another full node of the same chain, with faults of its own (a lagging node, one with its
   * history off, a liar), served under `/node/<name>` of this server: the URL a client is given.
   */
  node(name: string): SimulatedNode;
  close(): Promise<void>;
}

interface SimulatedNode {
  readonly url: string;
  readonly faults: NodeFaults;
}

const MAX_BODY_BYTES = 2 * 1024 * 1024;
const WALL_CLOCK_TICK_MS = 250;
/** A sandbox chain is saved at most this often while running, and at close. */
const SAVE_INTERVAL_MS = 10_000;

export async function startSimulatedChainServer(options: SimulatedChainServerOptions): Promise<SimulatedChainServer> {
  const host = options.host ?? '127.0.0.1';
  const wallClock = options.clock === 'wall';
  const parameters: Partial<ChainParameters> = {
    ...(wallClock ? { genesisTimestampMs: Date.now() } : {}),
    ...options.parameters,
  };
  const chain =
    options.chain ??
    (options.persistFile ? await loadChain(options.persistFile, { seed: options.seed, parameters }) : undefined) ??
    new SimulatedChain({ seed: options.seed, parameters });
  const faults = new NodeFaults();
  const nodeApi = createNodeApi(chain, faults);
  const controlApi = createControlApi(chain, wallClock ? { wallNowMs: () => Date.now() } : {});
  const otherNodes = new Map<string, { readonly faults: NodeFaults; readonly api: ReturnType<typeof createNodeApi> }>();
  /** The node a path is for (the path without its `/node/<name>` prefix), or undefined for an unknown node. */
  const nodeOf = (path: string) => {
    const named = OTHER_NODE_PATH.exec(path);
    if (!named) return { faults, api: nodeApi, path };
    const other = otherNodes.get(named[1]!);
    return other ? { ...other, path: path.slice(named[0].length) } : undefined;
  };
  // The control surface is not the node: faults (503s, delays) never reach it.
  const answer = (path: string, body: Record<string, unknown>): NodeAnswer => {
    if (path.startsWith(CONTROL_PATH_PREFIX)) return controlApi(path, body);
    const node = nodeOf(path);
    return node ? node.api(node.path, body) : { status: 404, text: 'Not Found' };
  };
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const pool = options.signatureWorkers
    ? createSignaturePool(options.signatureWorkers, { unref: options.unref })
    : undefined;

  const server = createServer((request, response) => {
    readBody(request)
      .then(async (text) => {
        const [path = '/', search = ''] = (request.url ?? '/').split('?', 2);
        const query = queryAsBody(new URLSearchParams(search));
        const recovered = pool && BROADCAST_PATHS.has(path) ? await recoverBroadcastSignature(pool, path, text) : [];
        const reply = chain.withRecoveredSignatures(recovered, () => handle(answer, path, text, query));
        const node = path.startsWith(CONTROL_PATH_PREFIX) ? undefined : nodeOf(path);
        const delayMs = node ? node.faults.delayFor(node.path) : 0;
        if (delayMs <= 0) return send(response, reply);
        const timer = setTimeout(() => {
          timers.delete(timer);
          send(response, reply);
        }, delayMs);
        timers.add(timer);
      })
      .catch(() => send(response, { status: 413, text: 'Request Entity Too Large' }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  if (options.unref) server.unref();

  let saving = Promise.resolve();
  let lastSavedHead = chain.head.id;
  let lastSavedAtMs = Date.now();
  const persist = (force: boolean) => {
    if (!options.persistFile || chain.head.id === lastSavedHead) return;
    if (!force && Date.now() - lastSavedAtMs < SAVE_INTERVAL_MS) return;
    lastSavedHead = chain.head.id;
    lastSavedAtMs = Date.now();
    const file = options.persistFile;
    saving = saving.then(() => saveChain(chain, file)).catch(() => undefined);
  };
  const ticker = wallClock
    ? setInterval(() => {
        const behindMs = Date.now() - chain.nowMs;
        if (behindMs > 0) chain.advance(behindMs);
        persist(false);
      }, WALL_CLOCK_TICK_MS)
    : undefined;
  ticker?.unref();

  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    port,
    chain,
    faults,
    node(name) {
      if (!/^[a-z0-9-]{1,32}$/.test(name))
        throw new Error(`a simulated node's name is 1-32 of a-z, 0-9 and -, got ${JSON.stringify(name)}`);
      let other = otherNodes.get(name);
      if (!other) {
        const nodeFaults = new NodeFaults();
        other = { faults: nodeFaults, api: createNodeApi(chain, nodeFaults) };
        otherNodes.set(name, other);
      }
      return { url: `${url}/node/${name}`, faults: other.faults };
    },
    async close() {
      if (ticker) clearInterval(ticker);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool?.close();
      lastSavedHead = '';
      persist(true);
      await saving;
    },
  };
}

const BROADCAST_PATHS = new Set(['/wallet/broadcasthex', '/wallet/broadcasttransaction']);
const OTHER_NODE_PATH = /^\/node\/([a-z0-9-]{1,32})(?=\/)/;

/**
 * The signer of a broadcast's one signature, recovered on the pool. Anything the pool
 * cannot settle (malformed body, several signatures, a dead worker) is left to intake,
 * which then recovers on the main thread or refuses as it always did.
 */
async function recoverBroadcastSignature(
  pool: SignaturePool,
  path: string,
  text: string,
): Promise<RecoveredSignature[]> {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    let bytes: Uint8Array | undefined;
    if (path === '/wallet/broadcasthex') {
      const hex = body['transaction'];
      if (typeof hex === 'string' && /^(?:[0-9a-fA-F]{2})+$/.test(hex) && hex.length <= 2 * TRANSACTION_MAX_BYTES)
        bytes = hexToBytes(hex);
    } else {
      const built = broadcastTransactionJson(body);
      if (built.ok) bytes = built.bytes;
    }
    const decoded = bytes ? decodeChainTransaction(bytes) : undefined;
    if (!decoded?.ok || decoded.transaction.signatures.length !== 1) return [];
    const { txId, signatures } = decoded.transaction;
    return [{ txId, signature: signatures[0]!, signer: await pool.recover(txId, signatures[0]!) }];
  } catch {
    return [];
  }
}

/** Answers one request; a GET's query (java-tron servlets' doGet) is read as the body a POST carries. */
function handle(
  answer: (path: string, body: Record<string, unknown>) => NodeAnswer,
  path: string,
  text: string,
  query: NodeRequestBody,
): NodeAnswer {
  let body: unknown = query;
  if (text.trim() !== '') {
    try {
      body = JSON.parse(text);
    } catch (error) {
      // java-tron's servlets answer a malformed body with HTTP 200 and an Error.
      return { status: 200, json: { Error: `class com.alibaba.fastjson.JSONException : ${(error as Error).message}` } };
    }
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { status: 200, json: { Error: 'the request body must be a JSON object' } };
  return answer(path, { ...query, ...(body as Record<string, unknown>) });
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, reply: NodeAnswer): void {
  if (response.destroyed) return;
  if (reply.json !== undefined) {
    response.writeHead(reply.status, { ...reply.headers, 'content-type': 'application/json' });
    response.end(stringifyNodeJson(reply.json));
  } else {
    response.writeHead(reply.status, { ...reply.headers, 'content-type': 'text/plain' });
    response.end(reply.text ?? '');
  }
}

/**
 * JSON with bigints written as plain integers, as java-tron writes int64 fields.
 * Answers carry int64s that fit a double as numbers (int64Json), and those
 * stringify without a replacer; only an answer that still holds a bigint pays
 * for one (a replacer call per value, several times the plain cost).
 */
function stringifyNodeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'bigint' ? `\u0000bigint:${item}` : item,
  ).replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}
