import { invalidFilter } from '../errors.ts';
import type { Endpoint } from '../engine/types.ts';

/** The v3.0 endpoint names, exactly as the seed lists them. */
export const V3_ENDPOINTS = ['assetqueue', 'assetreminders', 'assets', 'auditlog', 'companies', 'departments', 'endpoints',
  'externaltypes', 'files', 'locations', 'login', 'logout', 'messages', 'password', 'upload', 'users'] as const;

const LIST = JSON.stringify(V3_ENDPOINTS);

export const endpointsEndpoint: Endpoint = {
  name: 'endpoints',
  access: { GET: 'readonly' },
  handlers: {
    async GET(c) {
      if (c.segments.length > 0) throw invalidFilter(c.segments[0]!);
      return { response: LIST, pagination: { total_pages: 0, total_records: 0 } };
    },
  },
};
