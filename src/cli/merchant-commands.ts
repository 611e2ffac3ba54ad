import { parseArgs } from 'node:util';
import {
  createApiKey,
  createShop,
  parseScopes,
  revokeApiKey,
  type CreatedMerchant,
} from '../merchants/merchant-service.ts';
import { operatorNamed, recordAudit } from '../audit/audit-service.ts';
import { createMerchantWithOwner } from '../cabinet/users/user-service.ts';
import { CliUsageError, operatorName, type CliCommand, type CliIo } from './cli-command.ts';
import { withCliContext } from './database-command.ts';

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new CliUsageError(`${flag} is required`);
  return value;
}

/** A new shop's credentials, shown once: as one JSON line, or as a headline and the two secrets. */
function printCreated(io: CliIo, created: CreatedMerchant, json: boolean, headline: string): void {
  if (json) {
    io.out(JSON.stringify(created));
    return;
  }
  io.out(headline);
  io.out(`API key (shown once): ${created.api_key}`);
  io.out(`webhook secret: ${created.webhook_secret}`);
}

export const merchantCreateCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        name: { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        live: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    const name = required(values.name, '--name');
    const email = required(values.email, '--email');
    const mode = values.live ? 'live' : 'sandbox';
    const created = await withCliContext(config, (context) =>
      createMerchantWithOwner(context, { name, email, password: values.password, mode }, (tx, merchantId) =>
        recordAudit(tx, context.clock, {
          actor: operatorNamed(operatorName()),
          action: 'merchant.created',
          merchantId,
          target: merchantId,
          details: { name: name.trim(), email: email.trim(), mode, owner: values.password !== undefined },
        }),
      ),
    );
    printCreated(
      io,
      created,
      values.json,
      `merchant ${created.merchant_id}, shop ${created.shop_id} (${values.live ? 'live' : 'sandbox'})`,
    );
    if (created.owner_user_id && !values.json)
      io.out(`cabinet owner: ${email} signs in at ${config.publicUrl}/cabinet`);
    return 0;
  },
};

export const shopCreateCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        merchant: { type: 'string' },
        name: { type: 'string' },
        live: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    const merchantId = required(values.merchant, '--merchant');
    const mode = values.live ? 'live' : 'sandbox';
    const created = await withCliContext(config, (context) =>
      createShop(context, { merchantId, name: values.name, mode, actor: operatorNamed(operatorName()) }),
    );
    printCreated(io, created, values.json, `shop ${created.shop_id} (${mode}) of merchant ${created.merchant_id}`);
    return 0;
  },
};

export const keyCreateCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        shop: { type: 'string' },
        scopes: { type: 'string' },
        name: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const shopId = required(values.shop, '--shop');
    const scopesText = required(values.scopes, '--scopes');
    let scopes;
    try {
      scopes = parseScopes(scopesText);
    } catch (error) {
      throw new CliUsageError(`--scopes: ${(error as Error).message}`);
    }
    const key = await withCliContext(config, (context) =>
      createApiKey(context, shopId, scopes, { name: values.name, actor: operatorNamed(operatorName()) }),
    );
    io.out(values.json ? JSON.stringify(key) : `key ${key.key_id} (shown once): ${key.api_key}`);
    return 0;
  },
};

export const keyRevokeCommand: CliCommand = {
  async run(args, io, config) {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
    if (positionals.length !== 1) throw new CliUsageError('give exactly one KEY_ID');
    const keyId = positionals[0]!;
    await withCliContext(config, (context) => revokeApiKey(context, keyId, { actor: operatorNamed(operatorName()) }));
    io.out(`revoked ${keyId}`);
    return 0;
  },
};
