// A worker process for the kill -9 tests: runs the sign-once executor against
// the test's simulated chain (PAYGATE_TEST_NODE_URL: one URL, or several
// separated by commas, asked in that order) on the test's database,
// with a recording outcome handler for the `payout` purpose (the executor's own
// tests own no payouts module). PAYGATE_TEST_CRASH_AT names the step at which
// it kills itself with SIGKILL, exactly as `kill -9` would. It exits 0 once no
// transfer is open.
import pino from 'pino';
import { systemClock } from '../../../src/clock.ts';
import { openDatabase } from '../../../src/db/database.ts';
import { signingKeyFromMnemonic } from '../../../src/crypto/keys/hd-keys.ts';
import type { ExecutorStep } from '../../../src/crypto/sending/executor-context.ts';
import { createOutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import { hasOpenTransfers } from '../../../src/crypto/sending/sending-repository.ts';
import { createTronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { createUsdtTransferEnergy } from '../../../src/crypto/chain/transfer-energy.ts';
import { USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';

const env = process.env;
const handle = await openDatabase({
  url: env.PAYGATE_TEST_DATABASE_URL || undefined,
  dataDir: env.PAYGATE_TEST_PGLITE_DIR,
});
const key = signingKeyFromMnemonic(env.PAYGATE_TEST_MNEMONIC!);
const node = createTronNodeClient({
  urls: env.PAYGATE_TEST_NODE_URL!.split(','),
  usdtContract: USDT_CONTRACT_MAINNET,
  timeoutMs: 5_000,
  retryDelayMs: 20,
  cooldownMs: 0,
});
const crashAt = env.PAYGATE_TEST_CRASH_AT as ExecutorStep | undefined;
const noop = { onFinal: async () => undefined, onSubmitted: async () => undefined };
const executor = createOutgoingExecutor({
  db: handle.db,
  clock: systemClock,
  logger: pino({ level: 'warn' }),
  chain: 'tron-live',
  node,
  transferEnergy: createUsdtTransferEnergy(node),
  signingKey: async () => key,
  hotWallet: key.hotWalletAddress,
  usdtContract: USDT_CONTRACT_MAINNET,
  handlers: { payout: noop },
  trxUsdtRateMicro: 300_000n,
  maxInFlight: 10_000,
  maxAttempts: 5,
  fundsWaitSeconds: 600,
  leaseMs: 1_000,
  onStep: (step) => {
    if (step === crashAt) process.kill(process.pid, 'SIGKILL');
  },
});
for (;;) {
  const open = await hasOpenTransfers(handle.db, 'tron-live');
  if (!open.queuedUnsigned && !open.inFlight) break;
  await executor.runPass();
  process.stdout.write('pass\n');
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await node.close();
await handle.close();
process.stdout.write('done\n');
