// A simulated TRON chain on its own process (its own core) for the executor
// benchmark: manual clock (the benchmark mines through the control surface),
// room for 20,000 pending transactions. Prints its URL, runs until killed.
import { startSimulatedChainServer } from '../src/crypto/simchain/chain-server.ts';

const server = await startSimulatedChainServer({
  seed: process.argv[2] ?? 'executor bench',
  clock: 'manual',
  parameters: { maxPendingTransactions: 20_000, maxTransactionsPerBlock: 20_000 },
  // Signature recovery on worker threads (BENCH_CHAIN_SIGNATURE_WORKERS, 2 by default; 0 = on the main thread).
  signatureWorkers: Number(process.env.BENCH_CHAIN_SIGNATURE_WORKERS ?? 2),
});
process.stdout.write(`${server.url}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
