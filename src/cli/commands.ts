// Every `paygate` subcommand. Modules add theirs here.
import type { CliCommand } from './cli-command.ts';
import { keyCreateCommand, keyRevokeCommand, merchantCreateCommand, shopCreateCommand } from './merchant-commands.ts';
import { migrateCommand, serveCommand } from './serve-commands.ts';
import { backupCommand, restoreCommand } from './backup-commands.ts';
import { shopMethodsListCommand, shopMethodsSetCommand } from './shop-method-commands.ts';
import { ledgerCheckCommand } from './ledger-commands.ts';
import { suspenseListCommand, suspenseRefundCommand } from './suspense-commands.ts';
import { kmsGenerateKeyCommand, kmsRotateCommand } from './kms-commands.ts';
import { openapiCommand } from './openapi-command.ts';
import {
  cryptoAddressesCommand,
  cryptoDepositsReleaseCommand,
  cryptoDepositsUnconfirmedCommand,
  cryptoSettingsCommand,
  cryptoSweepsListCommand,
  cryptoSweepsRetryCommand,
} from './crypto-commands.ts';
import { chainSimulateCommand } from './chain-commands.ts';
import { cryptoReconcileCommand } from './custody-commands.ts';
import { cryptoKeysImportCommand, cryptoKeysListCommand } from './crypto-key-commands.ts';
import { cryptoHotWalletCommand } from './hot-wallet-commands.ts';
import { withdrawalApproveCommand, withdrawalCreateCommand, withdrawalListCommand, withdrawalRejectCommand, withdrawalSettingsCommand } from './withdrawal-commands.ts';

export const commands: readonly CliCommand[] = [
  serveCommand,
  migrateCommand,
  backupCommand,
  restoreCommand,
  merchantCreateCommand,
  shopCreateCommand,
  keyCreateCommand,
  keyRevokeCommand,
  shopMethodsListCommand,
  shopMethodsSetCommand,
  ledgerCheckCommand,
  suspenseListCommand,
  suspenseRefundCommand,
  openapiCommand,
  kmsGenerateKeyCommand,
  kmsRotateCommand,
  chainSimulateCommand,
  cryptoAddressesCommand,
  cryptoSweepsListCommand,
  cryptoSweepsRetryCommand,
  cryptoSettingsCommand,
  cryptoReconcileCommand,
  cryptoDepositsUnconfirmedCommand,
  cryptoDepositsReleaseCommand,
  cryptoKeysImportCommand,
  cryptoKeysListCommand,
  cryptoHotWalletCommand,
  withdrawalCreateCommand,
  withdrawalApproveCommand,
  withdrawalRejectCommand,
  withdrawalListCommand,
  withdrawalSettingsCommand,
];
