// `asset-tracker demo` (what `npm start` runs): seeds an empty data directory,
// serves, and prints curl commands that work as printed.
import { join } from 'node:path';
import { loadConfig } from '../config.ts';
import { addDays, formatDate, systemClock } from '../model/dates.ts';
import { closeOnSignals, startServer } from '../server.ts';
import { openMigrated } from '../store.ts';
import type { Command } from './command.ts';
import { DEMO_USER, demoFileToken, demoPasswordFile, seedDemo } from './demo-data.ts';

/** A path as one POSIX shell word (quoted only when it must be), so that the commands paste as printed. */
const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

export interface DemoPaths {
  readonly baseUrl: string; readonly caFile: string; readonly dataDir: string; readonly today: string; readonly fileToken: string | null;
}

export function curlExamples({ baseUrl, caFile, dataDir, today, fileToken }: DemoPaths): string[] {
  const demoDir = join(dataDir, 'demo');
  const curl = `curl --cacert ${shellWord(caFile)} --cert ${shellWord(join(demoDir, 'client.pem'))}`;
  const files = fileToken === null ? [] : [
    `${curl} --data-binary @${shellWord(join(demoDir, 'calibration-certificate.pdf'))} ${baseUrl}/3.0/upload/${fileToken}          # upload`,
    `${curl} -o ${shellWord(join(demoDir, 'downloaded-certificate.pdf'))} ${baseUrl}/3.0/upload/${fileToken}          # download`,
  ];
  return [
    `${curl} ${baseUrl}/3.0/endpoints`,
    `${curl} '${baseUrl}/3.0/assets/next_check-${addDays(today, 30)}'          # due: next check within 30 days (overdue included)`,
    `${curl} '${baseUrl}/3.0/assets/next_check<${today}'          # overdue`,
    `${curl} '${baseUrl}/3.0/assetreminders/sent=1'          # reminders delivered as messages`,
    `${curl} -H 'X-API-Result-Order: next_check^' '${baseUrl}/3.0/assets/location.description~lab'`,
    `${curl} '${baseUrl}/3.0/assets/data.costcode=P-10'`,
    `${curl} -X PUT -d '{"description":"Spare parts store"}' ${baseUrl}/3.0/locations`,
    `${curl} -X POST -d '{"last_check":"${today}"}' ${baseUrl}/3.0/assets/asset_no=TW-001`,
    `${curl} ${baseUrl}/3.0/assetqueue/released=0`,
    `${curl} -X POST -d '{"released":1}' ${baseUrl}/3.0/assetqueue/asset_no=LAB-100`,
    `${curl} '${baseUrl}/3.0/auditlog/action=update'`,
    `${curl} '${baseUrl}/3.0/files/asset.asset_no=CAL-01'`,
    ...files,
    `TOKEN=$(${curl} -s -X POST -d '{"username":"${DEMO_USER}","password":"'"$(cat ${shellWord(demoPasswordFile(dataDir))})"'"}' ${baseUrl}/3.0/login`
      + ` | sed -E 's/.*"user_token":"([0-9a-f]+)".*/\\1/') && ${curl} -u "session:$TOKEN" ${baseUrl}/3.0/users`,
  ];
}

export const demo: Command = {
  words: ['demo'],
  usage: 'demo',
  summary: 'Seeds an empty DATA_DIR with demo companies, a client certificate, assets and a user, then serves (on 127.0.0.1 unless HOST says '
    + 'otherwise) and prints curl commands.',
  async run() {
    const config = loadConfig(undefined, '127.0.0.1');
    const database = await openMigrated(config);
    const empty = !(await database.db.selectFrom('companies').select('id').limit(1).executeTakeFirst());
    const seeded = empty ? await seedDemo(database, config.dataDir, systemClock, config.baseUrl) : null;
    const fileToken = seeded ? seeded.fileToken : await demoFileToken(database);
    const running = await startServer(config, database);
    closeOnSignals(running);
    const lines = curlExamples({ baseUrl: config.baseUrl, caFile: running.tls.certFile, dataDir: config.dataDir, today: formatDate(systemClock.now()), fileToken });
    const passwordFile = demoPasswordFile(config.dataDir);
    process.stdout.write(`\nAsset tracker demo ${empty ? 'created' : 'reused'} in ${config.dataDir}, listening on ${config.baseUrl}\n`
      + `Try (the demo certificate sees Demo Holdings and its two child companies):\n\n${lines.map((l) => `  ${l}`).join('\n')}\n\n`
      + (seeded
        ? `The demo admin ${DEMO_USER} logs in with the password ${seeded.password} (shown this once; kept in ${passwordFile} for the example above).\n`
        : `The demo admin ${DEMO_USER} logs in with the password kept in ${passwordFile}.\n`)
      + (config.portalPort === null ? '' : `The company portal is at https://localhost:${config.portalPort}/ (sign in as ${DEMO_USER}).\n`));
  },
};
