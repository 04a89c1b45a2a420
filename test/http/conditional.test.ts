// Conditional GET: every GET answer carries a weak ETag over its
// `response` and `pagination`; `If-None-Match` with it (or `*`) gets 304 and no
// body; any change to what the answer shows changes the tag.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestClient } from '../support/client.ts';
import { DB_KINDS, type Service } from '../support/harness.ts';
import { buildTenancy } from '../support/factories.ts';
import { create, expectOk, stop } from './resources-support.ts';

const WEAK = /^W\/"[A-Za-z0-9_-]{27}"$/;

for (const kind of DB_KINDS) {
  describe(`conditional GET (${kind})`, () => {
    let svc: Service;
    let api: TestClient;
    let id: number;

    before(async () => {
      ({ svc, api } = await buildTenancy(kind));
      for (let i = 0; i < 31; i++) id = await create(api, 'locations', { description: `L${i}` });
    });
    after(() => stop(svc));

    const tagOf = async (path: string) => {
      const r = await api.get(path);
      assert.equal(r.status, 200, r.text);
      assert.match(String(r.headers.etag), WEAK);
      return String(r.headers.etag);
    };

    it('the same answer has the same tag; another page, filter or order another', async () => {
      const tag = await tagOf('/3.0/locations');
      assert.equal(await tagOf('/3.0/locations'), tag);
      const others = [await tagOf('/3.0/locations/page=2'), await tagOf(`/3.0/locations/id=${id}`), await tagOf('/3.0/endpoints')];
      assert.equal(new Set([tag, ...others]).size, 4);
      // The envelope's request block (its timestamp) is not in the hash: a second later the tag holds.
      svc.clock.advance(5_000);
      assert.equal(await tagOf('/3.0/locations'), tag);
    });

    it('If-None-Match with the tag, the tag without W/, in a list, or * → 304 without a body; another tag → 200', async () => {
      const tag = await tagOf(`/3.0/locations/id=${id}`);
      for (const sent of [tag, tag.slice(2), `"nope", ${tag}`, '*']) {
        const r = await api.get(`/3.0/locations/id=${id}`, { headers: { 'if-none-match': sent } });
        assert.equal(r.status, 304, sent);
        assert.equal(r.text, '');
        assert.equal(r.headers.etag, tag);
        assert.equal(r.headers['content-type'], undefined);
      }
      const r = await api.get(`/3.0/locations/id=${id}`, { headers: { 'if-none-match': 'W/"other"' } });
      assert.equal(r.status, 200);
      assert.equal(r.headers.etag, tag);
      const head = await api.request('HEAD', `/3.0/locations/id=${id}`);
      assert.equal(head.headers.etag, tag);
      const headAgain = await api.request('HEAD', `/3.0/locations/id=${id}`, { headers: { 'if-none-match': tag } });
      assert.deepEqual([headAgain.status, headAgain.headers.etag], [304, tag]);
    });

    it('a change to a listed record, or to the total, changes the tag', async () => {
      const tag = await tagOf('/3.0/locations/page=2');
      expectOk(await api.post(`/3.0/locations/id=${id}`, { description: 'changed' }));
      const changed = await tagOf('/3.0/locations/page=2');
      assert.notEqual(changed, tag);
      const r = await api.get('/3.0/locations/page=2', { headers: { 'if-none-match': tag } });
      assert.equal(r.status, 200);
      await create(api, 'locations', { description: 'one more' });
      assert.notEqual(await tagOf('/3.0/locations/page=2'), changed);
    });

    it('a CSV answer carries no tag, and If-None-Match does not turn it into a 304', async () => {
      const csv = await api.get('/3.0/locations', { headers: { accept: 'text/csv', 'if-none-match': '*' } });
      assert.equal(csv.status, 200);
      assert.equal(csv.headers['content-type'], 'text/csv; charset=utf-8');
      assert.equal(csv.headers.etag, undefined);
    });

    it('writes and refusals carry no tag, and If-None-Match changes nothing about them', async () => {
      const put = await api.put('/3.0/locations', { description: 'new' }, { headers: { 'if-none-match': '*' } });
      assert.equal(put.status, 201);
      assert.equal(put.headers.etag, undefined);
      const refused = await api.get('/3.0/locations/nosuch=1', { headers: { 'if-none-match': '*' } });
      assert.equal(refused.status, 400);
      assert.equal(refused.headers.etag, undefined);
    });
  });
}
