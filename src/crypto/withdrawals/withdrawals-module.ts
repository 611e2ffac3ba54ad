// The crypto withdrawals module: cabinet withdrawals, with no API route and no worker
// (the cabinet and the CLI call withdrawal-service.ts; the sending module sends them).
import type { GatewayModule } from '../../gateway-module.ts';

export function createWithdrawalsModule(): { module: GatewayModule } {
  return { module: { name: 'crypto-withdrawals' } };
}
