// Points on the charge path where a test may stop the process dead, to prove
// that what was written before survives (test/payments/charge-crash.test.ts
// kills the gateway right after the acquirer reports a successful charge and
// before the gateway applies it; test/payments/tbank-gateway-crash.test.ts and
// test/payments/yookassa/yookassa-gateway-crash.test.ts right after an
// acquirer's notification was confirmed and before it is applied). The hook
// is a dependency given at start: production gives none, and the points do
// nothing.
type CrashPoint = 'after_acquirer_success' | 'after_notification_confirmed';

/** Called at every crash point the process reaches. */
export type CrashPointHook = (point: CrashPoint) => void;
