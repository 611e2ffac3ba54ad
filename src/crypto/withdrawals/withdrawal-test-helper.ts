// The sandbox's withdrawal helper (`POST /v1/test_helpers/crypto/withdrawals`): a
// cabinet withdrawal asked for and, when the merchant's rule wants a second
// person, approved, through the same service the cabinet calls, so the reservation,
// the transfer, the audit entries and cabinet.withdrawal.completed are the real
// ones. The two people are named test_helpers:requester and test_helpers:approver;
// the audit log names the API key for both.
import type { AuditActor } from '../../audit/audit-service.ts';
import { NotFoundError } from '../../errors.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import {
  approveWithdrawal,
  createWithdrawal,
  findRepeatedWithdrawal,
  type CreateWithdrawalInput,
  type WithdrawalDeps,
} from './withdrawal-service.ts';
import type { WithdrawalView } from './withdrawals-views.ts';

const TEST_HELPER_REQUESTER = 'test_helpers:requester';
const TEST_HELPER_APPROVER = 'test_helpers:approver';

export interface TestHelperShop {
  readonly merchantId: string;
  readonly shopId: string;
  readonly mode: ShopProfile['mode'];
  /** The API key that calls the helper, as the audit log names it. */
  readonly keyId: string;
}

export async function requestSandboxWithdrawal(
  deps: WithdrawalDeps,
  shop: TestHelperShop,
  request: { readonly external_id: string; readonly amount: string; readonly address: string },
): Promise<{ created: boolean; withdrawal: WithdrawalView }> {
  if (shop.mode !== 'sandbox') throw new NotFoundError('Test helpers exist for sandbox shops only.');
  const actor: AuditActor = { kind: 'api_key', id: shop.keyId };
  const input: CreateWithdrawalInput = {
    merchantId: shop.merchantId,
    shopId: shop.shopId,
    externalId: request.external_id,
    amount: request.amount,
    address: request.address,
    requestedBy: TEST_HELPER_REQUESTER,
    actor,
  };
  const repeated = await findRepeatedWithdrawal(deps, input);
  if (repeated) return { created: false, withdrawal: repeated };
  const requested = await createWithdrawal(deps, input);
  if (requested.status !== 'awaiting_approval') return { created: true, withdrawal: requested };
  const approved = await approveWithdrawal(
    deps,
    requested.withdrawal_id,
    { name: TEST_HELPER_APPROVER, userId: null, actor },
    undefined,
    { shopId: shop.shopId },
  );
  return { created: true, withdrawal: approved };
}
