// How the sandbox chain of a process is found or made. One sandbox chain for every
// role (docs/crypto.md "One sandbox chain for every role"): a process with workers
// serves the simulated chain on loopback and records its URL in the data folder; an
// API-role process drives the recorded one; PAYGATE_SANDBOX_CHAIN_URL names one for
// everybody. In-memory mode (tests: no data folder) shares nothing: the chain is the
// process's own.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ServiceUnavailableError } from '../../errors.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../simchain/chain-server.ts';
import { createSimulatorControl } from '../simchain/control-client.ts';

/** The simulated chain's seed: its payers and block hashes; not a secret (nothing real is at stake). */
const SANDBOX_CHAIN_SEED = 'paygate sandbox chain';
const SANDBOX_CHAIN_FILE = 'sandbox-chain.json';
/** Where the process serving the sandbox chain records its URL, for the other roles. */
export const SANDBOX_CHAIN_URL_FILE = 'sandbox-chain.url';
const SANDBOX_DISCOVERY_RETRY_SECONDS = 5;
/**
 * How long an API-role process waits for a worker to start serving the sandbox chain.
 * A worker starts it lazily, on its watcher's first pass (every 3 s) after the first
 * sandbox deposit address exists; so the README's first test-helper call after the
 * first invoice finds it within this wait instead of failing.
 */
const SANDBOX_DISCOVERY_WAIT_MS = 7_000;
const SANDBOX_DISCOVERY_POLL_MS = 500;

export interface SandboxChainOptions {
  /** PAYGATE_SANDBOX_CHAIN_URL: every role drives this chain; none starts its own. */
  readonly chainUrl: string | undefined;
  /** PAYGATE_SANDBOX_CHAIN_RETAIN_BLOCKS: blocks below the solidified one whose bodies the served chain keeps. */
  readonly retainBlocks: number | undefined;
  /** Whether this process may serve the sandbox chain; false: it drives the one a worker serves. */
  readonly serves: boolean;
  /** How long to wait for a worker to serve the chain before 503 (SANDBOX_DISCOVERY_WAIT_MS by default). */
  readonly discoveryWaitMs: number | undefined;
  /** The data folder (saved chain, recorded URL); undefined: an in-memory chain. */
  readonly dataDir: string | undefined;
  readonly clock: 'manual' | 'wall';
  /** Load the saved chain but never save it back (a CLI beside a running gateway). */
  readonly readOnly: boolean;
  readonly logger: Logger;
}

/** The sandbox chain of a process: served here, or another process's. */
export interface SandboxChain {
  /** The URL of the chain this process drives (served here, recorded by a worker, or configured). */
  url(): Promise<string>;
  /** The chain this process serves (in-process tests drive it directly). */
  server(): Promise<SimulatedChainServer>;
  /** Whether this process serves the chain at `url` (false: drive it through its control API). */
  servesHere(): Promise<boolean>;
  close(): Promise<void>;
}

export function createSandboxChain(options: SandboxChainOptions): SandboxChain {
  const { logger } = options;
  const urlFile = options.dataDir === undefined ? undefined : join(options.dataDir, SANDBOX_CHAIN_URL_FILE);
  let served: Promise<SimulatedChainServer> | undefined;
  let url: Promise<string> | undefined;

  const serve = () =>
    (served ??= (async () => {
      const recorded = urlFile === undefined ? undefined : await readRecordedUrl(urlFile);
      const serverOptions = {
        seed: SANDBOX_CHAIN_SEED,
        clock: options.clock,
        unref: true,
        ...(options.retainBlocks === undefined ? {} : { parameters: { retainedBlockBodies: options.retainBlocks } }),
        ...(options.dataDir === undefined ? {} : { persistFile: join(options.dataDir, SANDBOX_CHAIN_FILE) }),
      } as const;
      // The port of the last run when it is free, so a restarted worker keeps the URL other processes hold.
      const recordedPort = recorded === undefined ? 0 : Number(new URL(recorded).port);
      const server = await startSimulatedChainServer({ ...serverOptions, port: recordedPort }).catch(() =>
        startSimulatedChainServer(serverOptions),
      );
      if (urlFile !== undefined && !options.readOnly) await recordUrl(urlFile, server.url);
      logger.info({ url: server.url }, 'sandbox chain served by this process');
      return server;
    })());

  /** A chain recorded by another process that answers, or undefined. */
  const recordedLiveChain = async (): Promise<string | undefined> => {
    const recorded = urlFile === undefined ? undefined : await readRecordedUrl(urlFile);
    if (recorded === undefined) return undefined;
    try {
      await createSimulatorControl(recorded, { timeoutMs: 2_000 }).info();
      return recorded;
    } catch {
      return undefined;
    }
  };

  const resolveUrl = () =>
    (url ??= (async () => {
      if (options.chainUrl !== undefined) return options.chainUrl;
      if (urlFile === undefined) return (await serve()).url;
      let other = await recordedLiveChain();
      const waitMs = options.discoveryWaitMs ?? SANDBOX_DISCOVERY_WAIT_MS;
      for (
        let waited = 0;
        other === undefined && !options.serves && waited < waitMs;
        waited += SANDBOX_DISCOVERY_POLL_MS
      ) {
        await new Promise((resolve) => setTimeout(resolve, SANDBOX_DISCOVERY_POLL_MS));
        other = await recordedLiveChain();
      }
      if (other !== undefined) {
        logger.info({ url: other }, 'sandbox chain served by another process');
        return other;
      }
      if (!options.serves) {
        throw new ServiceUnavailableError(
          'The sandbox chain is served by the worker role, which starts it once a sandbox deposit address exists: create an invoice or a wallet first, ' +
            'and run `paygate serve --role worker` with the same PAYGATE_DATA_DIR (or set PAYGATE_SANDBOX_CHAIN_URL for every role; docs/crypto.md).',
          SANDBOX_DISCOVERY_RETRY_SECONDS,
        );
      }
      return (await serve()).url;
    })().catch((error: unknown) => {
      url = undefined; // a worker that starts later is found by the next call
      throw error;
    }));

  return {
    url: resolveUrl,
    server: serve,
    servesHere: async () => (await resolveUrl()) === (served && (await served).url),
    async close() {
      // A read-only sandbox chain is left unclosed (closing saves it); it does not hold the process open.
      if (served && !options.readOnly) await (await served).close();
    },
  };
}

async function readRecordedUrl(file: string): Promise<string | undefined> {
  try {
    const text = (await readFile(file, 'utf8')).trim();
    return /^https?:\/\/[^\s]+$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Written to a temporary file and renamed: a reader never sees half a URL. */
async function recordUrl(file: string, url: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${url}\n`, { mode: 0o600 });
  await rename(temporary, file);
}
