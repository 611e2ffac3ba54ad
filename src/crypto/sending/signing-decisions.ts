// What a pass signs: for each queued transfer, oldest first, what it needs of
// its sending address (planner.ts) against what that address holds less what
// its transfers in flight will take; a USDT transfer to a new recipient is run
// as a constant call first, so a blacklisted party fails before any fee is
// spent and the fee limit follows the energy the call used. The hot wallet's
// transfers holding an energy reservation go first (energy-reservations.ts).
import type { ChainPrices } from '../tron/node-client.ts';
import type { TronAddress } from '../tron/address.ts';
import { forEachLimited, NODE_CONCURRENCY, type ExecutorContext } from './executor-context.ts';
import {
  afterSending,
  delegatedEnergy,
  fits,
  lessDelegated,
  lessInFlight,
  transferNeeds,
  type Balances,
  type TransferNeeds,
} from './planner.ts';
import * as repository from './sending-repository.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import { failureOf, type Finish } from './transfer-finisher.ts';
import { feeLimitFor, freshRecipient, TRANSFER_ENERGY_MAX_DEFAULT } from '../chain/transfer-energy.ts';
import type { PassEnergy } from '../energy/energy-manager.ts';
import { passReservations } from '../energy/energy-reservations.ts';
import type { EnergyPlan } from '../energy/energy-sources.ts';

export interface SignJob {
  readonly row: OutgoingTransferRow;
  readonly from: TronAddress;
  readonly feeLimit: bigint;
  /** Where its energy comes from (null: a TRX transfer, no energy) and what its rentals cost. */
  readonly energy: { readonly plan: EnergyPlan | null; readonly rentalSun: bigint | null };
}

export interface SigningDecisions {
  readonly toSign: SignJob[];
  /** The sending address is short: these wait. */
  readonly short: OutgoingTransferRow[];
  /** Their energy is above the ceiling: these wait too. */
  readonly aboveCeiling: OutgoingTransferRow[];
  /** They would burn more TRX than PAYGATE_TRON_MAX_BURN_TRX: these wait, unsigned, and never fail for it. */
  readonly aboveBurnCap: OutgoingTransferRow[];
  /** Their energy is being arranged (a rental on its way): these wait too. */
  readonly energyWaiting: OutgoingTransferRow[];
  readonly failures: Finish[];
  readonly dearEnergy: bigint;
  readonly ceiling: bigint;
}

type DryRun = { ok: true; energy: number } | { ok: false; message: string };

/** The address a transfer is sent from. */
export function sourceOf(context: Pick<ExecutorContext, 'hotWallet'>, row: OutgoingTransferRow): TronAddress {
  return row.from_kind === 'hot_wallet' ? context.hotWallet : (row.from_address as TronAddress);
}

/** The USDT transfers to run as a constant call first: every one, none, or (default) those to a recipient never confirmed on this chain. */
async function rowsToDryRun(
  context: ExecutorContext,
  usdtRows: readonly OutgoingTransferRow[],
): Promise<readonly OutgoingTransferRow[]> {
  if (context.dryRunBeforeSigning === false || usdtRows.length === 0) return [];
  if (context.dryRunBeforeSigning === true) return usdtRows;
  const known = await repository.confirmedRecipients(context.db, context.chain, [
    ...new Set(usdtRows.map((row) => row.to_address)),
  ]);
  return usdtRows.filter((row) => !known.has(row.to_address));
}

/**
 * What each sending address holds, less what its transfers in flight will still take (read once per pass),
 * and the energy a delegation of staked sun takes from the hot wallet at the network's rate read with it.
 */
