// The list routes' shared parts: what each reads from its query string before
// its own filters (the page size, DEFAULT_PAGE_LIMIT when not given, and the
// cursor that names where the page starts; db/list-cursor.ts), and the route
// options of a list answered one page at a time.
import type { TSchema } from 'typebox';
import type { ErrorCode } from '../errors.ts';
import type { ApiKeyScope } from './api-scopes.ts';
import { AUTHENTICATED_ROUTE_ERRORS, errorResponses } from './error-responses.ts';

export const DEFAULT_PAGE_LIMIT = 20;

export interface PageRequest {
  readonly limit: number;
  readonly cursor: string | undefined;
}

export function pageRequest(query: {
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}): PageRequest {
  return { limit: query.limit ?? DEFAULT_PAGE_LIMIT, cursor: query.cursor };
}

export interface ListRoute<Query extends TSchema, Page extends TSchema> {
  readonly scopes: readonly ApiKeyScope[];
  readonly operationId: string;
  readonly tag: string;
  readonly summary: string;
  readonly querystring: Query;
  readonly page: Page;
  /** Errors beside those of every authenticated route and 403. */
  readonly errors?: readonly ErrorCode[];
}

export function listRouteOptions<Query extends TSchema, Page extends TSchema>(route: ListRoute<Query, Page>) {
  return {
    config: { scopes: route.scopes },
    schema: {
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      querystring: route.querystring,
      response: {
        200: route.page,
        ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', ...(route.errors ?? [])),
      },
    },
  };
}
