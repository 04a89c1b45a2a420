// Preloaded into every test file's process by test/run.ts. Once the file's tests are
// done, its process has HANG_GRACE_MS to end by itself; one still held open then (a
// server, a socket or a thread a test left behind) says what holds it and fails, so
// a forgotten handle costs a minute, not the run. node's own --test-force-exit would
// end such a process at once, but it can drop the file's last verdicts on their way
// to the runner, which then counts fewer tests and still passes (nodejs/node#64833).
import { after } from 'node:test';

const HANG_GRACE_MS = Number(process.env.HANG_GRACE_MS ?? 60_000);

after(() => {
  setTimeout(() => {
    const held = process.getActiveResourcesInfo().filter((r) => r !== 'Timeout');
    process.stderr.write(`${process.argv[1]}: still running ${HANG_GRACE_MS / 1000} s after its tests ended, held open by: ${held.join(', ')}\n`);
    process.exit(1);
  }, HANG_GRACE_MS).unref();
});
