// Preloaded into every test file's process by test/run.ts (`--import`): when the process
// exits, appends the file's name, its whole time (start-up and module set-up included) and
// the processor time it and the processes it started spent, to TEST_TIMES_FILE, one JSON
// line per file, for the run's list of the slowest files.
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

const file = process.argv[1];
const out = process.env.TEST_TIMES_FILE;

/** CPU seconds of the child processes this one has waited for (Linux: /proc/self/stat, cutime + cstime). */
function childrenCpu(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

if (out && file?.endsWith('.test.ts')) {
  process.once('exit', (code) => {
    const own = process.cpuUsage();
    const cpu = (own.user + own.system) / 1e6 + childrenCpu();
    appendFileSync(out, `${JSON.stringify({ file: relative(process.cwd(), file), ms: Math.round(performance.now()), cpu: Math.round(cpu * 10) / 10, code })}\n`);
  });
}
