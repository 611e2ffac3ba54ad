// `paygate kms generate-key` prints a new root key; `paygate kms rotate`
// re-wraps every sealed secret's data key under the current root key, after
// which the keys in PAYGATE_ROOT_KEYS_PREVIOUS can be removed (docs/security.md).
import { parseArgs } from 'node:util';
import { generateRootKey } from '../kms/keyring.ts';
import { rewrapSigningKeys } from '../crypto/keys/sealed-signing-keys.ts';
import { rewrapWebhookSecrets } from '../webhooks/webhook-secrets.ts';
import type { CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';

export const kmsGenerateKeyCommand: CliCommand = {
  words: ['kms', 'generate-key'],
  runsLocally: true,
  usage: 'paygate kms generate-key',
  summary: 'Print a new random root key (base64) for PAYGATE_ROOT_KEY or a PAYGATE_ROOT_KEY_FILE',
  async run(args, io) {
    parseArgs({ args, options: {} });
    io.out(generateRootKey());
    return 0;
  },
};

export const kmsRotateCommand: CliCommand = {
  words: ['kms', 'rotate'],
  usage: 'paygate kms rotate',
  summary: 'Re-wrap every stored secret under the current root key (run after moving the old key to PAYGATE_ROOT_KEYS_PREVIOUS)',
  async run(args, io, config) {
    parseArgs({ args, options: {} });
    const { rewrapped, signingKeys, keyId } = await withCliContext(config, async (context) => ({
      rewrapped: await rewrapWebhookSecrets(context.db, context.keyring),
      signingKeys: await rewrapSigningKeys(context),
      keyId: context.keyring.current.id,
    }));
    io.out(`re-wrapped the secrets of ${rewrapped} shop(s) under root key ${keyId}`);
    io.out(`re-wrapped ${signingKeys} sealed signing key(s) under root key ${keyId}`);
    io.out('every stored secret is now wrapped by the current root key; PAYGATE_ROOT_KEYS_PREVIOUS can be emptied');
    return 0;
  },
};
