// Checks every response a test receives against the app's own OpenAPI document:
// the status must be one the operation lists and the body must match that
// status's schema. Every Fastify app built in a test process gets the check
// through Fastify's `fastify.initialization` diagnostics channel, so production
// code carries none of it. Violations are collected here; the setup file
// (openapi-conformance-setup.ts) fails the test that caused them.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import diagnostics from 'node:diagnostics_channel';

interface MediaType {
  schema?: object;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface Operation {
  responses?: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>;
}

/** The body schemas of a document, compiled once. */
export class ResponseContract {
  readonly #document: OpenApiDocument;
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  readonly #validators = new Map<object, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    this.#document = document;
    addFormats.default(this.#ajv);
  }

  /** The problem with this response, or undefined when the document allows it. */
  problemWith(
    method: string,
    routeUrl: string,
    status: number,
    contentType: string | undefined,
    body: string | undefined,
  ): string | undefined {
    const path = routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const where = `${method} ${path}`;
    const operation = this.#document.paths?.[path]?.[method.toLowerCase()];
    if (!operation) return `${where} answered ${status}, but the document has no such operation`;
    const response =
      operation.responses?.[String(status)] ??
      operation.responses?.[`${String(status)[0]}XX`] ??
      operation.responses?.default;
    if (!response)
      return `${where} answered ${status}, which the document does not list (it lists ${Object.keys(operation.responses ?? {}).join(', ')})`;
    const schema = response.content?.['application/json']?.schema;
    // A documented non-JSON body (an SVG image) is checked for its media type only.
    const otherMediaType = Object.keys(response.content ?? {}).find((type) => type !== 'application/json');
    if (!schema && otherMediaType)
      return contentType?.startsWith(otherMediaType)
        ? undefined
        : `${where} ${status} answered ${contentType ?? 'no content type'}, not ${otherMediaType}`;
    if (!schema) return body ? `${where} ${status} has a body, but the document describes none` : undefined;
    if (!contentType?.startsWith('application/json'))
      return `${where} ${status} answered ${contentType ?? 'no content type'}, not JSON`;
    let value: unknown;
    try {
      value = JSON.parse(body ?? '');
    } catch {
      return `${where} ${status} answered a body that is not JSON`;
    }
    const validate = this.#validator(schema);
    if (validate(value)) return undefined;
    const errors = (validate.errors ?? [])
      .slice(0, 5)
      .map((error) => `${error.instancePath || '(body)'} ${error.message ?? ''}`);
    return `${where} ${status} body does not match the document: ${errors.join('; ')}; body: ${(body ?? '').slice(0, 300)}`;
  }

  #validator(schema: object): ValidateFunction {
    let validate = this.#validators.get(schema);
    if (!validate) {
      validate = this.#ajv.compile(schema);
      this.#validators.set(schema, validate);
    }
    return validate;
  }
}

const violations: string[] = [];
let responsesChecked = 0;
// Apps of one test process serve the same document; compile it once per distinct text.
const contractsByText = new Map<string, ResponseContract>();
const contractsByDocument = new WeakMap<object, ResponseContract>();

function contractOf(document: OpenApiDocument): ResponseContract {
  let contract = contractsByDocument.get(document);
  if (!contract) {
    const text = JSON.stringify(document.paths);
    contract = contractsByText.get(text) ?? new ResponseContract(document);
    contractsByText.set(text, contract);
    contractsByDocument.set(document, contract);
  }
  return contract;
}

function bodyText(payload: unknown): string | undefined {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined;
}

function checkResponse(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
  const routeUrl = request.routeOptions.url;
  // No route matched (the not-found handler), or an app without a document (a test's webhook receiver).
  // HEAD is Fastify's automatic twin of a GET and has no body to check.
  if (routeUrl === undefined || request.method === 'HEAD') return;
  const server = request.server as FastifyInstance & { swagger?: () => unknown };
  if (typeof server.swagger !== 'function') return;
  const document = server.swagger() as OpenApiDocument;
  const path = routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  // Routes outside /v1 that the document leaves out (health, metrics, the payment page) are not API operations.
  if (!routeUrl.startsWith('/v1/') && !document.paths?.[path]) return;
  responsesChecked += 1;
  const contentType = reply.getHeader('content-type');
  const problem = contractOf(document).problemWith(
    request.method,
    routeUrl,
    reply.statusCode,
    typeof contentType === 'string' ? contentType : undefined,
    bodyText(payload),
  );
  if (problem) violations.push(problem);
}

function onFastifyCreated(message: unknown): void {
  const { fastify } = message as { fastify: FastifyInstance };
  fastify.addHook('onSend', async (request, reply, payload) => {
    checkResponse(request, reply, payload);
    return payload;
  });
}

/** Starts checking every Fastify app created from now on; returns the function that stops it. */
export function checkResponsesOfNewApps(): () => void {
  diagnostics.subscribe('fastify.initialization', onFastifyCreated);
  return () => diagnostics.unsubscribe('fastify.initialization', onFastifyCreated);
}

/** The violations recorded since the last call, which are forgotten. */
export function takeViolations(): string[] {
  return violations.splice(0, violations.length);
}

export function responsesCheckedCount(): number {
  return responsesChecked;
}
