// GET /v1/account answers every key, whatever its scopes: it only says who the key is.
import { scopeMatrix, type RouteCall } from '../support/scope-matrix.ts';

const calls: Record<string, RouteCall> = {
  'GET /v1/account': { request: async () => ({ url: '/v1/account' }), successStatus: 200 },
};

scopeMatrix('merchants', calls);
