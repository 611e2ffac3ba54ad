// TEST-ONLY crash point. `PAYGATE_TEST_CRASH_POINT=after_acquirer_success`, read
// once at start, makes the process kill -9 itself right after the acquirer
// reports a successful charge and before the gateway applies it, so a test can
// prove that such a charge is still recorded and paid (test/payments/
// charge-crash.test.ts). Never set it in production.
const configuredPoint = process.env.PAYGATE_TEST_CRASH_POINT;

export type CrashPoint = 'after_acquirer_success';

export function crashPoint(point: CrashPoint): void {
  if (configuredPoint === point) process.kill(process.pid, 'SIGKILL');
}
