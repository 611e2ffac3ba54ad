// `paygate crypto hot-wallet`: each book's hot wallet against its ceiling
// (PAYGATE_TRON_HOT_WALLET_CEILING_USDT): USDT on chain, what queued and
// in-flight transfers will still send, the surplus for the cold wallet, and the
// recent moves to PAYGATE_TRON_COLD_ADDRESS (crypto/cold-storage/).
import { parseArgs } from 'node:util';
import {
  hotWalletPositions,
  recentColdMoves,
  type HotWalletPosition,
} from '../crypto/cold-storage/cold-storage-service.ts';
import { formatMinor } from '../money/decimal.ts';
import type { CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { readOnlyCryptoChain } from './read-only-chain.ts';
import { printTable, type Column } from './table.ts';

const RECENT_MOVES = 5;

interface HotWalletView {
  readonly book: string;
  readonly hot_wallet: string;
  readonly usdt_on_chain: string;
  readonly usdt_committed: string;
  readonly ceiling: string;
  readonly surplus: string;
  readonly cold_address: string | null;
  readonly recent_moves: readonly {
    readonly id: string;
    readonly status: string;
    readonly amount: string;
    readonly tx_hash: string | null;
    readonly created_at: string;
  }[];
}

const usdt = (micro: bigint) => formatMinor(micro, 'USDT');

export const cryptoHotWalletCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
    if (config.tronHotWalletCeilingMicro === undefined) {
      // Nothing is judged without a ceiling: no rows.
      io.out(values.json ? '[]' : 'no hot-wallet ceiling configured (PAYGATE_TRON_HOT_WALLET_CEILING_USDT)');
      return 0;
    }
    const views = await withCliContext(config, async (context) => {
      const chain = readOnlyCryptoChain(config, context.logger, context);
      try {
        const positions = await hotWalletPositions({
          db: context.db,
          clock: context.clock,
          config,
          logger: context.logger,
          chain,
        });
        return Promise.all(
          positions.map(async (position) =>
            view(position, await recentColdMoves(context.db, position.chain, RECENT_MOVES)),
          ),
        );
      } finally {
        await chain.close();
      }
    });
    if (values.json) io.out(JSON.stringify(views));
    else printTable(io.out, views, HOT_WALLET_COLUMNS, 'no book holds USDT');
    return 0;
  },
};

function view(position: HotWalletPosition, moves: Awaited<ReturnType<typeof recentColdMoves>>): HotWalletView {
  return {
    book: position.book,
    hot_wallet: position.hotWallet,
    usdt_on_chain: usdt(position.usdtOnChain),
    usdt_committed: usdt(position.usdtCommitted),
    ceiling: usdt(position.ceiling),
    surplus: usdt(position.surplus),
    cold_address: position.coldAddress ?? null,
    recent_moves: moves.map((move) => ({
      id: move.id,
      status: move.status,
      amount: usdt(move.amount_micro),
      tx_hash: move.tx_hash,
      created_at: move.created_at.toISOString(),
    })),
  };
}

const HOT_WALLET_COLUMNS: readonly Column<HotWalletView>[] = [
  { header: 'BOOK', value: (entry) => entry.book },
  { header: 'HOT WALLET', value: (entry) => entry.hot_wallet },
  { header: 'USDT ON CHAIN', value: (entry) => entry.usdt_on_chain, align: 'right' },
  { header: 'COMMITTED', value: (entry) => entry.usdt_committed, align: 'right' },
  { header: 'CEILING', value: (entry) => entry.ceiling, align: 'right' },
  { header: 'SURPLUS', value: (entry) => entry.surplus, align: 'right' },
  { header: 'COLD ADDRESS', value: (entry) => entry.cold_address ?? 'none: move the surplus by hand' },
  {
    header: 'RECENT MOVES',
    value: (entry) => entry.recent_moves.map((move) => `${move.id} ${move.status} ${move.amount}`).join(', '),
  },
];
