// Starts the example shop: `npm start -w paygate-example-shop` with PAYGATE_URL,
// PAYGATE_API_KEY and PAYGATE_WEBHOOK_SECRET (a sandbox shop's), and optionally
// PORT (3000) and SHOP_PUBLIC_URL (where the gateway reaches this shop).
import { Paygate } from '@paygate/node';
import { createShop } from './shop.ts';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`${name} is required`);
    process.exit(2);
  }
  return value;
}

const port = Number(process.env.PORT ?? 3000);
const shop = createShop({
  paygate: new Paygate({ baseUrl: required('PAYGATE_URL'), apiKey: required('PAYGATE_API_KEY') }),
  webhookSecret: required('PAYGATE_WEBHOOK_SECRET'),
  publicUrl: process.env.SHOP_PUBLIC_URL ?? `http://127.0.0.1:${port}`,
});
await shop.listen({ host: '127.0.0.1', port });
console.log(`example shop on http://127.0.0.1:${port}`);
