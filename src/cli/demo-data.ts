// The demo company tree and its sample records, written through the engine as
// the demo certificate, exactly as API calls would write them.
import { sql } from 'kysely';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addClient, addCompany, addUser, setPassword } from '../admin/accounts.ts';
import { randomPassword } from '../auth/passwords.ts';
import type { Database } from '../db/database.ts';
import { DEFAULT_LIMITS } from '../engine/context.ts';
import { updateRecords } from '../engine/update.ts';
import { createRecords } from '../engine/write.ts';
import { parseQuery, pathFilters } from '../engine/query.ts';
import { addDays, formatDate, type Clock } from '../model/dates.ts';
import type { JsonObject } from '../model/json.ts';
import { parseJson } from '../model/json.ts';
import type { Row } from '../model/types.ts';
import { runReminders } from '../jobs/reminders.ts';
import { files } from '../resources/files.ts';
import { attachContent } from '../resources/upload.ts';
import { BlobStore } from '../storage/blobs.ts';
import { addDemoChecks } from './demo-checks.ts';
import { certificatePdf } from './demo-pdf.ts';
import { assetqueue } from '../resources/assetqueue.ts';
import { assets } from '../resources/assets.ts';
import { companies } from '../resources/companies.ts';
import { departments, locations } from '../resources/departments.ts';
import { externaltypes } from '../resources/externaltypes.ts';
import { messages } from '../resources/messages.ts';
import { createRegistry } from '../resources/registry.ts';
import { writeClientCert } from './cert.ts';
import type { Ctx, Resource } from '../engine/types.ts';

/** The demo's impersonation login; its password is made when the demo is, and kept beside the demo certificate's key. */
export const DEMO_USER = 'demo.admin';
export const demoPasswordFile = (dataDir: string) => join(dataDir, 'demo', 'admin-password');

export interface Demo {
  readonly clientId: number;
  /** The upload token of the demo's calibration certificate. */
  readonly fileToken: string;
  readonly certDir: string;
  /** The demo admin's password, made now (printed once by `demo`, kept in demoPasswordFile for its login example). */
  readonly password: string;
  readonly companies: { readonly root: number; readonly labs: number; readonly field: number };
}

const objects = (list: readonly unknown[]) => list.map((o) => parseJson(JSON.stringify(o)) as JsonObject);

async function create(ctx: Ctx, res: Resource, list: readonly unknown[]): Promise<number[]> {
  return createRecords(ctx, res, objects(list));
}

/** The reference multimeter's calibration certificate: a file record with an uploaded PDF (also kept in demo/ for upload examples). */
async function addCertificate(ctx: Ctx, dataDir: string, today: string, assetId: number): Promise<{ fileId: number; token: string }> {
  const [fileId] = await create(ctx, files, [{ asset_id: assetId, description: 'Calibration certificate', filename: 'CAL-01-certificate.pdf' }]);
  const pdf = certificatePdf(['Calibration certificate', 'Asset CAL-01, reference multimeter', `Calibrated on ${today} by Demo Labs`]);
  const path = join(dataDir, 'demo', 'calibration-certificate.pdf');
  writeFileSync(path, pdf);
  const blobs = new BlobStore(join(dataDir, 'files'));
  const received = await blobs.receive(createReadStream(path), pdf.length);
  const { rows } = await sql<Row>`SELECT * FROM files WHERE id = ${fileId}`.execute(ctx.database.db);
  await attachContent({ ...ctx, blobs }, rows[0]!, received, true);
  return { fileId: fileId!, token: String(rows[0]!.token) };
}

