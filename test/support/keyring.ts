// The root key every test uses, in-process and in the gateway child processes
// the tests start (test/support/cli.ts passes it as PAYGATE_ROOT_KEY), so a
// secret sealed by one opens in the other. A test value, never a real key.
import { createKeyring, rootKeyFromBase64 } from '../../src/kms/keyring.ts';

export const TEST_ROOT_KEY = 'dGVzdC1yb290LWtleS1mb3ItcGF5Z2F0ZS10ZXN0cyE=';

export const testKeyring = createKeyring(rootKeyFromBase64(TEST_ROOT_KEY, 'the test root key'));
