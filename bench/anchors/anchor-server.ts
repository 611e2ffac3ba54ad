// The anchor routes, started as their own process like the gateway:
//   POST /anchor/payments      JSON-schema-validated body, one INSERT … RETURNING
//   GET  /anchor/payments/:id  one SELECT by primary key
// Nothing else: no authentication, no idempotency, no logging. This is what the
// bare stack (Fastify 5 + `pg` Pool of 20, or Fastify 5 + PGlite) does for the
// same row; the gateway's routes are measured against it.
//   ANCHOR_DATABASE_URL=postgres://… (pool ANCHOR_POOL_SIZE, default 20), or
//   ANCHOR_PGLITE_DIR=/path (a bare PGlite data folder).
// Prints "anchor listening on <url>" when ready; SIGTERM closes it.
import { randomBytes, randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { ANCHOR_INSERT, ANCHOR_SELECT } from './anchor-schema.ts';
import { openPGliteStore, openPostgresStore, type AnchorStore } from './anchor-store.ts';

const Payment = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    order_code: { type: 'string' },
    status: { type: 'string' },
    amount_kopecks: { type: 'string' },
    currency: { type: 'string' },
    method: { type: ['string', 'null'] },
    order_id: { type: ['string', 'null'] },
    callback_url: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time' },
  },
} as const;

const CreateBody = {
  type: 'object',
  required: ['amount', 'currency'],
  additionalProperties: false,
  properties: {
    amount: { type: 'number', minimum: 1, maximum: 1_000_000 },
    currency: { type: 'string', enum: ['RUB'] },
    method: { type: ['string', 'null'], enum: ['card', 'sbp', 'sberpay', null] },
    callback_url: { type: ['string', 'null'], maxLength: 2048 },
    order_id: { type: ['string', 'null'], maxLength: 255 },
  },
} as const;

interface CreateRequest {
  amount: number;
  currency: string;
  method?: string | null;
  callback_url?: string | null;
  order_id?: string | null;
}

async function openStore(): Promise<AnchorStore> {
  const url = process.env.ANCHOR_DATABASE_URL;
  if (url) return openPostgresStore(url, Number(process.env.ANCHOR_POOL_SIZE ?? 20));
  const dataDir = process.env.ANCHOR_PGLITE_DIR;
  if (!dataDir) throw new Error('set ANCHOR_DATABASE_URL or ANCHOR_PGLITE_DIR');
  return openPGliteStore(dataDir);
}

const store = await openStore();
const app = Fastify({ logger: false });

app.post<{ Body: CreateRequest }>(
  '/anchor/payments',
  { schema: { body: CreateBody, response: { 201: Payment } } },
  async (request, reply) => {
    const body = request.body;
    const [row] = await store.query(ANCHOR_INSERT, [
      randomUUID(),
      randomBytes(8).toString('base64url').slice(0, 10),
      String(body.amount),
      body.currency,
      body.method ?? null,
      body.order_id ?? null,
      body.callback_url ?? null,
    ]);
    return reply.code(201).send(row);
  },
);

app.get<{ Params: { id: string } }>(
  '/anchor/payments/:id',
  {
    schema: {
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
      response: { 200: Payment },
    },
  },
  async (request, reply) => {
    const [row] = await store.query(ANCHOR_SELECT, [request.params.id]);
    if (!row) return reply.code(404).send({ error: 'not_found' });
    return row;
  },
);

const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`anchor listening on ${url}\n`);

process.once('SIGTERM', () => {
  void app
    .close()
    .then(() => store.close())
    .then(() => process.exit(0));
});
