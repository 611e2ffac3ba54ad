// The cabinet's stylesheet and script, served under names that carry their content
// hash, so a browser may keep them for a year: a changed file gets a new name.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

interface Asset {
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
}

function loadAsset(file: string, contentType: string): Asset {
  const body = readFileSync(new URL(file, import.meta.url));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const [base, extension] = file.split('.') as [string, string];
  return { path: `/cabinet/assets/${base}.${hash}.${extension}`, contentType, body };
}

export const CABINET_ASSETS = {
  stylesheet: loadAsset('cabinet.css', 'text/css; charset=utf-8'),
  script: loadAsset('cabinet.js', 'text/javascript; charset=utf-8'),
} as const;

export function installAssetRoutes(app: FastifyInstance): void {
  for (const asset of Object.values(CABINET_ASSETS)) {
    app.get(asset.path, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .header('content-type', asset.contentType)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .send(asset.body),
    );
  }
}
