// The module boundary of docs/ARCHITECTURE.md, checked on the real eslint.config.js
// through ESLint's Node API: an import of another module's repository or tables is
// refused from a module, the CLI and the runtime; a module's service is accepted.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const RULE = 'boundaries/dependencies';
const eslint = new ESLint({ cwd: process.cwd() });

/** The boundary errors ESLint reports for `source` as if it were the file at `filePath`. */
async function boundaryErrors(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? []).filter((message) => message.ruleId === RULE).map((message) => message.message);
}

describe('module boundaries in lint', () => {
  it.each([
    [
      'payments → crypto/sending tables',
      'src/payments/payment-service.ts',
      "import type { SendingTables } from '../crypto/sending/sending-tables.ts';\nexport type T = SendingTables;\n",
    ],
    [
      'cli → a repository',
      'src/cli/crypto-commands.ts',
      "import { unconfirmedDeposits } from '../crypto/receiving/receiving-repository.ts';\nexport const f = unconfirmedDeposits;\n",
    ],
    [
      'runtime.ts → merchants repository',
      'src/runtime.ts',
      "import { countMerchants } from './merchants/merchant-repository.ts';\nexport const f = countMerchants;\n",
    ],
    [
      'crypto/refunds → crypto/receiving repository',
      'src/crypto/refunds/refund-service.ts',
      "import { findInvoiceOfShop } from '../receiving/receiving-repository.ts';\nexport const f = findInvoiceOfShop;\n",
    ],
  ])('%s is refused', { timeout: 120_000 }, async (_name, filePath, source) => {
    expect(await boundaryErrors(filePath, source)).toHaveLength(1);
  });

  it("another module's service is accepted, and a module's own repository", { timeout: 120_000 }, async () => {
    const source = [
      "import { creditedDepositsOfInvoice } from '../receiving/receiving-service.ts';",
      "import { lockRefund } from './refunds-repository.ts';",
      'export const f = [creditedDepositsOfInvoice, lockRefund];',
      '',
    ].join('\n');
    expect(await boundaryErrors('src/crypto/refunds/refund-service.ts', source)).toEqual([]);
  });
});
