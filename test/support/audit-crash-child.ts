/**
 * Child process of the audit tests (run with `node --import tsx`), killed with SIGKILL so nothing
 * after the last record runs (no flush, no close):
 * - `CHILD DIR N`: records N audit events in the journal folder DIR with no audit table attached,
 *   says so on stdout, then kills itself;
 * - `CHILD DIR slow SQL`: runs the slow statement SQL on PGlite through the one SQL path with the audit
 *   listener, prints `started` once the statement's started record is written, and waits to be
 *   killed by the parent during the statement.
 */
import { AuditLog } from '../../src/audit/log.js';

const dir = process.argv[2]!;
const mode = process.argv[3]!;
const log = new AuditLog({ dir, retentionDays: 90 });
const listener = log.listener({ user: 'crash-user', frontEnd: 'cli', question: 'how many orders?' });
if (mode === 'slow') {
  // Loaded only here: the record-only mode needs nothing but the audit log.
  const [{ PGlite }, { runCheckedSql }, { createPgliteConnector }, { inMemoryPgliteOptions }] =
    await Promise.all([
      import('@electric-sql/pglite'),
      import('../../src/agent/run-sql.js'),
      import('../../src/databases/pglite/connector.js'),
      import('./pglite-template.js'),
    ]);
  const connector = createPgliteConnector({ pglite: new PGlite(inMemoryPgliteOptions()) });
  await runCheckedSql({
    db: connector,
    sql: process.argv[4]!,
    maxRows: 10,
    timeoutMs: 600_000,
    onStatement: (event) => {
      listener(event);
      // Pipes are written synchronously on Linux: the parent reads this before the query runs.
      if (event.outcome === 'started') process.stdout.write('started\n');
    },
  });
  process.stdout.write('finished\n');
} else {
  const count = Number(mode);
  for (let i = 0; i < count; i++)
    listener({ sql: `SELECT ${i} AS n`, origin: 'person', outcome: 'ran', rowCount: i });
  process.stdout.write(`${JSON.stringify(log.status())}\n`, () => process.kill(process.pid, 'SIGKILL'));
}
