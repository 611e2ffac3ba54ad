// The simulated TRON chain of `npm run bench:crypto`, in a process of its own
// (as a real node is): its server's JSON and its signing do not land on the
// watcher's CPU. The parent drives it over IPC: `block` builds one block of
// real signed USDT transfers (those to `ours` first, the rest to random
// addresses) through the node's intake; `mine` produces empty blocks.
import { randomBytes } from 'node:crypto';
import { startSimulatedChainServer } from '../src/crypto/simchain/chain-server.ts';
import { SimulatedChain } from '../src/crypto/simchain/simulated-chain.ts';
import { parseTronHexAddress, tronAddress, type TronAddress } from '../src/crypto/tron/address.ts';

export type ChainRequest =
  | {
      readonly id: number;
      readonly kind: 'block';
      readonly ours: readonly string[];
      readonly oursMicro: string;
      readonly transfers: number;
    }
  | { readonly id: number; readonly kind: 'mine'; readonly count: number };
export type ChainReply =
  | { readonly id: number; readonly ok: true; readonly head: number }
  | { readonly id: number; readonly ok: false; readonly error: string };

function strangerAddress(): TronAddress {
  const parsed = parseTronHexAddress(`41${randomBytes(20).toString('hex')}`);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.address;
}

const chain = new SimulatedChain({
  seed: `bench-${randomBytes(4).toString('hex')}`,
  parameters: { maxTransactionsPerBlock: 10_000, maxPendingTransactions: 20_000, payerCount: 8 },
});
const server = await startSimulatedChainServer({ seed: chain.seed, chain });
let sent = 0;

function buildBlock(ours: readonly string[], oursMicro: bigint, transfers: number): void {
  for (let index = 0; index < transfers; index += 1) {
    const to = index < ours.length ? tronAddress(ours[index]!) : strangerAddress();
    const amount = index < ours.length ? oursMicro : 1_000_000n + BigInt(sent);
    const outcome = chain.sendUsdt({ from: chain.payers[sent % chain.payers.length]!, to, amount });
    sent += 1;
    if (!outcome.result) throw new Error(`the chain refused a bench transfer: ${JSON.stringify(outcome)}`);
  }
  const [block] = chain.mine(1);
  if (block!.transactions.length !== transfers)
    throw new Error(`block ${block!.number} holds ${block!.transactions.length} transfers`);
}

process.on('message', (request: ChainRequest) => {
  let reply: ChainReply;
  try {
    if (request.kind === 'block') buildBlock(request.ours, BigInt(request.oursMicro), request.transfers);
    else chain.mine(request.count);
    reply = { id: request.id, ok: true, head: chain.head.number };
  } catch (error) {
    reply = { id: request.id, ok: false, error: String(error) };
  }
  process.send!(reply);
});
process.on('disconnect', () => void server.close().then(() => process.exit(0)));
process.send!({ url: server.url, solidityDepth: chain.parameters.solidityDepth });
