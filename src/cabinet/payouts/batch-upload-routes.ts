// A batch payout from a CSV file (payouts.create, a money action with step-up):
// the file (multipart, at most 128 KB of UTF-8, header `external_id,amount,address`,
// 1 to 500 rows) is checked row by row before anything is created — each
// problem shown with its line, field and message; a file that passes shows the
// total debit, and "create" makes the batch all or nothing through the payouts
// module, as POST /v1/crypto/payouts/batch does (audited `payout_batch.requested`).
// The confirmation carries the file itself back (base64) under the batch's
// external_id, so it creates exactly what was checked, once.
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BatchItemProblem } from '../../crypto/payouts/batch-service.ts';
import { usdtText } from '../../crypto/receiving/receiving-views.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { actorOf, cabinetOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetModuleDeps } from '../cabinet-context.ts';
import { html, type View } from '../views/html.ts';
import { CsrfField } from '../views/layout.ts';
import type { Lang } from '../views/cabinet-language.ts';
import { BATCH_FILE_BYTES_MAX, readBatchFile, type BatchFileRow, type RowProblem } from './payout-csv.ts';
import { CREATE, freshExternalId, refusalOf } from './payout-form-routes.ts';
import { payoutText as text } from './payout-listings.ts';

const EXTERNAL_ID_FIELD_MAX = 100;

/** The form fields of an upload or a confirmation, as the multipart body holds them. */
function uploadOf(body: unknown): { file: Uint8Array | undefined; externalId: string } {
  const fields = (body ?? {}) as Record<string, unknown>;
  const externalId = typeof fields.external_id === 'string' ? fields.external_id.trim() : '';
  const file = fields.file;
  if (Buffer.isBuffer(file)) return { file, externalId };
  const encoded = fields.csv_base64;
  if (typeof encoded === 'string' && encoded !== '') return { file: Buffer.from(encoded, 'base64'), externalId };
  return { file: undefined, externalId };
}

function shopOfPayouts(shop: ShopProfile) {
  return { shopId: shop.shopId, merchantId: shop.merchantId, mode: shop.mode };
}

