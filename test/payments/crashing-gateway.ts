// A test-only gateway process: `paygate serve --role all` with a crash-point hook
// that kills the process (SIGKILL, as kill -9 would) when it reaches the point
// named by its first argument. test/payments/charge-crash.test.ts and the
// acquirers' gateway crash tests start it.
import { loadConfig } from '../../src/config.ts';
import { startGateway } from '../../src/runtime.ts';

const point = process.argv[2];
const gateway = await startGateway(loadConfig(process.env), {
  role: 'all',
  crashPoint: (reached) => {
    if (reached === point) process.kill(process.pid, 'SIGKILL');
  },
});
process.stdout.write(`paygate listening on ${gateway.url} (role all, database ${gateway.context.backend})\n`);
process.once('SIGTERM', () => void gateway.stop());