function balanceReader(
  context: ExecutorContext,
  inFlightRows: readonly OutgoingTransferRow[],
  dearEnergy: bigint,
  prices: ChainPrices,
): { balanceOf(address: TronAddress): Promise<Balances>; delegatedEnergy(stakedSun: bigint): bigint } {
  const balances = new Map<string, Balances>();
  let network = { totalEnergyLimit: 0, totalEnergyWeight: 0 };
  const energyOf = (stakedSun: bigint) => delegatedEnergy(stakedSun, network);
  const balanceOf = async (address: TronAddress) => {
    let known = balances.get(address);
    if (!known) {
      const [account, usdt, resources] = await Promise.all([
        context.node.getAccount(address),
        context.node.getUsdtBalance(address),
        context.node.getAccountResources(address),
      ]);
      const inFlight = inFlightRows.filter((row) => sourceOf(context, row) === address);
      known = lessInFlight(
        {
          usdt,
          trxSun: account.balanceSun,
          energy: BigInt(resources.energyAvailable),
          stakedBandwidth: BigInt(Math.max(0, resources.stakedBandwidthLimit - resources.stakedBandwidthUsed)),
          freeBandwidth: BigInt(Math.max(0, resources.freeBandwidthLimit - resources.freeBandwidthUsed)),
        },
        inFlight,
        dearEnergy,
        prices,
      );
      network = resources;
      // A delegation signed but not seen on chain yet still takes its energy from the hot wallet's own.
      for (const row of inFlight)
        if (row.purpose === 'energy_delegation') known = lessDelegated(known, energyOf(row.amount));
      balances.set(address, known);
    }
    return known;
  };
  return { balanceOf, delegatedEnergy: energyOf };
}

/** The TRX a transfer burns: all it needs in TRX but what it sends. */
function burnedSun(row: OutgoingTransferRow, needs: TransferNeeds): bigint {
  return needs.needTrx - (row.asset === 'TRX' ? row.amount : 0n);
}

/** Where a USDT transfer's energy comes from (the energy manager's arrangement), or 'waiting' while it arranges some. */
async function energyFor(
  context: ExecutorContext,
  passEnergy: PassEnergy | undefined,
  row: OutgoingTransferRow,
  from: TronAddress,
  balance: Balances,
  needs: TransferNeeds,
  prices: ChainPrices,
): Promise<SignJob['energy'] | 'waiting'> {
  if (row.asset !== 'USDT') return { plan: null, rentalSun: null };
  const ownPlan = row.from_kind === 'hot_wallet' ? 'staked' : 'delegated';
  if (!passEnergy) return { plan: needs.burnedEnergy === needs.energy ? 'burned' : ownPlan, rentalSun: null };
  const arranged = await passEnergy.arrange({
    transferId: row.id,
    address: from,
    energy: needs.energy,
    energyAvailable: balance.energy > 0n ? balance.energy : 0n,
    energyPriceSun: prices.energyPriceSun,
    ownPlan,
  });
  if (arranged.kind === 'waiting') return 'waiting';
  return { plan: arranged.plan, rentalSun: arranged.rentalSun };
}

