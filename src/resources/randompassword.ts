import { randomPassword } from '../auth/passwords.ts';
import { invalidFilter } from '../errors.ts';
import type { Endpoint } from '../engine/types.ts';

/** GET /3.0/randompassword → `[{"randompassword": "<16 chars>"}]`. */
export const randompasswordEndpoint: Endpoint = {
  name: 'randompassword',
  access: { GET: 'readonly' },
  handlers: {
    async GET(c) {
      if (c.segments.length > 0) throw invalidFilter(c.segments[0]!);
      return { response: `[{"randompassword":${JSON.stringify(randomPassword())}}]`, pagination: { total_pages: 1, total_records: 1 } };
    },
  },
};