export async function seedDemo(database: Database, dataDir: string, clock: Clock, baseUrl: string): Promise<Demo> {
  const root = await addCompany(database, 'Demo Holdings', null, clock);
  const labs = await addCompany(database, 'Demo Labs', root, clock);
  const field = await addCompany(database, 'Demo Field Service', root, clock);
  const certDir = join(dataDir, 'demo');
  writeClientCert(certDir, 'asset-tracker demo client', 825);
  const client = await addClient(database, { companyId: root, certPem: readFileSync(join(certDir, 'cert.pem'), 'utf8'),
    name: 'demo client', impersonation: true }, clock);
  const ctx: Ctx = {
    database, catalog: createRegistry(), clock, limits: DEFAULT_LIMITS, baseUrl, ip: null, blobs: null,
    principal: { clientId: client.id, clientCompanyId: root, impersonation: true, companyId: root, session: null, level: 'basic', canCreateCompanies: true },
  };
  const today = formatDate(clock.now());
  const day = (n: number) => addDays(today, n);

  const [quality, production] = await create(ctx, departments, [{ description: 'Quality' }, { description: 'Production' }]);
  const [lab, workshop, van] = await create(ctx, locations, [
    { description: 'Calibration lab' }, { description: 'Workshop' }, { description: 'Service van 1', company_id: field },
  ]);
  const [wrench] = await create(ctx, externaltypes, [{ external_itemtype_id: 100, description: 'Torque wrench' }]);
  const assetIds = await create(ctx, assets, [
    { asset_no: 'TW-001', serial_no: 'SN-1001', description: 'Torque wrench 5-25 Nm', next_check: day(-40), period: 12, location_id: workshop, department_id: production, external_type_id: wrench, data: { costcode: 'P-10', manufacturer: 'Norbar' } },
    { asset_no: 'TW-002', serial_no: 'SN-1002', description: 'Torque wrench 20-100 Nm', next_check: day(-3), period: 12, location_id: workshop, department_id: production, external_type_id: wrench, data: { costcode: 'P-10' } },
    { asset_no: 'CAL-01', serial_no: 'M-77', description: 'Reference multimeter', next_check: day(5), period: 6, location_id: lab, department_id: quality, data: { costcode: 'Q-20' } },
    { asset_no: 'CAL-02', serial_no: 'PG-3', description: 'Pressure gauge', next_check: day(20), period: 6, location_id: lab, department_id: quality },
    { asset_no: 'CAL-03', serial_no: 'TH-9', description: 'Thermometer', next_check: day(90), period: 12, location_id: lab, department_id: quality },
    { asset_no: 'SC-01', serial_no: 'S-400', description: 'Platform scale', next_check: day(200), period: 24, location_id: workshop },
    { asset_no: 'FS-01', serial_no: 'L-12', description: 'Laser distance meter', next_check: day(12), period: 12, company_id: field, location_id: van },
    { asset_no: 'FS-02', serial_no: 'G-5', description: 'Gas detector', next_check: day(-10), period: 6, company_id: field, location_id: van, status: 'Active' },
  ]);
  await create(ctx, assetqueue, [
    { company_id: labs, manufacturer: 'Fluke', model: '87V', asset_no: 'LAB-100', serial_no: 'F-8871', description: 'Multimeter awaiting approval', next_date: day(30), period: 12 },
  ]);
  // Demo Labs takes new assets only through the queue, approved by the demo certificate.
  const [managed] = objects([{ data: { api_assetqueue_manager_id: client.id, reminder_days: 30 } }]);
  await updateRecords(ctx, companies, parseQuery(companies.def, 'POST', pathFilters(`id=${labs}`), undefined, ctx.catalog.lookup, ctx.limits), managed!);
  const admin = await addUser(database, { companyId: root, username: DEMO_USER, email: 'admin@demo.example', level: 'admin', firstName: 'Dana', lastName: 'Admin' }, clock);
  const password = randomPassword();
  await setPassword(database, admin, password, clock);
  writeFileSync(demoPasswordFile(dataDir), `${password}\n`, { mode: 0o600 });
  await create(ctx, messages, [{ messagetext: 'Welcome to the asset tracker demo.', target_user_id: admin }]);
  const certificate = await addCertificate(ctx, dataDir, today, assetIds[2]!);
  const [tw1, tw2, cal1, cal2, , sc1, fs1] = assetIds as [number, number, number, number, number, number, number];
  await addDemoChecks(ctx, today, { 'TW-001': tw1, 'TW-002': tw2, 'CAL-01': cal1, 'CAL-02': cal2, 'SC-01': sc1, 'FS-01': fs1 }, certificate.fileId);
  await runReminders(database, clock);
  return { clientId: client.id, fileToken: certificate.token, certDir, password, companies: { root, labs, field } };
}

/** The certificate's upload token of an existing demo, if it still has one. */
export async function demoFileToken(database: Database): Promise<string | null> {
  const { rows } = await sql<{ token: string }>`SELECT token FROM files WHERE filename = 'CAL-01-certificate.pdf' ORDER BY id LIMIT 1`
    .execute(database.db);
  return rows[0]?.token ?? null;
}