export async function installBatchUpload(
  app: FastifyInstance,
  deps: CabinetModuleDeps,
  http: CabinetHttpDeps,
): Promise<void> {
  // Only this area's routes take multipart bodies; a file one byte over the limit is cut there and refused here.
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    throwFileSizeLimit: false,
    limits: {
      fileSize: BATCH_FILE_BYTES_MAX + 1,
      files: 1,
      fields: 5,
      fieldSize: Math.ceil((BATCH_FILE_BYTES_MAX * 4) / 3) + 8,
      parts: 6,
    },
  });
  const base = (shopId: string) => `/cabinet/shops/${shopId}/payouts/batches`;

  async function sendUploadForm(
    request: FastifyRequest,
    reply: FastifyReply,
    props: { externalId: string; refusal?: string; problems?: readonly RowProblem[] },
  ) {
    const { lang, session } = cabinetOf(request);
    const shop = shopOf(request);
    const failed = props.refusal !== undefined || props.problems !== undefined;
    return sendPage(request, reply, http, {
      status: failed ? 400 : 200,
      title: `${text(lang, 'upload_batch')} · ${shop.name}`,
      notice: props.refusal
        ? { kind: 'error', text: props.refusal }
        : props.problems
          ? { kind: 'error', text: text(lang, 'rows_refused') }
          : undefined,
      children: html`
        <p><a href=${base(shop.shopId)}>${text(lang, 'all_batches')}</a></p>
        <h1>${text(lang, 'upload_batch')}</h1>
        ${props.problems ? ProblemTable({ lang, problems: props.problems }) : null}
        ${UploadForm({
          lang,
          action: `${base(shop.shopId)}/upload`,
          csrf: session!.csrf_token,
          externalId: props.externalId || freshExternalId('batch'),
        })}
      `,
    });
  }

  app.get('/cabinet/shops/:shopId/payouts/batches/upload', CREATE, async (request, reply) =>
    sendUploadForm(request, reply, { externalId: '' }),
  );

  /** The file's rows, or the page that refuses it (sent). */
  async function checkedRows(
    request: FastifyRequest,
    reply: FastifyReply,
    upload: { file: Uint8Array | undefined; externalId: string },
  ): Promise<{ rows: readonly BatchFileRow[]; totalDebitMicro: bigint } | FastifyReply> {
    const { lang } = cabinetOf(request);
    const shop = shopOf(request);
    const externalId = upload.externalId.slice(0, EXTERNAL_ID_FIELD_MAX + 1);
    if (!upload.file || upload.file.length === 0)
      return sendUploadForm(request, reply, {
        externalId,
        refusal: `${text(lang, 'file_refused')} ${text(lang, 'no_file')}`,
      });
    const reading = readBatchFile(upload.file);
    if (reading.kind === 'refused') {
      const detail = reading.detail ? ` ${reading.detail}` : '';
      return sendUploadForm(request, reply, {
        externalId,
        refusal: `${text(lang, 'file_refused')} ${text(lang, reading.reason)}${detail}`,
      });
    }
    let review;
    try {
      review = await deps.payouts.review(shopOfPayouts(shop), reading.rows);
    } catch (error) {
      return sendUploadForm(request, reply, {
        externalId,
        refusal: `${text(lang, 'file_refused')} ${refusalOf(error)}`,
      });
    }
    // A row without its three fields is shown once, as that; its empty fields say nothing more.
    const shapeless = new Set(reading.problems.map((problem) => problem.line));
    const problems = [
      ...reading.problems.map((problem) => ({ ...problem, message: text(lang, 'wrong_columns') })),
      ...(review.ok ? [] : review.problems.map((problem) => rowProblem(reading.rows, problem))).filter(
        (problem) => !shapeless.has(problem.line),
      ),
    ].sort((a, b) => a.line - b.line);
    if (problems.length > 0 || !review.ok) return sendUploadForm(request, reply, { externalId, problems });
    return { rows: reading.rows, totalDebitMicro: review.totalDebitMicro };
  }

  app.post('/cabinet/shops/:shopId/payouts/batches/upload', CREATE, async (request, reply) => {
    const { lang, session } = cabinetOf(request);
    const shop = shopOf(request);
    const upload = uploadOf(request.body);
    const checked = await checkedRows(request, reply, upload);
    if (!('rows' in checked)) return checked;
    return sendPage(request, reply, http, {
      title: `${text(lang, 'batch_preview')} · ${shop.name}`,
      children: BatchPreview({
        lang,
        base: base(shop.shopId),
        csrf: session!.csrf_token,
        externalId: upload.externalId,
        file: Buffer.from(upload.file!).toString('base64'),
        rows: checked.rows,
        totalDebitMicro: checked.totalDebitMicro,
      }),
    });
  });

  app.post('/cabinet/shops/:shopId/payouts/batches', CREATE, async (request, reply) => {
    const { lang } = cabinetOf(request);
    const shop = shopOf(request);
    const upload = uploadOf(request.body);
    // The file checked at the preview, back again: createBatch judges it as the API would (a repeat
    // of the batch's external_id with the same rows is the batch created first).
    const reading = upload.file ? readBatchFile(upload.file) : ({ kind: 'refused', reason: 'no_file' } as const);
    if (reading.kind === 'refused' || reading.problems.length > 0)
      return sendUploadForm(request, reply, {
        externalId: upload.externalId,
        refusal: `${text(lang, 'file_refused')} ${text(lang, reading.kind === 'refused' ? reading.reason : 'wrong_columns')}`,
      });
    const checked = { rows: reading.rows };
    let outcome;
    try {
      outcome = await deps.payouts.createBatch(
        shopOfPayouts(shop),
        {
          external_id: upload.externalId,
          network: 'TRC20',
          payouts: checked.rows.map(({ external_id, amount, address }) => ({ external_id, amount, address })),
        },
        { actor: actorOf(request) },
      );
    } catch (error) {
      return sendUploadForm(request, reply, { externalId: upload.externalId, refusal: refusalOf(error) });
    }
    const done = outcome.created ? 'created' : 'repeated';
    return redirectTo(reply, `${base(shop.shopId)}/${outcome.batch.batch_id}?done=${done}`);
  });
}

