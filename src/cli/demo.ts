// `asset-tracker demo` (what `npm start` runs): seeds an empty data directory,
// serves, and prints curl commands that work as printed.
import { join } from 'node:path';
import { loadConfig } from '../config.ts';
import { addDays, formatDate, systemClock } from '../model/dates.ts';
import { closeOnSignals, openMigrated, startServer } from '../server.ts';
import type { Command } from './command.ts';
import { DEMO_PASSWORD, DEMO_USER, seedDemo } from './demo-data.ts';

/** A path as one POSIX shell word (quoted only when it must be), so that the commands paste as printed. */
const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

export function curlExamples(baseUrl: string, caFile: string, clientPem: string, today: string): string[] {
  const curl = `curl --cacert ${shellWord(caFile)} --cert ${shellWord(clientPem)}`;
  return [
    `${curl} ${baseUrl}/3.0/endpoints`,
    `${curl} '${baseUrl}/3.0/assets/next_check<${addDays(today, 31)}'          # due within 30 days (and overdue)`,
    `${curl} '${baseUrl}/3.0/assets/next_check<${today}'          # overdue`,
    `${curl} -H 'X-API-Result-Order: next_check^' '${baseUrl}/3.0/assets/location.description~lab'`,
    `${curl} '${baseUrl}/3.0/assets/data.costcode=P-10'`,
    `${curl} -X PUT -d '{"description":"Spare parts store"}' ${baseUrl}/3.0/locations`,
    `${curl} -X POST -d '{"last_check":"${today}"}' ${baseUrl}/3.0/assets/asset_no=TW-001`,
    `${curl} ${baseUrl}/3.0/assetqueue/released=0`,
    `${curl} -X POST -d '{"released":1}' ${baseUrl}/3.0/assetqueue/asset_no=LAB-100`,
    `${curl} '${baseUrl}/3.0/auditlog/action=update'`,
    `TOKEN=$(${curl} -s -X POST -d '{"username":"${DEMO_USER}","password":"${DEMO_PASSWORD}"}' ${baseUrl}/3.0/login`
      + ` | sed -E 's/.*"user_token":"([0-9a-f]+)".*/\\1/') && ${curl} -u "session:$TOKEN" ${baseUrl}/3.0/users`,
  ];
}

export const demo: Command = {
  words: ['demo'],
  usage: 'demo',
  async run() {
    const config = loadConfig();
    const database = await openMigrated(config);
    const empty = !(await database.db.selectFrom('companies').select('id').limit(1).executeTakeFirst());
    if (empty) await seedDemo(database, config.dataDir, systemClock, config.baseUrl);
    const running = await startServer(config, database);
    closeOnSignals(running);
    const lines = curlExamples(config.baseUrl, running.tls.certFile, join(config.dataDir, 'demo', 'client.pem'), formatDate(systemClock.now()));
    process.stdout.write(`\nAsset tracker demo ${empty ? 'created' : 'reused'} in ${config.dataDir}, listening on ${config.baseUrl}\n`
      + `Try (the demo certificate sees Demo Holdings and its two child companies):\n\n${lines.map((l) => `  ${l}`).join('\n')}\n\n`);
  },
};
