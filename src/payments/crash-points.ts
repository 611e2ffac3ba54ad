// Points on the charge path where a test may stop the process dead, to prove
// that what was written before survives (test/payments/charge-crash.test.ts
// kills the gateway right after the acquirer reports a successful charge and
// before the gateway applies it). The hook is a dependency given at start:
// production gives none, and the points do nothing.
type CrashPoint = 'after_acquirer_success';

/** Called at every crash point the process reaches. */
export type CrashPointHook = (point: CrashPoint) => void;