function rowProblem(rows: readonly BatchFileRow[], problem: BatchItemProblem): RowProblem {
  return { line: rows[problem.index]?.line ?? problem.index + 2, field: problem.field, message: problem.message };
}

function UploadForm(props: { lang: Lang; action: string; csrf: string; externalId: string }): View {
  const { lang } = props;
  return html`<form method="post" action=${props.action} enctype="multipart/form-data" class="card">
    ${CsrfField({ token: props.csrf })}
    <p class="muted">${text(lang, 'upload_intro')}</p>
    <label for="batch-file">${text(lang, 'csv_file')}</label>
    <input id="batch-file" name="file" type="file" accept=".csv,text/csv" required />
    <label for="batch-external-id">${text(lang, 'batch_external_id')}</label>
    <input
      id="batch-external-id"
      name="external_id"
      type="text"
      required
      maxlength="100"
      value=${props.externalId}
      aria-describedby="batch-external-id-hint"
    />
    <p id="batch-external-id-hint" class="muted">${text(lang, 'external_id_hint')}</p>
    <div class="actions"><button type="submit">${text(lang, 'check_file')}</button></div>
  </form>`;
}

function ProblemTable(props: { lang: Lang; problems: readonly RowProblem[] }): View {
  const { lang } = props;
  return html`<section class="card" aria-labelledby="batch-problems">
    <h2 id="batch-problems">${text(lang, 'rows_refused')}</h2>
    <div class="table-wrap">
      <table class="batch-problems">
        <thead>
          <tr>
            <th scope="col">${text(lang, 'row')}</th>
            <th scope="col">${text(lang, 'field')}</th>
            <th scope="col">${text(lang, 'problem')}</th>
          </tr>
        </thead>
        <tbody>
          ${props.problems.map(
            (problem) =>
              html`<tr data-line=${problem.line}>
                <td>${problem.line}</td>
                <td>${problem.field ? html`<code>${problem.field}</code>` : '—'}</td>
                <td>${problem.message}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

function BatchPreview(props: {
  lang: Lang;
  base: string;
  csrf: string;
  externalId: string;
  file: string;
  rows: readonly BatchFileRow[];
  totalDebitMicro: bigint;
}): View {
  const { lang } = props;
  return html`
    <p><a href=${props.base}>${text(lang, 'all_batches')}</a></p>
    <h1>${text(lang, 'batch_preview')}</h1>
    <section class="card">
      <p class="muted">${text(lang, 'batch_preview_intro')}</p>
      <dl class="facts">
        <dt>${text(lang, 'batch_external_id')}</dt>
        <dd>${props.externalId}</dd>
        <dt>${text(lang, 'col_items')}</dt>
        <dd data-preview="items">${props.rows.length}</dd>
        <dt>${text(lang, 'col_total_debit')}</dt>
        <dd data-preview="total_debit"><strong>${usdtText(props.totalDebitMicro)}</strong></dd>
      </dl>
      <form method="post" action=${props.base} enctype="multipart/form-data">
        ${CsrfField({ token: props.csrf })}
        <input type="hidden" name="external_id" value=${props.externalId} />
        <input type="hidden" name="csv_base64" value=${props.file} />
        <div class="actions">
          <button type="submit">${text(lang, 'create_batch')}</button>
          <a class="button secondary" href=${`${props.base}/upload`}>${text(lang, 'change')}</a>
        </div>
      </form>
    </section>
    <section class="card">
      <h2>${text(lang, 'items')}</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">${text(lang, 'row')}</th>
              <th scope="col">${text(lang, 'col_external_id')}</th>
              <th scope="col">${text(lang, 'col_amount')}</th>
              <th scope="col">${text(lang, 'col_address')}</th>
            </tr>
          </thead>
          <tbody>
            ${props.rows.map(
              (row) =>
                html`<tr>
                  <td>${row.line}</td>
                  <td>${row.external_id}</td>
                  <td>${row.amount}</td>
                  <td><code>${row.address}</code></td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </section>
  `;
}