export async function decideSigning(
  context: ExecutorContext,
  queued: readonly OutgoingTransferRow[],
  inFlightRows: readonly OutgoingTransferRow[],
  prices: ChainPrices,
): Promise<SigningDecisions> {
  // A USDT transfer's energy is the chain's figure (transfer-energy.ts): the dear case (a recipient
  // without USDT) at the contract's energy factor now, measured once per factor on a fresh address.
  const energyModel = context.transferEnergy;
  const ceiling = context.transferEnergyMax ?? TRANSFER_ENERGY_MAX_DEFAULT;
  const needsUsdtEnergy =
    queued.some((row) => row.asset === 'USDT') || inFlightRows.some((row) => row.asset === 'USDT');
  const dearEnergy = needsUsdtEnergy
    ? await energyModel.energyOf(context.clock, {
        from: context.hotWallet,
        to: freshRecipient(),
        recipientHoldsUsdt: false,
      })
    : 0n;
  const reader = balanceReader(context, inFlightRows, dearEnergy, prices);
  const balanceOf = reader.balanceOf;
  const holders = new Map<string, Promise<boolean>>();
  const recipientHoldsUsdt = (address: TronAddress): Promise<boolean> => {
    let known = holders.get(address);
    if (!known) holders.set(address, (known = context.node.getUsdtBalance(address).then((usdt) => usdt > 0n)));
    return known;
  };
  if (context.topUpHotWallet) {
    const hot = await balanceOf(context.hotWallet);
    const added = await context.topUpHotWallet(
      queued.filter((row) => row.from_kind === 'hot_wallet'),
      hot,
    );
    hot.usdt += added.usdt;
    hot.trxSun += added.trxSun;
  }
  const dryRuns = new Map<string, DryRun>();
  await forEachLimited(
    await rowsToDryRun(
      context,
      queued.filter((row) => row.asset === 'USDT'),
    ),
    NODE_CONCURRENCY,
    async (row) => {
      const from = sourceOf(context, row);
      // Only when the sender has the USDT: otherwise the dry run fails for that, and the wait below applies.
      if ((await balanceOf(from)).usdt >= row.amount)
        dryRuns.set(row.id, await context.node.dryRunUsdtTransfer(from, row.to_address as TronAddress, row.amount));
    },
  );
  const decisions: SigningDecisions = {
    toSign: [],
    short: [],
    aboveCeiling: [],
    aboveBurnCap: [],
    energyWaiting: [],
    failures: [],
    dearEnergy,
    ceiling,
  };
  const passEnergy = await context.energyManager?.forPass(
    queued.filter((row) => row.asset === 'USDT').map((row) => row.id),
  );
  const reservations = await passReservations(
    context.db,
    context.chain,
    context.clock.now(),
    queued.filter((row) => row.asset === 'USDT' && row.from_kind === 'hot_wallet').map((row) => row.id),
  );
  for (const row of reservations.reservedFirst(queued)) {
    const from = sourceOf(context, row);
    const held = await balanceOf(from);
    // The hot wallet's own energy promised to other quoted transfers is not this one's to plan on.
    const balance =
      row.from_kind === 'hot_wallet' ? { ...held, energy: reservations.energyFor(row.id, held.energy) } : held;
    const dry = dryRuns.get(row.id);
    if (dry && !dry.ok) {
      decisions.failures.push(
        failureOf(
          row,
          'address_blacklisted',
          `the USDT contract refuses this transfer (${dry.message}): the recipient or sender is blacklisted`,
        ),
      );
      continue;
    }
    const needsOf = (energy: bigint): TransferNeeds => transferNeeds(row, balance, prices, energy);
    // Without a dry run, the dear case (a recipient without USDT) first; only when that does not fit is the
    // recipient asked (a sweep to a hot wallet holding USDT is topped up for exactly the cheaper case).
    let needs = needsOf(row.asset === 'USDT' ? (dry?.ok ? BigInt(dry.energy) : dearEnergy) : 0n);
    if (
      !fits(balance, needs) &&
      row.asset === 'USDT' &&
      !dry &&
      balance.usdt >= row.amount &&
      (await recipientHoldsUsdt(row.to_address as TronAddress))
    ) {
      needs = needsOf(
        await energyModel.energyOf(context.clock, {
          from,
          to: row.to_address as TronAddress,
          recipientHoldsUsdt: true,
        }),
      );
    }
    if (needs.energy > ceiling) {
      decisions.aboveCeiling.push(row);
      continue;
    }
    if (balance.usdt < needs.needUsdt) {
      // Short of USDT: no energy is arranged (nor paid for) for a transfer that cannot be sent.
      decisions.short.push(row);
      continue;
    }
    const energy = await energyFor(context, passEnergy, row, from, balance, needs, prices);
    if (energy === 'waiting') decisions.energyWaiting.push(row);
    else if (context.maxBurnSun !== undefined && burnedSun(row, needs) > context.maxBurnSun)
      decisions.aboveBurnCap.push(row);
    else if (!fits(balance, needs)) decisions.short.push(row);
    else {
      Object.assign(held, afterSending(held, needs));
      // A delegation signed in this pass leaves less own energy for the hot wallet's transfers after it.
      if (row.purpose === 'energy_delegation')
        Object.assign(held, lessDelegated(held, reader.delegatedEnergy(row.amount)));
      reservations.signed(row.id);
      decisions.toSign.push({
        row,
        from,
        feeLimit: row.asset === 'USDT' ? feeLimitFor(needs.energy, prices.energyPriceSun) : 0n,
        energy,
      });
    }
  }
  return decisions;
}
